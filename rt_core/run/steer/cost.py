"""What a steer will cost, before any call: the run's own estimate (run/pipeline/budget.py)
of the stages a steer repeats, a review per reviewer and the meta-review, and for each
revision round the authors' rewrite and the same again. Nothing else of the run is redone."""
from __future__ import annotations

import dataclasses

from ...models import registry
from ...types import RunConfig
from ..pipeline import timing
from ..pipeline.budget import cost_text, estimate
from ..pipeline.costs import Calls
from ..revision.rounds import stage_names


@dataclasses.dataclass(frozen=True)
class SteerCost:
    calls: Calls
    cost: float | None
    model: str
    free: bool = False  # the model runs in this process (budget.Estimate.free)

    def summary(self) -> str:
        c = self.calls
        calls = c.count_text()
        return (f"This steer: about {calls} model calls, {c.tokens:,} tokens, "
                f"{cost_text(self.cost, self.model, self.free)}; the same steer again comes from the cache.")


def _shape(config: RunConfig, reviewers: int, rounds: int) -> tuple[RunConfig, set[str]]:
    """A run's settings shaped like this steer, and the stages of it the steer repeats."""
    c = dataclasses.replace(config, candidates=1, check_novelty=False, num_reviewers=max(1, reviewers),
                            reviewer_ids=[], revision_rounds=rounds, revision_reopened=[])
    return c, {"review", "meta_review", *stage_names(rounds)}


def steer_expected(config: RunConfig, reviewers: int, rounds: int, store) -> timing.Expected:
    """The steer's expected wall time: the run's plan timed over the stages it repeats, by the
    same machinery as a run's (run/pipeline/timing.py), so a steer and a run are said alike.
    Never calibrates: a model with no measured speed says so instead."""
    c, wanted = _shape(config, reviewers, rounds)
    return timing.for_config(c, store, counted=wanted)


def steer_cost(config: RunConfig, reviewers: int, rounds: int, store=None) -> SteerCost:
    """The estimate for `reviewers` reviewers and `rounds` revision rounds on `config`'s model."""
    c, wanted = _shape(config, reviewers, rounds)
    est = estimate(c, store)
    calls = sum((v for k, v in est.stages.items() if k in wanted), Calls())
    return SteerCost(calls, registry.estimate_cost(c.model, calls.prompt_tokens, calls.completion_tokens),
                     c.model, est.free)
