"""The tournament's Bradley-Terry intervals come from a bootstrap over the decisions: they
have width, hold the point estimate and narrow as the decisions grow. (A stand-in that
returns [score, score] would pass every other test.)"""
from __future__ import annotations

import itertools

from rt_core.run.candidates import tournament
from rt_core.types import Judgement, Tournament

IDS = ["c1", "c2", "c3", "c4"]


def judgements(repeats: int) -> list[Judgement]:
    """A judge whose taste follows the ids' order (c1 best) but who errs: of every five
    decisions between two candidates, the better one wins four."""
    out = []
    for _ in range(repeats):
        for a, b in itertools.combinations(IDS, 2):
            out += [Judgement(a, b, a), Judgement(b, a, a), Judgement(a, b, a), Judgement(b, a, a),
                    Judgement(a, b, b)]
    return out


def fitted(repeats: int) -> Tournament:
    t = Tournament(judgements=judgements(repeats))
    tournament.fit(t, IDS)
    return t


def widths(t: Tournament) -> list[float]:
    return [t.intervals[c][1] - t.intervals[c][0] for c in IDS]


def test_every_interval_has_width_and_holds_its_score():
    t = fitted(2)
    assert [c for c, _ in sorted(t.scores.items(), key=lambda kv: -kv[1])] == IDS
    for c in IDS:
        low, high = t.intervals[c]
        assert low < high, (c, low, high)
        assert low <= t.scores[c] <= high, (c, low, t.scores[c], high)


def test_intervals_narrow_as_the_decisions_grow():
    few, many = widths(fitted(1)), widths(fitted(8))
    assert all(m < f for f, m in zip(few, many, strict=True)), (few, many)
    assert sum(many) < 0.6 * sum(few)  # eight times the data: about a third of the width


def test_the_best_and_the_worst_are_told_apart_with_enough_decisions():
    t = fitted(8)
    assert t.intervals["c1"][0] > t.intervals["c4"][1]  # the intervals do not overlap
