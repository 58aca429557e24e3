"""The one order every view of a brainstorm's candidates shares: the Results cards, the
exports (export/candidates.py) and the study that samples the best of them.

The order is the tournament's (best first); candidates the tournament did not rank (it
never ran, or stopped early) follow in the order they were written, and near-duplicates
merged into another candidate are kept apart, so no view counts them twice. It is decided
here, with the run, so that what is built on runs (exports, studies) reads it from below.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...types import Candidate, Run


@dataclass
class Ranked:
    """One candidate as the views show it: its place (None: unranked) and its score."""
    candidate: Candidate
    rank: int | None
    score: float | None
    interval: list[float] | None


def ranked(run: Run) -> list[Ranked]:
    """The candidates that stand on their own, best first; unranked ones after them."""
    t = run.tournament
    own = {c.id: c for c in run.candidates if not c.merged_into}
    order = [i for i in (t.order if t else []) if i in own]
    out = [Ranked(own[i], n, t.scores.get(i) if t else None, (t.intervals.get(i) if t else None) or None)
           for n, i in enumerate(order, 1)]
    return out + [Ranked(c, None, None, None) for i, c in own.items() if i not in order]


def merged(run: Run) -> list[Candidate]:
    """Near-duplicates folded into another candidate before ranking."""
    return [c for c in run.candidates if c.merged_into]


def merged_count(run: Run) -> int:
    """How many were merged: the tournament's count when it has one (it did the merging)."""
    t = run.tournament
    return max(t.merged if t else 0, len(merged(run)))
