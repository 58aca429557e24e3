"""A paper's facets: its purpose (the problem), mechanism (the method), evaluation (data and
measure) and stated gap, each a short phrase with the sentence it came from.

Why sentences first: a 270M base model cannot plan a proposal, but the papers state their
problems, methods, data and gaps in sentences that make sense. A facet is found by scoring
each sentence of the abstract for each facet: cue words and patterns (cues.py), the
sentence's position (abstracts open on the problem and close on results) and, when an
embedder is given, how much closer the sentence is to that facet's description than to the
others' (MiniLM). Measured on 53 bundled abstracts labelled by hand, 33 of them after the
rules were written (tests/fixtures/facet_labels.json, tests/test_facets.py), this beat
position alone, cue words alone and adding MiniLM (README, "Ideas from facets"). A facet the
abstract does not state is left out rather than guessed: gaps and evaluations need a cue.

The phrase is cut from the sentence by rule (the clause after "we propose", "whether",
"using" ...), and says what its `form` is, so a template can put it in a sentence
grammatically. No model call: computed once per paper and kept in the store (m023).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...text import STOP, sentences, wordset
from ...types import Paper
from .cues import cue_scores
from .phrases import METHOD_HEADS, candidate_phrases

KINDS = ("purpose", "mechanism", "evaluation", "gap")


def rules_version(sources: tuple[str, ...]) -> str:
    """The version facets are kept under (m023): a digest of the text of the modules that
    find them. Why not a number bumped by hand: a rule change that forgets the bump reads
    stale facets from the store and measures one extractor while running another; any edit
    to these files recomputes them instead (about 3 s for the bundled papers, once)."""
    digest = hashlib.sha256("\0".join(sources).encode("utf-8")).hexdigest()[:12]
    return f"facets-12-{digest}"


_HERE = Path(__file__).resolve().parent
_RULES = (_HERE / "extract.py", _HERE / "cues.py", _HERE / "phrases.py", _HERE.parents[1] / "text.py")
# Stored facets of another version are not read but found again (kept.py).
VERSION = rules_version(tuple(f.read_text("utf-8") for f in _RULES))

# What each facet is, in words a sentence embedder can compare a sentence with.
DESCRIPTIONS = {
    "purpose": "The problem or question this work addresses, and why it matters.",
    "mechanism": "The method, model, algorithm or technique the authors propose or use.",
    "evaluation": "The data, benchmark, experiments or measurements used to test it, and "
                  "the accuracy or error it reaches.",
    "gap": "A limitation, shortcoming or open problem that earlier work has not solved.",
}


# The weights and thresholds measured best on the labelled papers (tests/test_facets.py).
EMBED_WEIGHT = 6.0
POSITION = {"purpose": (1.2, 0.2, -0.3), "mechanism": (0.0, 0.6, 0.2),
            "evaluation": (-0.5, 0.2, 0.6), "gap": (0.2, 0.0, 0.0)}  # first, second, last
THRESHOLD = {"purpose": -9.0, "mechanism": 0.5, "evaluation": 1.0, "gap": 1.5}
MAX_PHRASE_WORDS = 14


@dataclass(frozen=True)
class Facet:
    """One facet of one paper: a short phrase, the sentence it came from, and its form
    ("clause": "whether gun violence spreads ..."; "verb": "assess language models ...";
    "noun": "a co-offending network ..."; "name": the method's name from the title;
    "found": a noun phrase ending in a method word, found anywhere in the sentence;
    "sentence": the sentence's opening, when no shorter phrase could be cut)."""
    kind: str
    phrase: str
    sentence: str
    paper_id: str
    field: str = ""
    form: str = "noun"
    score: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict) -> Facet:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass(frozen=True)
class PaperFacets:
    """What one paper states; a facet it does not state is absent (never guessed)."""
    paper_id: str
    facets: tuple[Facet, ...] = ()
    version: str = VERSION
    note: str = ""  # why nothing was found, e.g. the paper has no abstract

    def of(self, kind: str) -> Facet | None:
        return next((f for f in self.facets if f.kind == kind), None)

    def to_dict(self) -> dict:
        return {"paper_id": self.paper_id, "version": self.version, "note": self.note,
                "facets": [f.to_dict() for f in self.facets]}

    @classmethod
    def from_dict(cls, d: dict) -> PaperFacets:
        return cls(d["paper_id"], tuple(Facet.from_dict(f) for f in d.get("facets") or []),
                   d.get("version", VERSION), d.get("note", ""))


