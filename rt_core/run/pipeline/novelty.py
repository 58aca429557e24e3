"""The novelty check as a stage of a run: where it sits in the plan, what it costs, what it
does, and what the reviewers are shown of it.

It comes after the proposal exists ("aggregate"; with several candidates, after they are
merged, "merge_candidates") and before the reviews, so the reviewers see the nearest
papers' titles. A plain run gets `run.novelty`; with candidates each one not merged into
another gets its own `candidate.novelty`. A check already on the run (a resume) is kept.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from ...errors import CancelledRun
from ...models import registry
from ...types import Novelty, RunConfig
from ..novelty.check import assess_async
from ..novelty.online import OnlineLiterature
from . import costs
from .runner import Stage
from .state import Checked

if TYPE_CHECKING:
    from .state import RunState

NAME = "novelty"
GROUP_TITLE = "Novelty: the nearest prior work"
EXPLAIN_REPLY = 150  # tokens of one explanation
EXPLAIN_PROMPT = 450  # the prompt's own words, the facet and five papers' titles
FACETS = 2
TITLES_SHOWN = 3  # per facet, to the reviewers


def dependency(config: RunConfig, plan_names: list[str]) -> str:
    """The stage the check waits for: the merged candidates, else the proposal."""
    if config.candidates > 1 and "merge_candidates" in plan_names:
        return "merge_candidates"
    return "aggregate"


def with_novelty(plan: list[Stage], config: RunConfig) -> list[Stage]:
    """The plan with the check inserted right after what it needs, and the reviews waiting
    for it (unchanged when the check is off)."""
    if not config.check_novelty:
        return plan
    names = [s.name for s in plan]
    after = dependency(config, names)
    if after not in names:
        return plan
    stage = Stage(NAME, run_stage, (after,), NAME, estimate=estimate_for(config))
    out = [dataclasses.replace(s, needs=(*s.needs, NAME)) if s.name in ("review", "review_candidates")
           else s for s in plan]
    out.insert(names.index(after) + 1, stage)
    return out


def estimate_for(config: RunConfig):
    """The stage's estimate for these settings: two explanations per proposal checked
    (one re-ask each at most) with an instruction model, nothing with a base model."""
    return functools.partial(estimate, proposals=max(1, config.candidates))


def estimate(sizes: costs.Sizes, proposals: int = 1) -> costs.Calls:
    if not registry.traits(sizes.style).follows_instructions:  # embedding only
        return costs.Calls(local=costs.FACETS_NOVELTY) if costs.from_facets(sizes) else costs.Calls()
    n = FACETS * proposals
    return costs.Calls(n, 2 * n, n * EXPLAIN_PROMPT, n * EXPLAIN_REPLY)


def literature_for(config: RunConfig, store) -> OnlineLiterature | None:
    return OnlineLiterature(store.http_cache) if config.literature == "online" else None


async def run_stage(state: RunState) -> Checked | None:
    """Check the run's proposal, or each candidate not merged into another. A check that
    fails (an embedder that cannot be reached) is recorded beside the run, like a failed
    evaluation, and never stops the reviews; a source that fails is only a note."""
    targets = [c for c in state.run.candidates if not c.merged_into]
    todo = [(c.id, c.proposal) for c in targets if c.novelty is None] if targets else \
        ([(Checked.PROPOSAL, state.run.proposal)] if state.run.novelty is None and state.run.proposal else [])
    if not todo:
        return None
    literature = literature_for(state.config, state.store)
    ctx = state.ctx if state.ctx.traits.follows_instructions else None
    tokens = state.embedder.tokens
    found = {}
    try:
        for i, (label, proposal) in enumerate(todo):
            state.recorder.emit(NAME, label, i, len(todo), "started")
            try:
                found[label] = await assess_async(proposal, state.store, state.embedder, literature, ctx)
            except CancelledRun:  # a cancel or the budget: the run stops here
                raise
            except Exception as exc:  # the check failed; the reviews still go on without it
                state.recorder.fail(NAME, label, exc)
                state.recorder.emit(NAME, label, i + 1, len(todo), "failed", str(exc))
                continue
            state.recorder.emit(NAME, label, i + 1, len(todo), "done",
                                "; ".join(f.verdict for f in found[label].facets))
    finally:
        if literature is not None:
            literature.close()
        state.recorder.meter(state.embedder.tokens - tokens)
    return Checked(found)


def prior_titles(novelty: Novelty | None, per_facet: int = TITLES_SHOWN) -> list[str]:
    """The nearest papers' titles (with years), each once, for the reviewers' prompts."""
    if novelty is None:
        return []
    titles: list[str] = []
    for facet in novelty.facets:
        for p in facet.nearest[:per_facet]:
            text = p.title + (f" ({p.year})" if p.year else "")
            if text not in titles:
                titles.append(text)
    return titles
