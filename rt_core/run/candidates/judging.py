"""Who judges a run's candidates, and how many comparisons the tournament makes, from
the settings alone: the plan's estimate (run/pipeline/costs.py) and the tournament
(run/candidates/tournament.py) both need it, and neither may import the other.

    rounds R(n) = ceil(log2 n) + 1
    pairs  P(n) = min(n(n-1)/2, floor(n/2) * R(n))      (no pair is met twice)
    calls  2 P(n), each pair in both orders, plus at most one re-ask per reply
"""
from __future__ import annotations

import math

from ...models import registry
from ...types import RunConfig


def judge_target(config: RunConfig) -> tuple[str, str]:
    """(model, base URL) of the judge: the one named, else the run's own."""
    if config.judge_model.strip():
        return config.judge_model.strip(), config.judge_base_url.strip()
    return config.model.strip(), config.base_url.strip()


def can_judge(config: RunConfig) -> bool:
    """Whether the judge follows instructions, as the registry declares it."""
    model, _ = judge_target(config)
    return registry.follows_instructions(model)


def rounds(n: int) -> int:
    return math.ceil(math.log2(n)) + 1 if n > 1 else 0


def planned_pairs(n: int) -> int:
    return min(n * (n - 1) // 2, (n // 2) * rounds(n))


def planned_calls(n: int) -> int:
    """Judge calls without re-asks (each pair in both orders)."""
    return 2 * planned_pairs(n)
