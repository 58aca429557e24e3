"""What the problem's paper says it does, read from its own sentences: the claim it tests,
the analysis its authors run, and the outcome it studies. Q1 asks its question from them,
Q4 says what that paper already does, and Q5 takes its measure and baseline from them.

Why: a blind reader found the plans empty where the papers named no measure, no baseline
and no gap ("the Criminology papers name no measure for it, so what to measure comes
first"), even where the problem's paper is itself the obvious baseline (issue 49). The
paper's sentences say more than its facets' short phrases: "community structure affects
crime" names an outcome (crime), "the authors estimate the local labour-market effects of
robots" names an analysis to compare with. Each reading here is a small stated pattern on
one sentence, and what it returns is words of that sentence, never a guess; when no
pattern matches, the caller says so in other true words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...text import STOP, wordset
from .extract import Facet

# A claim a theory or view makes, which a study can test: "X holds that <claim>", "the
# broken-windows view says <claim>".
_CLAIM = re.compile(r"\b(?:holds?|says?|argues?|claims?|posits?|predicts?|proposes?|suggests?)\s+"
                    r"(?:that\s+)?(.+)", re.IGNORECASE)
# Who runs the analysis, then its verb: "the authors measure ...", "this study follows ...".
_DOER = re.compile(r"(?:^|[,;:]\s+|\b)(the authors|we|they|this (?:study|paper|work)|it)\s+(?:also\s+)?"
                   r"([a-z]+)\s+(.+)", re.IGNORECASE)
_NOT_VERB = wordset("""is are was were be been can could may might will would should has have had do
does did not also often usually""")
_PREPOSITIONS = wordset("for to with in on at by from into of as over under between across through about")
# Verbs that report a finding rather than run an analysis.
_REPORTS = wordset("""show shows find finds report reports argue argues suggest suggests conclude
concludes demonstrate demonstrates describe describes discuss discusses summarise summarises
summarize summarizes review reviews recall recalls lists list""")
# Verbs whose object is what the analysis is judged on ("estimate the local effects ...").
_AIMS = {"estimate": "estimates", "estimates": "estimates", "predict": "predicts", "predicts": "predicts",
         "explain": "explains", "explains": "explains", "forecast": "forecasts", "forecasts": "forecasts",
         "measure": "measures", "measures": "measures", "map": "maps", "maps": "maps",
         "model": "models", "models": "models"}
# Verbs that say one thing bears on another: what follows is the outcome ("affects crime").
_BEARS = re.compile(r"\b(?:affects?|shapes?|drives?|causes?|reduces?|raises?|lowers?|increases?|"
                    r"decreases?|determines?)\s+(.+)", re.IGNORECASE)
_EFFECT_ON = re.compile(r"\beffects?\s+of\s+[\w\s-]+?\s+on\s+(.+)", re.IGNORECASE)
# Where a clause stops: punctuation that ends it, or a word that starts another clause.
_ENDS = re.compile(r"\s*(?:[;:()]|,\s+(?:which|so|while|suggesting|showing|thus|but|and\s+(?:show|find|"
                   r"combine|argue|discuss|use|report))\b|,\s+but\b|\s+but\s+|\.\s|\.$)", re.IGNORECASE)
_OUTCOME_ENDS = re.compile(r"\s*(?:[,;:()]|\.\s|\.$|\s(?:through|via|by|among|because|rather|while|"
                           r"but|and\s+(?:how|why|whether))\s)", re.IGNORECASE)
MAX_WORDS = 16


# Where a clause too long to say whole is cut: before a comma, a relative clause or a purpose.
# ("up to age twenty", "end to end" are no purpose).
_BREAKS = re.compile(r",\s|\s(?:that|which|in which|whose)\s|(?<!\bup)(?<!\bend)(?<!\bdue)\sto\s")


def _cut(text: str, ends: re.Pattern[str] = _ENDS, limit: int = MAX_WORDS) -> str:
    """The clause up to where it ends; a clause longer than `limit` words is cut at its first
    break after three words (a list, a relative clause), else at the limit."""
    m = ends.search(text)
    text = text[:m.start()] if m else text
    if len(text.split()) > limit:
        b = next((b for b in _BREAKS.finditer(text) if len(text[:b.start()].split()) >= 4), None)
        text = text[:b.start()] if b else text
    ws = text.split()[:limit]
    while ws and ws[-1].lower().strip(".,;:") in STOP:
        ws.pop()
    return " ".join(ws).rstrip(" .,;:")


@dataclass(frozen=True)
class Doing:
    """An analysis a paper says it runs: who runs it ("the authors" or "it") and the clause
    from the verb on ("measure local friendship networks ..."), in the sentence's words."""
    plural: bool
    clause: str
    facet: Facet

    @property
    def verb(self) -> str:
        return self.clause.split()[0].lower()