def sentence_scores(sents: list[str], vectors: np.ndarray | None = None,
                    described: np.ndarray | None = None, use_cues: bool = True,
                    use_position: bool = True) -> dict[str, list[float]]:
    """Per facet, a score per sentence (higher: more likely to state that facet). The parts
    can be switched off, so the test can measure each against the others."""
    n = len(sents)
    out: dict[str, list[float]] = {}
    rel = None
    if vectors is not None and described is not None and n:
        sims = vectors @ described.T  # sentences x facets
        rel = sims - sims.mean(axis=1, keepdims=True)  # closer to this facet than to the others
    cued = cue_scores(sents) if use_cues else None
    for k, kind in enumerate(KINDS):
        row = []
        for i in range(n):
            score = 0.0
            if cued is not None:
                score += cued[i][kind]
            if use_position:
                first, second, last = POSITION[kind]
                score += first if i == 0 else second if i == 1 else 0.0
                score += last if i == n - 1 and n > 2 else 0.0
            if rel is not None:
                score += EMBED_WEIGHT * float(rel[i, k])
            row.append(score)
        out[kind] = row
    return out


def choose(scores: dict[str, list[float]], thresholds: dict[str, float] = THRESHOLD) -> dict[str, int]:
    """The best sentence per facet, when its score clears the facet's threshold."""
    picked = {}
    for kind, row in scores.items():
        if row:
            i = int(np.argmax(row))
            if row[i] >= thresholds[kind]:
                picked[kind] = i
    return picked


def extract(paper: Paper, embedder=None, described: np.ndarray | None = None) -> PaperFacets:
    """A paper's facets. Sentences are chosen by cue words and position, plus each facet's
    description when `described` (its vectors) is given; `embedder` (the run's, MiniLM by
    default) picks the phrase of a problem's topic among the sentence's noun phrases."""
    sents = sentences(paper.abstract or "")
    if not sents:
        return PaperFacets(paper.id, (), note=f"“{paper.title}” has no abstract to find facets in")
    vectors = np.asarray(embedder.encode(sents)) if described is not None else None
    picked = choose(sentence_scores(sents, vectors, described))
    field = paper.fields[0] if paper.fields else ""
    facets = []
    for kind in KINDS:
        if kind in picked:
            s = sents[picked[kind]]
            phrase, form = cut_phrase(kind, s, paper.title, embedder)
            facets.append(Facet(kind, phrase, s, paper.id, field, form))
    return PaperFacets(paper.id, tuple(facets))


def describe(embedder) -> np.ndarray:
    return np.asarray(embedder.encode([DESCRIPTIONS[k] for k in KINDS]))


# -- phrases ------------------------------------------------------------------------------------
_STOPS_AT = re.compile(r"[,;:()]|\s(?:that|which|so that|so|where|whose|while|thus|and show|"
                       r"and how|and whether|and why|and what|"
                       r"and apply|and argue|and find|to predict|in which)\s", re.IGNORECASE)
_WHETHER = re.compile(r"\b(whether|how)\s+(.+)", re.IGNORECASE)
_TO_VERB = re.compile(r"\bto\s+(assess|understand|study|test|predict|explain|estimate|map|"
                      r"measure|reduce|explore|generate|recognise|recognize)\s+(.+)", re.IGNORECASE)
_METHOD_VERB = re.compile(r"\b(?:propose[sd]?|introduces?|presents?|develops?|trains?|fits?|"
                          r"uses?|using|appl(?:y|ies)|represents?|model|models)\s+(.+)", re.IGNORECASE)
_LEADS = re.compile(r"^(?:the authors|authors|this (?:paper|review|work|study)|we|it|they)\s+\w+\s+",
                    re.IGNORECASE)


def _words_cut(text: str, limit: int = MAX_PHRASE_WORDS) -> str:
    """At most `limit` words, never ending on a stop word ("... and how closely its")."""
    ws = text.split()[:limit]
    while len(ws) > 1 and ws[-1].lower().strip(".,;:?!") in STOP:
        ws.pop()
    return " ".join(ws).rstrip(" .,;:?!")


def _until_stop(text: str) -> str:
    m = _STOPS_AT.search(text)
    return _words_cut(text[:m.start()] if m else text)


def _topic(title: str) -> str:
    """A title's topic: the part after a colon when the part before it is a short name."""
    head, _, tail = title.partition(":")
    part = tail if tail and len(head.split()) <= 3 else head
    return _words_cut(part.strip().rstrip("?"), 10)


