"""Claims a review sentence makes that nothing in the material supports.

A proposal is a plan: it has no results yet. A base model reviewing one still likes to
report them ("The proposed method has been tested on multiple data sets in the past and
works well, with an accuracy of 98%"). Such a sentence is true only when the material the
line was written from (what the model was shown and the neighbourhood's papers in full,
run/styles/stem_names.py) says the same. A sentence makes a claim when it states

- a number or percentage ("98%", "10,000 spectra"),
- a prior test or evaluation ("has been tested", "was validated", "in the past"),
- a result ("works well", "outperforms", "an accuracy of"),
- a count of data sets ("multiple data sets", "three corpora"),
- what the proposal rests on ("is based on a deep learning model", "relies on a thesis").

A number is supported when the material holds the same number; what the proposal rests on
when at least half of its content words are in the proposal itself (a base model names a
basis the proposal never had: "The proposal is based on a deep learning model." under
Strengths of a proposal about language models and star surveys; the neighbourhood's papers
do not count, since "learning" and "model" are in most of them); any other claim when one
sentence of the material makes a claim of the same kind and shares at least half of the
sentence's content words. Like an invented name, an unsupported claim is not kept: the
caller drops the sentence, or the whole line when the claim is in its first sentence
(run/styles/trim.py `keep_sentences`), and asks again when nothing is left.
The cue phrases are data (below), matched on word tokens.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from ...text import sentences, words, wordset

_TOKEN = re.compile(r"\d[\d,.]*%?|[a-z]+(?:[-'][a-z]+)*|%")
_NUMBER = re.compile(r"\d")


class ClaimKind(StrEnum):
    NUMBER = "number"
    PRIOR_TEST = "prior test"
    RESULT = "result"
    DATA_SETS = "data sets"
    BASIS = "basis"


# Verbs of testing; a prior test is one of them after "been", "was", "were", "has", "have"
# or "had" ("has been tested", "was evaluated", "we have validated").
TEST_VERBS = wordset("""tested evaluated validated verified benchmarked proven proved
demonstrated trialled trialed piloted assessed measured compared deployed published""")
PAST_MARKERS = wordset("been was were has have had")
PRIOR_PHRASES = (("in", "the", "past"), ("previously",), ("prior", "experiments"),
                 ("earlier", "experiments"), ("already", "shown"), ("has", "shown"), ("have", "shown"))
RESULT_PHRASES = (("works", "well"), ("worked", "well"), ("performs", "well"), ("performed", "well"),
                  ("outperforms",), ("outperformed",), ("beats",), ("surpasses",),
                  ("state-of-the-art",), ("accuracy", "of"), ("precision", "of"), ("recall", "of"),
                  ("error", "of"), ("f1", "of"), ("achieves",), ("achieved",), ("percent",), ("%",),
                  ("results", "show"), ("results", "showed"), ("results", "indicate"),
                  ("successfully",), ("proven", "to"), ("shown", "to"))
DATA_NOUNS = wordset("datasets dataset corpora benchmarks catalogs catalogues databases")
QUANTIFIERS = wordset("""multiple several many various numerous different diverse two three
four five six seven eight nine ten dozens hundreds thousands""")


# "rests on X": the verb, its preposition, and X up to the clause's end.
_BASIS = re.compile(r"\b(?:based|builds?|built|relies|rely|relying|draws|drawing|grounded|founded)"
                    r"\s+(?:on|upon|in)\s+([^,;:.()]+)", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall((text or "").lower())


def _has_phrase(toks: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(toks[i:i + n]) == phrase for i in range(len(toks) - n + 1))


def _data_sets(toks: list[str]) -> bool:
    """A count of data sets: a quantifier or number at most two words before a data noun
    ("multiple data sets", "three large corpora")."""
    for i, t in enumerate(toks):
        noun = t in DATA_NOUNS or (t == "sets" and i and toks[i - 1] == "data")
        if noun and any(q in QUANTIFIERS or _NUMBER.search(q) for q in toks[max(0, i - 3):i]):
            return True
    return False


def claim_kinds(sentence: str) -> set[ClaimKind]:
    """The kinds of claim one sentence makes, besides numbers."""
    toks = tokens(sentence)
    kinds: set[ClaimKind] = set()
    if any(t in TEST_VERBS and toks[i - 1] in PAST_MARKERS for i, t in enumerate(toks) if i) or \
            any(_has_phrase(toks, p) for p in PRIOR_PHRASES):
        kinds.add(ClaimKind.PRIOR_TEST)
    if any(_has_phrase(toks, p) for p in RESULT_PHRASES):
        kinds.add(ClaimKind.RESULT)
    if _data_sets(toks):
        kinds.add(ClaimKind.DATA_SETS)
    return kinds


def basis(sentence: str) -> set[str]:
    """The content words of what a sentence says something rests on ("is based on a deep
    learning model": deep, learning, model); empty when it says nothing of the kind."""
    return set().union(*(words(m) for m in _BASIS.findall(sentence or "")))


def _known(word: str, vocabulary: set[str]) -> bool:
    """The word or its singular or plural is in the vocabulary ("model", "models")."""
    forms = {word, word + "s", word.removesuffix("s"), word.removesuffix("es")}
    return bool(forms & vocabulary)


def numbers(sentence: str) -> set[str]:
    """The numbers a sentence states, as written without a trailing stop or comma."""
    return {t.rstrip(".,%") for t in tokens(sentence) if _NUMBER.search(t)}


@dataclass
class Evidence:
    """What the material states: its numbers, per sentence its claim kinds and words, and
    the content words of the text a claim of what it rests on is about (the proposal)."""
    numbers: set[str] = field(default_factory=set)
    claims: list[tuple[set[ClaimKind], set[str]]] = field(default_factory=list)
    vocabulary: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, material: str, about: str | None = None) -> Evidence:
        """`about`: the text the sentences judge (the proposal); the material when not given."""
        ev = cls(numbers(material), vocabulary=words(material if about is None else about))
        for s in sentences(material):
            kinds = claim_kinds(s)
            if kinds:
                ev.claims.append((kinds, words(s)))
        return ev

    def supports(self, kind: ClaimKind, sentence_words: set[str]) -> bool:
        if kind is ClaimKind.BASIS:  # sentence_words: the basis's own words, half of them known
            return 2 * sum(_known(w, self.vocabulary) for w in sentence_words) >= len(sentence_words)
        need = max(1, len(sentence_words) // 2)
        return any(kind in kinds and len(sentence_words & ws) >= need for kinds, ws in self.claims)


def unsupported(sentence: str, evidence: Evidence) -> list[str]:
    """What one sentence claims that the evidence does not state: its unknown numbers and
    the kinds of claim no sentence of the material makes about the same things."""
    out = [n for n in sorted(numbers(sentence)) if n not in evidence.numbers]
    ws = words(sentence)
    out += [str(k) for k in sorted(claim_kinds(sentence)) if not evidence.supports(k, ws)]
    rests_on = basis(sentence)
    if rests_on and not evidence.supports(ClaimKind.BASIS, rests_on):
        out.append(str(ClaimKind.BASIS))
    return out
