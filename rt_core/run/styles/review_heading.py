"""Which heading a review point belongs under: decided by what it says.

A base model asked for a strength sometimes writes a criticism ("The proposal is not an
LLM proposal.") and, asked for a weakness, praise ("However, the proposal has a lot of
potential."). Filed by where it was written, each lands under the wrong heading of the
review and then of the meta-review. VADER (a lexicon- and rule-based sentiment reader that
handles negation, intensifiers and "but") tells which way a point leans; a few words of
reviewing it does not weigh are added to its lexicon. A point that leans clearly goes
under the heading it leans to; one that does not lean keeps the heading it was asked for.
"""
from __future__ import annotations

import functools
import re
from enum import StrEnum

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer, negated

from ...text import wordset

STRENGTHS, WEAKNESSES = "strengths", "weaknesses"

# Reviewing words VADER's general lexicon lacks or weighs for everyday speech (its scale
# runs from -4 to 4).
REVIEW_LEXICON = {"potential": 1.5, "promising": 2.0, "novel": 1.2, "original": 1.2,
                  "well-motivated": 1.8, "rigorous": 1.5, "feasible": 1.2, "lacks": -1.8,
                  "lack": -1.8, "lacking": -1.8, "missing": -1.5, "omits": -1.5, "ignores": -1.5,
                  "overlooks": -1.5, "vague": -1.5, "unclear": -1.5, "unconvincing": -2.0,
                  "superficial": -1.5, "overstated": -1.5, "infeasible": -2.0, "unrealistic": -1.8}
# A suggestion is no praise, whatever words it uses ("could be improved by ...").
_HEDGES = wordset("could should would might must needs need")
PRAISE_FROM = 0.3  # VADER's compound score from which a point is praise
CRITICISM_BELOW = -0.05  # ... and below which it is criticism


class Leaning(StrEnum):
    PRAISE = "praise"
    CRITICISM = "criticism"
    NEUTRAL = "neutral"


@functools.cache
def _reader() -> SentimentIntensityAnalyzer:
    reader = SentimentIntensityAnalyzer()
    reader.lexicon.update(REVIEW_LEXICON)
    return reader


def leaning(point: str) -> Leaning:
    """Which way one review point leans. A bare negation ("is not an LLM proposal",
    "does not say which data") is criticism: it says what the proposal is not."""
    tokens = re.findall(r"[a-z][a-z'\-]*", (point or "").lower())
    compound = _reader().polarity_scores(point or "")["compound"]
    if compound < CRITICISM_BELOW or (negated(tokens) and compound < PRAISE_FROM):
        return Leaning.CRITICISM
    if compound >= PRAISE_FROM and not _HEDGES & set(tokens):
        return Leaning.PRAISE
    return Leaning.NEUTRAL


def heading(point: str, asked: str) -> str:
    """The heading a point goes under: the one it leans to, else the one it was asked for."""
    lean = leaning(point)
    if lean is Leaning.PRAISE:
        return STRENGTHS
    if lean is Leaning.CRITICISM:
        return WEAKNESSES
    return asked


def fits(point: str, asked: str) -> bool:
    """Whether a point may stand under the heading it was asked for: no praise under
    Weaknesses, no criticism under Strengths."""
    return heading(point, asked) == asked
