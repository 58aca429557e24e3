"""More revision rounds for a run that has finished: "revise this run" after reading it.

Revision rounds are normally chosen before Start (RunConfig.revision_rounds). A user who
reads a finished run's reviews may want the authors to answer them afterwards; this
module continues the run instead of starting a new one. The stored config gets more
rounds (at most validation.MAX_ROUNDS in all), and the run is resumed under its own id
through the ordinary resume path (Simulation(resume=True)): every earlier call comes
from the call cache, so only the new rounds' calls are made, and asking for the same
rounds again makes none.

Why a round stopped decides what reopens:
- "the last of the rounds asked for": it reopens by itself, since the raised count means
  it is no longer the last;
- "the mean score did not improve" (or there was no mean to compare): the user asked
  explicitly for another round, so they get one. The round is listed in
  RunConfig.revision_reopened, its stop is marked `reopened` (its words then say a
  further round was asked for after the stop), and the rule applies again to the new
  rounds (a new round that does not improve stops the revision as usual). The run still shows its best-scored
  round, so a revision that makes things worse never replaces a better proposal;
- "changed nothing": refused, because the same request would come back from the cache
  unchanged.

The budget: the cap given here (or, when none is given, the run's own stored cap, as for
credit) bounds the new calls of this revision only; the run's earlier spending does not
count against it, and the stages answered by the cache are never refused by their
estimate. The new rounds' estimate is shown first and a cap it exceeds is refused
before any call; a revision stopped by the cap while it goes keeps every earlier round
(the run is then `failed` with the budget's message, and resumes with a larger cap).
Results computed on the run afterwards stay with it: leave-one-out credit always (it
re-writes without revision rounds), the LLM judge and the real-review comparison only
when the run's proposal did not change.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import InputError
from ...models import registry
from ...models.embed import Embedder
from ...store import Store
from ...types import ProgressEvent, Run, RunConfig, RunRequest, Usage
from ..pipeline import timing
from ..pipeline.budget import Budget, check_cap, cost_text, estimate
from ..pipeline.costs import Calls, Sizes, sizes_for
from ..pipeline.plan import plan_for
from ..pipeline.runner import Stage
from ..pipeline.simulation import Continuation, Simulation
from ..pipeline.state import RunState
from ..pipeline.validation import MAX_ROUNDS
from . import rounds as revise
from .outputs import Settled


def rounds_done(run: Run) -> int:
    """Revision rounds the run has (round 0, the first proposal, is not one)."""
    return max(0, len(run.rounds) - 1)


def rounds_left(run: Run) -> int:
    return max(0, MAX_ROUNDS - rounds_done(run))


def check(run: Run) -> None:
    """One clear message when this run cannot be given more rounds."""
    if run.status != "done":
        raise InputError(f"run {run.id} is not finished ({run.status}), so it cannot be revised yet",
                         "Resume it first; a finished run with reviews can be revised.")
    if run.proposal is None or not run.reviews:
        raise InputError(revise.NO_REVIEWS, "Revision answers the reviews: start a run with at "
                         "least one reviewer.")
    if rounds_left(run) <= 0:
        raise InputError(f"run {run.id} already has {rounds_done(run)} revision rounds, the most "
                         f"a run can have ({MAX_ROUNDS})", "Start a new run to revise further.")
    last = run.rounds[-1] if run.rounds else None
    if last is not None and revise.changed_nothing(last):
        raise InputError("the last revision of this run changed nothing, and asking again would "
                         "bring the same answer back from the cache",
                         "Start a new run (another model or other reviewers) to revise further.")


@dataclass
class RevisionPlan:
    """What a revision of a finished run will do: its new config and the new calls."""
    run: Run
    extra: int
    config: RunConfig
    stages: dict[str, Calls] = field(default_factory=dict)  # the new rounds' stages only
    cost: float | None = 0.0
    free: bool = False  # the model runs in this process (budget.Estimate.free)

    @property
    def calls(self) -> Calls:
        return sum(self.stages.values(), Calls())

    @property
    def new_rounds(self) -> list[int]:
        return list(range(rounds_done(self.run) + 1, self.config.revision_rounds + 1))

    def summary(self) -> str:
        c, rounds = self.calls, self.new_rounds
        which = f"round {rounds[0]}" if len(rounds) == 1 else f"rounds {rounds[0]}-{rounds[-1]}"
        calls = c.count_text()
        return (f"Revising: {which}, {calls} new model calls, about {c.tokens:,} tokens, "
                f"{cost_text(self.cost, self.config.model, self.free)}; every earlier call comes from the "
                "cache (no cost).")


def plan(run: Run, extra: int, store: Store | None = None) -> RevisionPlan:
    """The config with `extra` more rounds, and the estimate of the new rounds' calls.
    Raises InputError for a run that cannot be revised or a count out of range."""
    check(run)
    done, left = rounds_done(run), rounds_left(run)
    if not 1 <= extra <= left:
        raise InputError(f"a run has at most {MAX_ROUNDS} revision rounds and this one has {done}, "
                         f"so 1 to {left} more can be asked for, not {extra}",
                         f"Ask for 1 to {left} more round{'s' * (left > 1)}.")
    reopened = sorted({*run.config.revision_reopened, done}) if done else list(run.config.revision_reopened)
    config = dataclasses.replace(run.config, revision_rounds=done + extra, revision_reopened=reopened)
    new = set(revise.stage_names(done + extra)) - set(revise.stage_names(done))
    est = estimate(config, store)
    stages = {k: v for k, v in est.stages.items() if k in new}
    out = RevisionPlan(run, extra, config, stages, free=est.free)
    out.cost = registry.estimate_cost(config.model, out.calls.prompt_tokens, out.calls.completion_tokens)
    return out


class RevisionBudget(Budget):
    """The cap on this revision's new calls: what the run spent before does not count, and
    only the new rounds' stages are admitted by their estimate (the rest come from the
    cache and cost nothing)."""

    def __init__(self, config: RunConfig, usage: Usage, new_stages: set[str], sizes: Sizes):
        super().__init__(config, usage, sizes)
        self.new_stages = new_stages

    def admit(self, stage: Stage) -> None:
        if stage.name in self.new_stages:
            super().admit(stage)


def refuse_if_over(p: RevisionPlan, max_tokens: int | None, max_cost: float | None) -> None:
    """An estimate over the cap is refused before any call, with the numbers."""
    c = p.calls
    if max_tokens is not None and c.tokens > max_tokens:
        raise InputError(f"the revision needs about {c.tokens:,} tokens, more than the cap of "
                         f"{max_tokens:,}", "Raise the cap, ask for fewer rounds, or leave the cap empty.")
    if max_cost is not None and p.cost is not None and p.cost > max_cost:
        raise InputError(f"the revision needs about ${p.cost:.4f}, more than the cap of ${max_cost:g}",
                         "Raise the cap, ask for fewer rounds, or leave the cap empty.")


def _settle_extras(old: Run) -> Callable[[RunState], object]:
    """The last stage: the judge and the real-review comparison were made on the old
    proposal and reviews; they go when the revision replaced either."""
    async def settle(sim: RunState) -> Settled:
        run = sim.run
        same = (run.proposal is not None and old.proposal is not None
                and run.proposal.answers() == old.proposal.answers() and run.reviews == old.reviews)
        return Settled(stale=not same)
    return settle


def simulation(store: Store, run_id: str, extra: int, *,
               request_for: Callable[[RunConfig], RunRequest] = RunRequest,
               max_tokens: int | None = None, max_cost: float | None = None,
               on_progress: Callable[[ProgressEvent], None] | None = None,
               embedder: Embedder | None = None) -> Simulation:
    """The finished run `run_id` with `extra` more rounds, ready to run (resumed under its
    id). `request_for` makes the request, with its keys, for the new config (the CLI's or
    the app's one key rule). No cap given: the run's own stored cap bounds the revision."""
    old = store.runs.load(run_id)
    p = plan(old, extra, store)
    cap_tokens = old.config.max_tokens if max_tokens is None else max_tokens
    cap_cost = old.config.max_cost if max_cost is None else max_cost
    capped = dataclasses.replace(p.config, max_tokens=cap_tokens, max_cost=cap_cost)
    sizes = sizes_for(capped, store)
    check_cap(capped, plan_for(capped), sizes)  # a cap of nothing, or in dollars for a model without a price
    refuse_if_over(p, cap_tokens, cap_cost)
    # The run is asked for its continuation; nothing of it is patched from here.
    sim = Simulation(request_for(p.config), store, embedder=embedder, on_progress=on_progress,
                     continues=Continuation(
                         old, (Stage("settle_results", _settle_extras(old), saves=False),),
                         timing.for_config(p.config, store, counted=set(p.stages)),
                         lambda usage: RevisionBudget(capped, usage, set(p.stages), sizes)))
    sim.start()  # bad input fails here, in the caller
    return sim


def revise_finished(store: Store, run_id: str, extra: int = 1, **kw) -> Run:
    """Give a finished run `extra` more revision rounds and return it (see `simulation`)."""
    return simulation(store, run_id, extra, **kw).run_sync()
