"""A run as a plan: its stages, what each waits for, and how the Run page shows them.

`plan_for(config)` decides which stages a run has and their order, from the settings
alone (no model, no store), so the Run page draws its progress bars from the same plan
the runner executes. A stage names the stages it needs; the runner starts it once
those have finished, so stages that need nothing from each other overlap (the reviewer
candidates are embedded while the authors read and write). Adding a stage (several
candidates, a tournament, a revision round) means adding it here with what it needs:
the runner (`run.runner`) runs any plan. Each stage also says what it costs
(`estimate`, run/pipeline/costs.py): the Run page and the CLI add those up before Start, and the
budget (run/pipeline/budget.py) checks a stage's estimate against what is left before starting it.
"""
from __future__ import annotations

from ...models import registry
from ...models.facts import ModelFacts
from ...types import MODES, RunConfig, RunRequest
from ..candidates import costs as candidate_costs
from ..candidates import stages as candidates
from ..candidates import tournament
from ..evidence import provenance
from ..revision import rounds as revise
from . import costs, novelty, steps
from .runner import Stage

# The groups the Run page shows, in order, with their titles (a group's time is the sum
# of its stages'). A stage without a group works in the background and is not timed:
# the queue (shown on its own) and the reviewer candidates (overlapping other stages).
GROUPS = {"read": "Reading: researcher profiles", "write": "Writing: drafts and the joint proposal",
          "novelty": novelty.GROUP_TITLE,
          "review": "Reviewing: reviews and meta-review", "rank": "Ranking the candidates",
          revise.GROUP: revise.GROUP_TITLE,
          "evaluate": "Evaluating against the reference"}



def plan_for(settings: RunConfig | RunRequest, facts: ModelFacts | None = None) -> list[Stage]:
    """The stages of a run with these settings (validated or not: unknown modes plan
    like 'global', validation reports them). `facts`: what the registry said of the run's
    models when it started (a serial model queues first); without, it is asked here."""
    config = settings.config if isinstance(settings, RunRequest) else settings
    serial = facts.serial if facts is not None else registry.serial(config.model)
    mode = MODES.get(config.mode, MODES["global"])
    wants_reviews = bool(config.reviewer_ids) or config.num_reviewers > 0
    chooses = mode.reads_profiles and not config.reviewer_ids and config.num_reviewers > 0
    start = ("queue",) if serial else ()
    plan = [Stage("queue", steps.wait_for_model, saves=False)] if start else []
    if chooses:
        plan.append(Stage("candidates", steps.embed_candidates, saves=False))
    if mode.reads_profiles:
        plan.append(Stage("read", steps.read_authors, start, "read", estimate=costs.read_authors))
    many = config.candidates > 1  # several candidates, ranked (run/candidates/stages.py, tournament.py)
    written = "merge_candidates" if many else "aggregate"
    plan += [Stage("write", steps.write_drafts, ("read",) if mode.reads_profiles else start, "write",
                   estimate=costs.write_drafts)]
    plan += [Stage("leads", candidates.assign_leads, saves=False),
             Stage("write_candidates", candidates.write_candidates, ("write", "leads"), "write",
                   estimate=candidate_costs.write_candidates),
             Stage("merge_candidates", candidates.merge, ("write_candidates",), "write")] if many else \
        [Stage("aggregate", steps.aggregate, ("write",), "write", estimate=costs.aggregate)]
    if wants_reviews:
        plan.append(Stage("choose", candidates.choose_reviewers if many else steps.choose_reviewers,
                          (written, "candidates") if chooses else (written,), "review",
                          saves=False))
        before_review = "choose"
        if mode.reads_profiles:
            plan.append(Stage("read_reviewers", steps.read_reviewers, ("choose",), "review",
                              estimate=costs.read_reviewers))
            before_review = "read_reviewers"
        plan += [Stage("review_candidates", candidates.review_candidates, (before_review,), "review",
                       estimate=candidate_costs.review_candidates),
                 Stage("meta_review_candidates", candidates.meta_review_candidates,
                       ("review_candidates",), "review", estimate=candidate_costs.meta_review_candidates)
                 ] if many else \
            [Stage("review", steps.review, (before_review,), "review", estimate=costs.review),
             Stage("meta_review", steps.meta_review, ("review",), "review",
                   estimate=costs.meta_review)]
    # The novelty check, after the proposal (or the merged candidates), before the reviews.
    plan = novelty.with_novelty(plan, config)
    if many:  # the judge needs no reviews: its rounds overlap the reviewing
        plan += [Stage("tournament", tournament.tournament, ("merge_candidates",), "rank",
                       estimate=candidate_costs.tournament),
                 Stage("rank", tournament.rank, (plan[-1].name, "tournament"), "rank")]
    for name, action, needs, estimate in revise.stages(config, [s.name for s in plan]):
        plan.append(Stage(name, action, needs, revise.GROUP, estimate=estimate))
    if config.reference_paper_id:
        plan.append(Stage("evaluate", steps.evaluate, (plan[-1].name,), "evaluate"))
    # Where the answers and reviews came from: embedding only, once the proposal is settled
    # (after the last revision round, which may replace it). When the reviewers' choice
    # waits for the same stage, after the choice too: started beside it, its embedding took
    # the CPU from the stage the run waits for (the choice embeds the proposal), so the
    # reviewers' calls left later; after it, it runs while their calls are out (issue 50).
    revised = [s.name for s in plan if s.group == revise.GROUP]
    settled = revised[-1] if revised else "rank" if many else "aggregate"
    beside = [s.name for s in plan if s.name == "choose" and settled in s.needs]
    plan.append(Stage("provenance", provenance.attribute_answers, (settled, *beside),
                      estimate=costs.attribution))
    if wants_reviews:
        plan.append(Stage("review_provenance", provenance.attribute_reviews,
                          ("review_candidates" if many else "review", "provenance"),
                          estimate=costs.review_attribution))
    return plan


def progress_groups(config: RunConfig) -> list[tuple[str, str]]:
    """(group, title) of the progress bars a run with these settings shows, in order."""
    groups = dict.fromkeys(s.group for s in plan_for(config) if s.group)
    return [(g, GROUPS.get(g, g)) for g in groups]
