"""Cutting a base model's line back to whole sentences.

A base model stops where its token budget ends, often inside a sentence, a bracket or an
abbreviation. Cutting at the last full stop used to leave "...data analysis project (e.":
the full stop of "e.g." is no sentence end. Here the sentences come from a segmenter that
knows abbreviations (rt_core/text.py), a sentence counts as whole only when it ends in
terminal punctuation that is not an abbreviation's and closes every bracket it opens, and
an unfinished tail is dropped. A line that is one unfinished clause (answers to a stem
often are) keeps its words up to where it stopped making sense: an unclosed bracket or a
trailing abbreviation.
"""
from __future__ import annotations

from collections.abc import Callable

from ...text import abbreviation, sentences, unclosed_at, whole


def _fragment(text: str) -> str:
    """An unfinished clause up to an unclosed bracket, without a trailing abbreviation."""
    at = unclosed_at(text)
    if at is not None:
        text = text[:at]
    ws = text.split()
    while ws and abbreviation(ws[-1]):
        ws.pop()
    return " ".join(ws).rstrip(" ,;:-–—")


def whole_sentences(text: str) -> str:
    """The line without its unfinished tail: whole sentences only, or, when there is none,
    the one clause up to where it stopped making sense."""
    found = sentences(text)
    while len(found) > 1 and not whole(found[-1]):
        found.pop()
    if not found:
        return ""
    if not whole(found[-1]):
        found[-1] = _fragment(found[-1])
    return " ".join(s for s in found if s)


def keep_sentences(text: str, keep: Callable[[str], bool]) -> str:
    """The text's sentences that pass `keep`; '' when its first does not (the ones after
    it lean on it, and a line's first sentence carries its stem)."""
    found = sentences(text)
    if not found or not keep(found[0]):
        return ""
    return " ".join(s for s in found if keep(s))
