"""The grammar of a facet's phrase inside a template: what form it has (a verb phrase, a
clause, a noun phrase) and how each form is said after "help ...", "apply X to ..." or
"studies ... with".

Why: a phrase's form was set once, when it was cut, by the pattern that cut it; a noun
phrase cut by its words alone can be a verb phrase ("select patients" from "algorithms to
select patients"), a verb phrase can carry a subject's inflection ("asks yes/no questions"),
and a clause can keep a question's word order ("why are some countries richer"). Put into
one template for all, they read "the study of select patients" and "apply X to asks ...".
Each rule here reads the phrase's form from the phrase and the sentence it was cut from,
never a list of known phrases.
"""
from __future__ import annotations

import re

from ...text import STOP, wordset
from .extract import Facet

# A phrase's first word is a verb when its sentence has it right after "to", a subject
# pronoun, "and", or a plural noun that acts ("algorithms to select", "we survey").
_VERB_BEFORE = r"(?:to|we|they|authors|which|that|who)\s+"
# After "and" only a verb that shows it ("and selects"): in a list, "and" joins nouns and
# their adjectives ("dark energy and dark matter" made "to dark matter" a question).
_AND_VERB = r"and\s+(?=\w+(?<!ss)s\b)"
# A clause that keeps a question's order: a question word, then an auxiliary.
_INVERTED = re.compile(r"^(?:why|how|what|which|when|where|whether)\s+(?:are|is|was|were|do|does|did|can|"
                       r"could|will|would|should|has|have|had)\b", re.IGNORECASE)
# Heads a noun phrase counts ("a model", "the release"): such a phrase needs an article.
COUNT_HEADS = wordset("""model framework network algorithm method estimator architecture transformer
classifier emulator pipeline tool approach system compiler release mission catalogue catalog survey
benchmark dataset simulator library""")
# Words that end a noun phrase's head before its modifiers ("deep network on knee X-rays").
_PREP = re.compile(r"\s+(?:on|of|for|with|in|from|to|by|at|over)\s+", re.IGNORECASE)


def form(f: Facet) -> str:
    """The facet's form, corrected for a noun phrase that is really a verb phrase."""
    if f.form in ("noun", "found") and f.phrase and len(f.phrase.split()) >= 2:
        first = re.escape(f.phrase.split()[0])
        if re.search(rf"\b(?:{_VERB_BEFORE}|{_AND_VERB}){first}\b", f.sentence, re.IGNORECASE):
            return "verb"
    return f.form


def base_verb(phrase: str) -> str:
    """A verb phrase with its first verb in the base form ("asks yes/no questions" -> "ask
    yes/no questions"): after "to", "help" or "can" English takes no -s."""
    first, _, rest = phrase.partition(" ")
    low = first.lower()
    if len(low) > 3 and low.endswith("ies"):
        first = first[:-3] + "y"
    elif re.search(r"(?:ches|shes|sses|xes|zes|oes)$", low):
        first = first[:-2]
    elif low.endswith("s") and not re.search(r"(?:ss|us|is)$", low) and len(low) > 3:
        first = first[:-1]
    return f"{first} {rest}".strip()


def inverted(phrase: str) -> bool:
    return bool(_INVERTED.match(phrase))


def with_article(phrase: str) -> str:
    """A noun phrase whose head is a counted noun takes an article ("a broader framework",
    "the gaia data release"); a name, a plural or a mass noun does not."""
    head_part = _PREP.split(phrase, maxsplit=1)[0]
    words = head_part.split()
    if not words or not words[0][:1].islower() or "(" in phrase:
        return phrase
    if words[0].lower() in ("a", "an", "the", "this", "these", "its", "their"):
        return phrase
    if words[-1].lower() not in COUNT_HEADS:
        return phrase
    article = "an" if words[0][0].lower() in "aeiou" else "a"
    return f"{article} {phrase}"


def noun_part(phrase: str) -> str:
    """A noun phrase without a trailing participle, the remains of a cut relative clause
    ("word embeddings trained [on abstracts]" -> "word embeddings")."""
    ws = phrase.split()
    if len(ws) >= 3 and ws[-1].islower() and ws[-1].endswith("ed") and not ws[-2].endswith("ed"):
        return " ".join(ws[:-1])
    return phrase


def the_phrase(phrase: str) -> str:
    """As `with_article`, with "the" (a problem's topic is a definite thing)."""
    phrase = noun_part(phrase)
    said = with_article(phrase)
    return "the " + phrase if said != phrase else phrase


def said(f: Facet, frames: dict[str, str]) -> str:
    """A phrase put into the frame its form asks for: the one place where a purpose's form
    (clause, question-order clause, verb phrase, sentence, noun phrase) decides its words.
    A frame may use `{p}` (the phrase as found), `{verb}` (a verb phrase in its base form)
    and `{the}` (a noun phrase with "the"); a form without its own frame takes the "other"
    frame if there is one, else the "noun" frame ("inverted" only where it is given)."""
    kind = form(f)
    if kind in ("clause", "sentence") and inverted(f.phrase) and "inverted" in frames:
        kind = "inverted"
    frame = frames.get(kind, frames.get("other", frames["noun"]))
    return frame.format(p=f.phrase, verb=base_verb(f.phrase) if "{verb}" in frame else f.phrase,
                        the=the_phrase(of_tail(f)) if "{the}" in frame else f.phrase)


_OF = re.compile(r"\s+of\s+((?:the\s+)?[\w-]+(?:\s+[\w-]+){0,2})")


def of_tail(f: Facet) -> str:
    """A noun phrase with the "of ..." that follows it in its sentence ("indirect harms" ->
    "indirect harms of punishment"): the head alone says less than the sentence did."""
    at = f.sentence.find(f.phrase)
    m = _OF.match(f.sentence, at + len(f.phrase)) if at >= 0 and f.form == "noun" else None
    if not m:
        return f.phrase
    ws = m.group(1).split()
    cut = next((i for i, w in enumerate(ws) if i and w.lower() in STOP), len(ws))
    return f"{f.phrase} of {' '.join(ws[:cut])}"





def asked(f: Facet, b: str) -> str:
    """What a method is asked to be used for, after "can it be used": by the purpose's form,
    naming the purpose's field ("in Criminology to find out whether ..."). A noun phrase
    names a topic, not a question, so it is asked as the field's work on it."""
    return said(f, {"inverted": f"in {b} to answer the question {{p}}", "clause": f"in {b} to find out {{p}}",
                    "verb": f"in {b} to {{verb}}", "sentence": f"on a problem {b} states: {{p}}",
                    "noun": f"in {possessive(b)} work on {{the}}"})


def possessive(name: str) -> str:
    """"Criminology's", "Economics'": a name ending in s takes the apostrophe alone."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def applied_to(f: Facet) -> str:
    """What follows "we will use the method": the purpose, by its form ("to find out ...",
    "to ask ...", "on the study of ...")."""
    return said(f, {"inverted": "on the question {p}", "clause": "to find out {p}", "verb": "to {verb}",
                    "sentence": "on the problem: {p}", "noun": "on {the}"})


def topic(f: Facet) -> str:
    """A purpose as a noun phrase a question can carry as its subject or object ("the
    gaia data release", "the question whether ...", "the effort to select patients")."""
    return said(f, {"clause": "the question {p}", "verb": "the effort to {verb}",
                    "sentence": "the problem “{p}”", "noun": "{the}"})
