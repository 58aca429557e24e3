"""Whether a quoted weakness is one the reviewers really wrote.

An instruction model asked which weakness a change answers may paraphrase, merge two
points, or invent one that sounds right. A claim of "this answers the reviewers" is
only shown when the quote is found in the reviews: the quote and each review point are
normalised (case, punctuation, bullets, spacing) and the quote must match a stretch of
one point closely (difflib's ratio over a window of the quote's length). What is kept
is the reviewer's own words, never the model's version of them.
"""
from __future__ import annotations

import difflib
import re

from ...types import Review

# How close a quote must be to a stretch of a review point (1.0: identical once
# normalised). 0.85 forgives a changed article or a dropped comma, not a new claim.
MATCH = 0.85
MIN_WORDS = 3  # shorter "quotes" ("the data") match almost anything


def normalise(text: str) -> list[str]:
    return re.sub(r"[^\w\s]", " ", (text or "").lower()).split()


def points(reviews: list[Review]) -> list[str]:
    """Each reviewer's weaknesses as separate points (one per bullet or line)."""
    out = []
    for r in reviews:
        for line in (r.weaknesses or "").splitlines():
            line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
            if len(normalise(line)) >= MIN_WORDS:
                out.append(line)
    return list(dict.fromkeys(out))


def closeness(quote: str, point: str) -> float:
    """The best ratio between the quote and any stretch of the point as long as it."""
    q, p = normalise(quote), normalise(point)
    if not q or not p:
        return 0.0
    n = len(q)
    if len(p) <= n:
        return difflib.SequenceMatcher(None, " ".join(q), " ".join(p)).ratio()
    joined = " ".join(q)
    return max(difflib.SequenceMatcher(None, joined, " ".join(p[i:i + n])).ratio()
               for i in range(len(p) - n + 1))


def find_weakness(quote: str, candidates: list[str]) -> str:
    """The review point the quote comes from, in the reviewer's words; "" when the quote
    is too short or matches none closely enough."""
    quote = (quote or "").strip().strip('"“”\'').strip()
    if len(normalise(quote)) < MIN_WORDS:
        return ""
    best = max(candidates, key=lambda p: closeness(quote, p), default="")
    return best if best and closeness(quote, best) >= MATCH else ""
