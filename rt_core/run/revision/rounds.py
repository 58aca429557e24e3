"""Revision rounds: the authors answer the reviews, the same reviewers review again.

Round 0 is the run's first proposal with its reviews (after the tournament, when the
run has candidates). Each round r is three stages of the run's plan: `revise_r` (the
authors rewrite from the meta-review, the reviewers' weaknesses and, when the novelty
check ran, the nearest prior work), `review_r` (the round-0 reviewers, with the same
personas, so their scores are comparable) and `meta_review_r`. After each meta-review
the mean score is compared with the round before; when it did not improve the round
says so (`Round.stopped`) and the later rounds' stages do nothing. Every round is kept
in `run.rounds`, and `run.proposal`, `reviews` and `meta_review` follow the best-scored
finished round (a revision that made it worse is shown in its round, never as the
run's), so a round that fails leaves the earlier ones, and the run's proposal, as they
were. Every call goes through the cached client: a re-run makes no call, and
a resumed run passes through the finished rounds from the cache. A finished run can be
given more rounds afterwards (run/revise_more.py): its config then lists the rounds whose
early stop the user overrode (`RunConfig.revision_reopened`), and the revision goes on
after them.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from ...errors import InputError, RTError
from ...models import registry
from ...types import Proposal, Round, RunConfig, Stop, StopReason
from .. import prompts
from ..pipeline import costs
from ..pipeline.agents import gather
from . import chat as revise_chat
from . import facets as revise_facets
from . import stem as revise_stem
from .outputs import Revised, RoundMetaReview, RoundReviews, best_round, mean

if TYPE_CHECKING:
    from ..pipeline.state import RunState

GROUP = "revise"
GROUP_TITLE = "Revising: rounds after review"
STAGE_KINDS = ("revise", "review", "meta_review")
NO_REVIEWS = "this run has no reviews, so it cannot be revised"


def changed_nothing(rnd: Round) -> bool:
    """Whether the revision after this round rewrote no answer (so asking again would bring
    the same reply back from the cache)."""
    return rnd.stopped_for(StopReason.CHANGED_NOTHING)


def stage_names(rounds: int) -> list[str]:
    """revise_1, review_1, meta_review_1, revise_2, ... in plan order."""
    return [f"{kind}_{r}" for r in range(1, rounds + 1) for kind in STAGE_KINDS]


def _plain(p: Proposal) -> Proposal:
    """A round's proposal without the authors' drafts (they belong to round 0 only), with
    the papers' sentences it was written from (the facets path's reviews check them)."""
    return Proposal(**p.answers(), missing=list(p.missing), grounds=dict(p.grounds))


def _open(sim: RunState, r: int, rounds: list[Round]) -> bool:
    """Whether round r goes on: the round before it finished and did not stop."""
    if r == 1 and not rounds:
        return True
    if len(rounds) < r:
        return False
    before = rounds[r - 1]
    reopened = before.number in sim.config.revision_reopened
    return (not before.stopped or reopened) and before.meta_review is not None


def _first(sim: RunState) -> Round | None:
    """Round 0 from the run's proposal and reviews (None: the run has it); a run without
    reviews cannot be revised."""
    run = sim.run
    if run.rounds:
        return None
    if run.proposal is None or not run.reviews:
        raise InputError(NO_REVIEWS, "Ask for at least one reviewer, or set revision rounds to 0.")
    return Round(0, _plain(run.proposal), list(run.reviews), run.meta_review)


def prior_titles(sim: RunState) -> list[str]:
    """The nearest prior work the novelty check found (best first, no repeats)."""
    novelty = sim.run.novelty
    if novelty is None:
        return []
    titles = [p.title for f in novelty.facets for p in f.nearest[:3]]
    return list(dict.fromkeys(titles))[:6]


async def revise_step(sim: RunState, r: int) -> Revised | None:
    """Round r's proposal, rewritten from round r-1's reviews."""
    first = _first(sim) if r == 1 else None
    rounds = sim.run.rounds or ([first] if first is not None else [])
    if not _open(sim, r, rounds) or len(rounds) > r:
        return Revised(r, first) if first is not None else None
    before = rounds[r - 1]
    writer = revise_facets if before.proposal.grounds and sim.ctx.traits.writes_from_facets else \
        revise_stem if sim.ctx.traits.completes_stems else revise_chat
    sim.recorder.emit(GROUP, f"authors (round {r})", 0, 1, "started")
    try:
        revised, changes = await writer.revise(sim.ctx, before.proposal, before.reviews,
                                               before.meta_review, prior_titles(sim))
    except RTError as exc:
        sim.recorder.fail(GROUP, f"authors (round {r})", exc)
        raise
    if not changes:
        sim.recorder.emit(GROUP, f"authors (round {r})", 1, 1, "done", "no change")
        return Revised(r, first, stopped_before=Stop(StopReason.CHANGED_NOTHING))
    sim.recorder.emit(GROUP, f"authors (round {r})", 1, 1, "done",
                      f"rewrote {', '.join(c.question.upper() for c in changes)}")
    return Revised(r, first, revised=Round(r, revised, changes=changes))


async def review_step(sim: RunState, r: int) -> RoundReviews | None:
    """The round-0 reviewers, with their personas, review round r's proposal."""
    if len(sim.run.rounds) <= r or sim.run.rounds[r].meta_review is not None:
        return None
    rnd, first = sim.run.rounds[r], sim.run.rounds[0]
    papers = sim.reader.writing_papers() if sim.mode.reads_papers else []
    ids = [rv.reviewer_id for rv in first.reviews]
    done = {rv.reviewer_id for rv in rnd.reviews}
    jobs = [(rid, (lambda rid=rid: sim.style.review(
        sim.ctx, rid, sim.run.profiles[rid].text if rid in sim.run.profiles else None,
        rnd.proposal, papers))) for rid in ids if rid not in done]
    await gather(sim.recorder, GROUP, jobs, lambda _a, rev: rnd.reviews.append(rev),
                 lambda rv: f"round {r}: score {rv.score}", serial=sim.serial, part="rounds")
    rank = {rid: i for i, rid in enumerate(ids)}
    return RoundReviews(r, tuple(sorted(rnd.reviews, key=lambda rv: rank.get(rv.reviewer_id, len(rank)))))


