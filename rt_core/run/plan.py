"""A run as a plan: its stages, what each waits for, and how the Run page shows them.

`plan_for(config)` decides which stages a run has and their order, from the settings
alone (no model, no store), so the Run page draws its progress bars from the same plan
the runner executes. A stage names the stages it needs; the runner starts it once
those have finished, so stages that need nothing from each other overlap (the reviewer
candidates are embedded while the authors read and write). Adding a stage (several
candidates, a tournament, a revision round) means adding it here with what it needs:
the runner (`run.runner`) runs any plan. Each stage also says what it costs
(`estimate`, run/costs.py): the Run page and the CLI add those up before Start, and the
budget (run/budget.py) checks a stage's estimate against what is left before starting it.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..models import registry
from ..novelty import stage as novelty
from ..types import MODES, RunConfig, RunRequest
from . import costs, steps

# The groups the Run page shows, in order, with their titles (a group's time is the sum
# of its stages'). A stage without a group works in the background and is not timed:
# the queue (shown on its own) and the reviewer candidates (overlapping other stages).
GROUPS = {"read": "Reading: researcher profiles", "write": "Writing: drafts and the joint proposal",
          "novelty": novelty.GROUP_TITLE,
          "review": "Reviewing: reviews and meta-review", "evaluate": "Evaluating against the reference"}


@dataclass(frozen=True)
class Stage:
    name: str
    action: Callable[[Any], Awaitable[None]]  # takes the run's state (a Simulation)
    needs: tuple[str, ...] = ()
    group: str | None = None  # the progress bar it belongs to; None: not shown
    saves: bool = True  # the run is saved when it ends (False: it changed nothing stored)
    # Its calls and tokens for a run's sizes (run.costs): the estimate before Start and
    # what the budget checks before the stage starts.
    estimate: Callable[[costs.Sizes], costs.Calls] = costs.nothing


def plan_for(settings: RunConfig | RunRequest) -> list[Stage]:
    """The stages of a run with these settings (validated or not: unknown modes plan
    like 'global', validation reports them)."""
    config = settings.config if isinstance(settings, RunRequest) else settings
    mode = MODES.get(config.mode, MODES["global"])
    wants_reviews = bool(config.reviewer_ids) or config.num_reviewers > 0
    chooses = mode.reads_profiles and not config.reviewer_ids and config.num_reviewers > 0
    start = ("queue",) if registry.serial(config.model) else ()
    plan = [Stage("queue", steps.wait_for_model, saves=False)] if start else []
    if chooses:
        plan.append(Stage("candidates", steps.embed_candidates, saves=False))
    if mode.reads_profiles:
        plan.append(Stage("read", steps.read_authors, start, "read", estimate=costs.read_authors))
    plan += [Stage("write", steps.write_drafts, ("read",) if mode.reads_profiles else start, "write",
                   estimate=costs.write_drafts),
             Stage("aggregate", steps.aggregate, ("write",), "write", estimate=costs.aggregate)]
    if wants_reviews:
        plan.append(Stage("choose", steps.choose_reviewers,
                          ("aggregate", "candidates") if chooses else ("aggregate",), "review",
                          saves=False))
        before_review = "choose"
        if mode.reads_profiles:
            plan.append(Stage("read_reviewers", steps.read_reviewers, ("choose",), "review",
                              estimate=costs.read_reviewers))
            before_review = "read_reviewers"
        plan += [Stage("review", steps.review, (before_review,), "review", estimate=costs.review),
                 Stage("meta_review", steps.meta_review, ("review",), "review",
                       estimate=costs.meta_review)]
    # The novelty check, after the proposal (or the merged candidates), before the reviews.
    plan = novelty.with_novelty(plan, config, Stage)
    if config.reference_paper_id:
        plan.append(Stage("evaluate", steps.evaluate, (plan[-1].name,), "evaluate"))
    return plan


def progress_groups(config: RunConfig) -> list[tuple[str, str]]:
    """(group, title) of the progress bars a run with these settings shows, in order."""
    groups = dict.fromkeys(s.group for s in plan_for(config) if s.group)
    return [(g, GROUPS.get(g, g)) for g in groups]