_NOT_NP_START = re.compile(r"^(?:are|is|was|were|be|been|for|to|of|in|on|at|with|by|from|as|"
                           r"over|across|under|into|about|through|between|"
                           r"and|or|but|than|that|which|it|its|they|their|this|these|those|"
                           r"reads|writes|makes|gives|lets|shows?|can|could|may|will|would|"
                           r"often|also|then|each|every|we|our|us)\b", re.IGNORECASE)
_NOT_MODIFYING = (r"(?!and\b|or\b|of\b|the\b|for\b|with\b|over\b|across\b|in\b|on\b|authors\b|"
                  r"we\b|they\b|it\b|this\b|these\b)")
_METHOD_NP = re.compile(r"\b((?:" + _NOT_MODIFYING + r"[A-Za-z][\w-]*\s+){0,3}(?:model|models|network|networks|"
                        r"algorithm|method|methods|estimator|transformer|sampling|inference|"
                        r"regression|learning|simulation|simulations|framework|benchmark|"
                        r"optimi[sz]ation|analysis|architecture|potential|autoencoder|"
                        r"decoding|retrieval|prompting|search|theory|dynamics))\b", re.IGNORECASE)


def _noun_phrase(text: str) -> bool:
    return len(text.split()) >= 2 and not _NOT_NP_START.match(text)


_KINDS_OF_PAPER = wordset("commentary review editorial perspective perspectives correction "
                          "erratum comment reply viewpoint essay")


def name_of(title: str) -> str:
    """The name a title gives its method ("WebArena: A Realistic ..." -> "WebArena"), or "".
    A name is at most three words and none of them a stop word: "Murder by Structure: ..."
    and "Embracing the unknown: ..." are phrases, not names."""
    head, sep, tail = title.partition(":")
    ws = head.split()
    if not (sep and tail.strip() and 1 <= len(ws) <= 3) or any(w.lower() in STOP for w in ws):
        return ""
    if head.strip().lower() in _KINDS_OF_PAPER:  # "Commentary: ...", "Review: ..." name no method
        return ""
    return head.strip()


def cut_phrase(kind: str, sentence: str, title: str = "", embedder=None) -> tuple[str, str]:
    """The short phrase of a facet's sentence and its form (see `Facet`)."""
    s = sentence.strip()
    if kind == "purpose":
        m = _WHETHER.search(s)
        if m and len(_until_stop(m.group(2)).split()) >= 4:
            return f"{m.group(1).lower()} {_until_stop(m.group(2))}", "clause"
        m = _TO_VERB.search(s)
        if m and len(_until_stop(m.group(2)).split()) >= 2:
            return f"{m.group(1).lower()} {_until_stop(m.group(2))}", "verb"
        topic = topic_of(s, embedder)
        if topic:
            return _lower_first(topic), "noun"
        return _words_cut(_lower_first(_LEADS.sub("", s).rstrip(".")), 24), "sentence"
    if kind == "mechanism":
        name = name_of(title)
        if name:
            desc = title.partition(":")[2].strip().rstrip("?")
            plain = len(desc.split()) <= 8 and not re.match(r"(?:which|how|what|why|when|is|are|do|does)\b",
                                                            desc, re.IGNORECASE)
            return (f"{name} ({_lower_first(desc)})" if desc and plain else name), "name"
        if s.lower().startswith("using ") and _noun_phrase(_until_stop(s[6:])):
            return _until_stop(s[6:]), "noun"
        m = _METHOD_VERB.search(s)
        if m and _noun_phrase(_until_stop(m.group(1))) and _names_method(_until_stop(m.group(1))):
            return _strip_article(_until_stop(m.group(1))), "noun"
        m = _METHOD_NP.search(s)
        if m and _noun_phrase(m.group(1)):  # a method word somewhere in the sentence: weaker
            return _strip_article(m.group(1)), "found"
        return _until_stop(_LEADS.sub("", s)), "sentence"
    if kind == "gap":
        s = re.sub(r"^(?:however|but|yet)[, ]+", "", s, flags=re.IGNORECASE)
        return _words_cut(_LEADS.sub("", s), 18), "clause"
    data = data_of(s)
    return (data, "noun") if data else ("", "none")