async def meta_review_step(sim: RunState, r: int) -> RoundMetaReview | None:
    """Round r's meta-review; the run shows its best-scored round; stop when the mean did not rise."""
    if len(sim.run.rounds) <= r or sim.run.rounds[r].meta_review is not None:
        return None
    rnd, before = sim.run.rounds[r], sim.run.rounds[r - 1]
    if not rnd.reviews:
        raise RTError(f"no reviewer reviewed round {r}",
                      "See the errors above; resume the run to try the round again.")
    sim.recorder.emit(GROUP, f"meta-reviewer (round {r})", 0, 1, "started")
    meta = await sim.style.meta_review(sim.ctx, rnd.proposal, rnd.reviews)
    rounds = [dataclasses.replace(x, meta_review=meta) if x.number == r else x for x in sim.run.rounds]
    shown = best_round(rounds)  # the round the run will show once this output is folded in
    new, old = mean(meta), mean(before.meta_review)
    reopened = r in sim.config.revision_reopened and r < sim.config.revision_rounds
    stopped = None
    if new is None or old is None:
        stopped = Stop(StopReason.NO_SCORE, old, new)
    elif new <= old:
        stopped = Stop(StopReason.NOT_IMPROVED, old, new, kept=shown.number)
    elif r == sim.config.revision_rounds:
        stopped = Stop(StopReason.LAST_ROUND, old, new)
    if reopened and stopped:
        # A user asked for more rounds of the finished run after this stop
        # (run/revise_more.py): the reason stays, and the next round goes on (_open).
        stopped.reopened = True
    sim.recorder.emit(GROUP, f"meta-reviewer (round {r})", 1, 1, "done",
                      f"round {r}: mean score {new}")
    return RoundMetaReview(r, meta, stopped)


# -- the plan and its estimates ----------------------------------------------------------------

def _revise_estimate(s: costs.Sizes) -> costs.Calls:
    if costs.from_facets(s):
        return costs.Calls()  # answered from the neighbourhood's facets by template (revision/facets.py)
    if registry.traits(s.style).completes_stems:
        # Typically two flagged answers; at most all five.
        per = revise_stem.STEMS_PER_ANSWER
        prompt = costs.STEM_HEADER + 4 * costs.STEM_LINE
        return costs.Calls(2 * per, 5 * per, 2 * per * prompt, 2 * per * costs.STEM_LINE)
    msgs = prompts.load("revise")["revise"].messages(proposal="", meta_review="", weaknesses="",
                                                     prior_work="", questions="")
    template = sum(len(m["content"]) for m in msgs) // costs.CHARS_PER_TOKEN
    material = (costs.CHAT_REPLY["aggregate"] + costs.CHAT_REPLY["meta"]
                + s.reviewers * costs.CHAT_REPLY["review"] // 2)
    return costs.Calls(1, 1, template + material, costs.CHAT_REPLY["draft"] + 100)


def stages(config: RunConfig, names: list[str]) -> list[tuple]:
    """(name, action, needs, estimate) of the revision stages after the plan's stages
    `names`: after 'rank' when candidates are ranked, else after 'meta_review' (and after
    'novelty' when it runs); none without rounds or reviews. run.plan makes them Stages."""
    if config.revision_rounds <= 0 or not {"meta_review", "rank"} & set(names):
        return []
    before = ("rank" if "rank" in names else "meta_review",) + (("novelty",) if "novelty" in names else ())
    out: list[tuple] = []
    for r in range(1, config.revision_rounds + 1):
        out += [(f"revise_{r}", functools.partial(revise_step, r=r), before, _revise_estimate),
                (f"review_{r}", functools.partial(review_step, r=r), (f"revise_{r}",), costs.review_again),
                (f"meta_review_{r}", functools.partial(meta_review_step, r=r), (f"review_{r}",),
                 costs.meta_review)]
        before = (f"meta_review_{r}",)
    return out