def claim(f: Facet | None) -> str:
    """The claim a sentence says a theory or view makes ("community structure affects crime
    through local social ties and control"), or ""."""
    if f is None:
        return ""
    m = _CLAIM.search(f.sentence)
    said = _cut(m.group(1)) if m else ""
    # A claim is a clause with a verb that bears on something, of a few words at least.
    return said if len(said.split()) >= 3 and _BEARS.search(said) else ""


def doing(f: Facet | None, findings: bool = False) -> Doing | None:
    """The analysis a sentence says its authors run, or None; a finding ("the authors show
    that ...") only when `findings` is set."""
    if f is None:
        return None
    for m in _DOER.finditer(f.sentence):
        verb = m.group(2).lower()
        # "optimise it for an ecologically relevant task": "it" there is an object, and a
        # preposition no verb (a blind reader found Q4's "the paper for an ecologically ...").
        if (verb in _NOT_VERB or verb in _PREPOSITIONS or verb in ("the", "a", "an", "and", "or")
                or (verb in _REPORTS and not findings)):
            continue
        clause = _cut(f"{m.group(2)} {m.group(3)}")
        if len(clause.split()) >= 3:
            subject = m.group(1).lower()
            return Doing(subject in ("the authors", "we", "they"), clause, f)
    return None


def outcome(f: Facet | None) -> tuple[str, str]:
    """(verb, outcome) a sentence names: what a measure can judge a method by, said as "how
    well it <verb> <outcome>" ("accounts for", "crime"; "estimates", "the local ...
    effects of robots"); ("", "") when it names none."""
    if f is None:
        return "", ""
    d = doing(f)
    if d is not None and d.verb in _AIMS:
        obj = _cut(d.clause.split(" ", 1)[1], _OUTCOME_ENDS, 12)
        if len(obj.split()) >= 2:
            return _AIMS[d.verb], obj
    # "the effects of X on Y", or what a claim says bears on Y ("disorder causes crime").
    for m in (_EFFECT_ON.search(f.sentence), _BEARS.search(claim(f))):
        obj = _cut(m.group(1), _OUTCOME_ENDS, 8) if m else ""
        if obj and obj.split()[0].lower() not in STOP - {"whether", "where", "why", "how", "who", "what"}:
            return "accounts for", obj
    return "", ""


@dataclass(frozen=True)
class Problem:
    """What the problem's paper states of itself, from the facets a pairing holds of it
    (its purpose, its method, and its data when the data is its own)."""
    facets: tuple[Facet, ...]

    @classmethod
    def of(cls, purpose: Facet, method: Facet | None, data: Facet | None) -> Problem:
        own = [purpose] + [f for f in (method, data) if f is not None and f.paper_id == purpose.paper_id]
        return cls(tuple(dict.fromkeys(own)))

    def claim(self) -> tuple[str, Facet] | None:
        """The claim the paper tests, and the facet whose sentence states it."""
        return next(((claim(f), f) for f in self.facets if claim(f)), None)

    def doing(self) -> Doing | None:
        return next((d for d in map(doing, self.facets) if d is not None), None)

    def aim(self) -> Doing | None:
        """An analysis whose verb names what it estimates, predicts or explains (a question
        Q1 can ask in the paper's words)."""
        return next((d for d in map(doing, self.facets) if d is not None and d.verb in _AIMS), None)

    def outcome(self) -> tuple[str, str]:
        return next((o for o in map(outcome, self.facets) if o[1]), ("", ""))
