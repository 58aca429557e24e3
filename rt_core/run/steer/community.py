"""The community's part of a steer: the run's reviewers review a version, and the
authors revise it when asked, keeping the user's text as written.

Everything goes through the run's own stage functions (rt_core/run/styles: the same
prompts, personas and papers as the run's reviews) and its cached client, so the same
steer asked again is answered from the call cache without a model call. The reviewers
are the ones who reviewed the version's root, with the personas the run stored for
them; the authors' rewrite is the revision round's (rt_core/run/revision: chat or stem).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import RTError
from ...types import Change, MetaReview, Proposal, Review, Run
from ..pipeline.agents import gather
from ..pipeline.novelty import prior_titles
from ..pipeline.state import RunState
from ..revision import chat as revise_chat
from ..revision import stem as revise_stem
from .tree import YOU

# The progress a steer reports (a page polls it): the reviewers by id, then these two.
STAGE, META, AUTHORS = "steer", "meta-reviewer", "authors"


@dataclass
class Crew:
    """Who continues from a version: the run's reviewers (ids and personas), what they
    read, and the model context of the run's settings (RunState from Simulation.start)."""
    state: RunState
    reviewer_ids: list[str]
    personas: dict[str, str | None]
    prior: list[str]

    @classmethod
    def of(cls, state: RunState, run: Run, reviews: list[Review]) -> Crew:
        ids = list(dict.fromkeys(r.reviewer_id for r in reviews if r.reviewer_id != YOU))
        personas = {rid: (run.profiles[rid].text if rid in run.profiles else None) for rid in ids}
        return cls(state, ids, personas, prior_titles(run.novelty))


async def review(crew: Crew, proposal: Proposal) -> tuple[list[Review], MetaReview | None]:
    """Every reviewer's review of `proposal` (in the reviewers' order), then the meta-review.
    A reviewer who fails is left out; when every one failed, the first failure is raised."""
    s = crew.state
    papers = s.reader.writing_papers() if s.mode.reads_papers else []
    got: dict[str, Review] = {}
    errors_before = len(s.run.errors)
    jobs = [(rid, (lambda rid=rid: s.style.review(s.ctx, rid, crew.personas[rid], proposal, papers,
                                                crew.prior))) for rid in crew.reviewer_ids]
    await gather(s.recorder, STAGE, jobs, lambda rid, rv: got.__setitem__(rid, rv),
                 lambda rv: f"score {rv.score}", serial=s.serial)
    reviews = [got[rid] for rid in crew.reviewer_ids if rid in got]
    if not reviews:
        first = s.run.errors[errors_before] if len(s.run.errors) > errors_before else None
        raise RTError(f"no reviewer could review the new version: {first.message if first else 'no reply'}",
                      first.hint if first else "Try again, or another model.")
    s.recorder.emit(STAGE, META, 0, 1, "started")
    meta = await s.style.meta_review(s.ctx, proposal, reviews)
    s.recorder.emit(STAGE, META, 1, 1, "done", f"mean {meta.score:.2f}" if meta and meta.score is not None else "")
    return reviews, meta


async def revise(crew: Crew, proposal: Proposal, reviews: list[Review], meta: MetaReview | None,
                 kept: list[str]) -> tuple[Proposal, list[Change]]:
    """The authors' rewrite from the reviews; the answers in `kept` stay as the user wrote
    them (a rewrite of one is undone and not counted as a change)."""
    s = crew.state
    writer = revise_stem if s.ctx.traits.completes_stems else revise_chat
    s.recorder.emit(STAGE, AUTHORS, 0, 1, "started")
    revised, changes = await writer.revise(s.ctx, proposal, reviews, meta, crew.prior)
    s.recorder.emit(STAGE, AUTHORS, 1, 1, "done", f"{len(changes)} answer(s) rewritten")
    if kept:
        answers = revised.answers() | {k: getattr(proposal, k) for k in kept}
        revised = Proposal(**answers, missing=[m for m in revised.missing if m not in kept])
        changes = [c for c in changes if c.question not in kept]
    return revised, changes
