"""Near-duplicate candidates are merged at a mean cosine of MERGE_THRESHOLD (0.80), question
by question; just below it they stay apart. Vectors are built with a known cosine."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rt_core.run.candidates.stages import MERGE_THRESHOLD, near_duplicates


def pair(cos: float, dim: int = 8, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors whose cosine is `cos` (in the plane of two axes)."""
    a, b = np.zeros(dim), np.zeros(dim)
    a[axis] = 1.0
    b[axis], b[axis + 1] = cos, math.sqrt(1 - cos * cos)
    return a, b


def vectors(cosines: list[float]) -> dict[str, dict[str, np.ndarray]]:
    """c1 and c2 answer question k with the k-th cosine; c3 is unrelated to both."""
    c1, c2, c3 = {}, {}, {}
    for k, cos in enumerate(cosines, 1):
        c1[f"q{k}"], c2[f"q{k}"] = pair(cos, axis=2 * k - 2, dim=2 * len(cosines) + 1)
        c3[f"q{k}"] = np.eye(2 * len(cosines) + 1)[-1]
    return {"c1": c1, "c2": c2, "c3": c3}


def test_the_threshold_is_the_measured_one():
    assert pytest.approx(0.80) == MERGE_THRESHOLD


@pytest.mark.parametrize("cos, merged", [(0.81, True), (0.79, False)])
def test_just_above_the_threshold_merges_and_just_below_does_not(cos, merged):
    got = near_duplicates(["c1", "c2", "c3"], vectors([cos] * 5), MERGE_THRESHOLD)
    assert got == ({"c2": "c1"} if merged else {})


@pytest.mark.parametrize("cosines, merged", [([0.9, 0.72], True), ([0.9, 0.68], False),
                                              ([0.70, 0.92], True), ([0.66, 0.92], False)])
def test_the_mean_over_questions_decides_not_the_closest_or_farthest_one(cosines, merged):
    """Means of 0.81 and 0.79: one close answer does not merge two ideas, one far answer does
    not keep a rewording apart."""
    got = near_duplicates(["c1", "c2"], {k: v for k, v in vectors(cosines).items() if k != "c3"},
                          MERGE_THRESHOLD)
    assert got == ({"c2": "c1"} if merged else {})