_DATA_NOUN = (r"data|dataset|datasets|benchmark|benchmarks|records|survey|surveys|observations|"
              r"catalogue|catalogues|catalog|corpus|samples|sample|measurements|recordings|"
              r"x-rays|images|experiments|trials|database|questions|tasks|trajectories|"
              r"incubations|photometry|spectra|simulations|problems|scans|notes|claims|abstracts|logs|exams|reanalysis")
_DATA = re.compile(r"\b(?:" + _DATA_NOUN + r")\b", re.IGNORECASE)
_NOT_MODIFIER = wordset("""build builds built describe describes propose proposes introduce
introduces introduced assemble assembles use uses used offer offers authors they we it better
far less more most many release""")
# "moving data between memories", "producing data": data as a verb's object is no data set
# ("using survey data": the data phrase starts after the verb, at "survey data ...").
_MOVED = re.compile(r"(?<![\w-])(?:moving|producing|generating|creating|collecting|sending|copying|"
                    r"loading|sharing|releasing|using|combining)\s+$", re.IGNORECASE)
_TAIL = re.compile(r"^\s+(?:of|from|on)\s+", re.IGNORECASE)


_RELATIVE = wordset("that which who")


def data_of(sentence: str) -> str:
    """The data an evaluation sentence names ("machine translation benchmarks", "survey
    data from hundreds of British localities"), or "" when it names none: the data noun,
    the content words before it (no stop word, no verb-like word; at most four) and an
    "of/from/on ..." after it, up to where the clause stops."""
    m = next((m for m in _DATA.finditer(sentence)
              if not re.match(r"\s+release", sentence[m.end():], re.IGNORECASE)
              and not _MOVED.search(sentence[:m.start()])), None)
    if not m:
        return ""
    before = sentence[:m.start()].split()
    kept: list[str] = []
    for w in reversed(before[-4:]):
        bare = w.lower()
        if bare in STOP or bare in _NOT_MODIFIER or not w[-1:].isalnum() or not w[:1].isalnum():
            # "a polling evaluation that asks yes/no questions": the word after "that" is
            # the clause's verb, not a modifier of the data ("asks yes/no questions").
            if bare in _RELATIVE and kept and kept[0].endswith("s") and kept[0].islower():
                kept.pop(0)
            break
        kept.insert(0, w)
    head = " ".join([*kept, m.group(0)])
    rest = sentence[m.end():]
    tail = _until_stop(rest) if _TAIL.match(rest) else ""
    return _words_cut(f"{head} {tail}".strip(), 10)


def _names_method(phrase: str) -> bool:
    return any(w.lower().strip("(),") in METHOD_HEADS for w in phrase.split())


_NOT_TOPIC = wordset("authors paper papers review work study ago decade years year because "
                     "although while whereas since")


def topic_of(sentence: str, embedder=None) -> str:
    """What a sentence's problem is about ("stellar velocity distributions"): of its noun
    phrases of two to four words, the one closest to the whole sentence (KeyBERT's rule,
    with the run's embedder), else the first; "" when it has none."""
    found = []
    for i, ph in enumerate(candidate_phrases(sentence)):
        ws = ph.split()
        # A leading connective, or the sentence's opening gerund ("Comparing ..."), is no topic.
        while ws and (ws[0].lower() in _NOT_TOPIC or (i == 0 and sentence.startswith(ph)
                                                      and ws[0].endswith("ing"))):
            ws = ws[1:]
        if 2 <= len(ws) <= 4 and not any(w.lower() in _NOT_TOPIC for w in ws):
            found.append(" ".join(ws))
    if not found:
        return ""
    if embedder is None or len(found) == 1:
        return found[0]
    vecs = np.asarray(embedder.encode([sentence, *found]))
    return found[int(np.argmax(vecs[1:] @ vecs[0]))]


def _strip_article(text: str) -> str:
    """Without a leading verb of making or using, or an article ("build a metapopulation
    model" -> "metapopulation model")."""
    text = re.sub(r"^(?:build|builds|develop|develops|use|uses|propose|proposes|introduce|"
                  r"introduces|train|trains|fit|fits|apply|applies|choose|chooses|offer|offers|"
                  r"design|designs|describe|describes|adopt|adopts)\s+", "", text.strip(),
                  flags=re.IGNORECASE)
    return re.sub(r"^(?:the|a|an|our|their|its)\s+", "", text, flags=re.IGNORECASE)


def _lower_first(text: str) -> str:
    """Lower-case a title's opening word unless it is a name or acronym (two capitals)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text
