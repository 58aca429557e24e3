"""What each stage of a run does, as a function of the run's state (run/pipeline/state.py).

Each step reads what earlier stages handed on and returns its own output, a typed record
of run/pipeline/state.py that the runner folds into the state; it skips what is already
there: a resumed run, or a replay whose modes share their authors' profiles and reviewer
candidates, passes through the same steps and makes no call twice. Which steps run, and
after what, is decided by `run.plan`, never here.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ...errors import CancelledRun, RTError
from ...types import QUESTION_KEYS, Proposal
from ..evidence import provenance
from ..evidence.evaluate import compare, reference_answers, restater_for
from .agents import gather
from .novelty import prior_titles
from .state import CandidateVectors, Drafts, Evaluated, MetaReviewed, Profiles, Proposed, Reviewers, Reviews

if TYPE_CHECKING:
    from .state import RunState

NEUTRAL_REVIEWER = "reviewer"  # the one reviewer of a mode without researchers


async def read_profiles(state: RunState, researcher_ids: list[str]) -> Profiles:
    """Profiles of these researchers, those not on the run yet (progress under 'read');
    each is kept on the run as it arrives, so a failed stage keeps those it read."""
    todo = [rid for rid in researcher_ids if rid not in state.run.profiles]
    jobs = [(rid, (lambda rid=rid: state.reader.profile(rid))) for rid in todo]
    await gather(state.recorder, "read", jobs, state.run.profiles.__setitem__, lambda p: p.text,
                 serial=state.serial, part="profiles")
    return Profiles({rid: state.run.profiles[rid] for rid in researcher_ids if rid in state.run.profiles})


async def read_authors(state: RunState) -> Profiles:
    return await read_profiles(state, state.config.researcher_ids)


async def embed_candidates(state: RunState) -> CandidateVectors | None:
    """The reviewer candidates' papers, embedded in a thread (they do not depend on the
    proposal). A replay hands every mode the same vectors; then there is nothing to do."""
    if state.candidate_vectors is not None:
        return None
    try:
        return CandidateVectors(await asyncio.to_thread(state.reviewers.candidate_vectors))
    except Exception as exc:  # the writers go on; the choice, which needs them, fails
        return CandidateVectors(None, exc)


async def write_drafts(state: RunState) -> Drafts:
    """One draft per author (or one neutral writer when the mode reads no profiles)."""
    papers = state.reader.writing_papers() if state.mode.reads_papers else []
    ctx, style = state.ctx, state.style
    if not state.mode.reads_profiles:
        jobs = [("writer", lambda: style.write_draft(ctx, None, papers, ""))]
    else:
        authors = [rid for rid in state.config.researcher_ids if rid in state.run.profiles]
        jobs = [(rid, (lambda rid=rid: style.write_draft(ctx, state.run.profiles[rid].text, papers, rid)))
                for rid in authors]
    order = tuple(a for a, _ in jobs)
    drafts: dict[str, Proposal] = {}

    def keep(agent: str, draft) -> None:
        # Until the merge succeeds, the run's proposal holds the drafts alone.
        drafts[agent] = draft
        state.run.proposal = Proposal(missing=list(QUESTION_KEYS), drafts=[drafts[a] for a in order if a in drafts])

    await gather(state.recorder, "write", jobs, keep, lambda d: d.q1, serial=state.serial, part="proposal")
    return Drafts(drafts, order)


async def aggregate(state: RunState) -> Proposed:
    """The drafts merged into the run's proposal."""
    drafts = state.ordered_drafts()
    if not drafts:
        raise RTError("no author produced a draft", "See the errors above for each author.")
    state.recorder.emit("write", "aggregator", 0, 1, "started")
    try:
        proposal = await state.style.aggregate(state.ctx, drafts)
        proposal, cited = provenance.checked(state, proposal)  # cited labels checked, taken out
    except CancelledRun:
        raise
    except Exception as exc:
        state.recorder.fail("write", "aggregator", exc)
        raise
    state.recorder.emit("write", "aggregator", 1, 1, "done", proposal.q1)
    return Proposed(proposal, cited)


async def choose_reviewers(state: RunState) -> Reviewers:
    """Named reviewers, the closest candidates, or one neutral reviewer (no researchers)."""
    return await pick_reviewers(state, state.run.proposal)


async def pick_reviewers(state: RunState, proposal: Proposal, query=None) -> Reviewers:
    """The reviewers of `proposal` (by `query`, a vector, when given: several candidates
    ask by their mean), with the embedding tokens the choice spent counted on the run."""
    if not state.mode.reads_profiles:
        return Reviewers((NEUTRAL_REVIEWER,))
    if state.candidates_error is not None:
        raise state.candidates_error
    tokens = state.embedder.tokens
    chosen = await asyncio.to_thread(state.reviewers.choose_reviewers, proposal, state.candidate_vectors, query)
    state.recorder.meter(state.embedder.tokens - tokens)
    return Reviewers(tuple(chosen), dict(state.reviewers.reasons))


async def read_reviewers(state: RunState) -> Reviewers:
    """The chosen reviewers' profiles; a reviewer without one does not review."""
    await read_profiles(state, state.reviewer_ids)
    return Reviewers(tuple(r for r in state.reviewer_ids if r in state.run.profiles))


async def review(state: RunState) -> Reviews:
    proposal = state.run.proposal
    assert proposal is not None
    papers = state.reader.writing_papers() if state.mode.reads_papers else []
    personas = {r: (state.run.profiles[r].text if r in state.run.profiles else None)
                for r in state.reviewer_ids}
    done = {r.reviewer_id for r in state.run.reviews}
    prior = prior_titles(state.run.novelty)  # the novelty check's nearest papers, if it ran
    jobs = [(rid, (lambda rid=rid: state.style.review(state.ctx, rid, personas[rid], proposal, papers,
                                                    prior)))
            for rid in state.reviewer_ids if rid not in done]
    await gather(state.recorder, "review", jobs, lambda _agent, rev: state.run.reviews.append(rev),
                 lambda r: f"score {r.score}", serial=state.serial, part="reviews")
    # Reviews in reviewer order, not arrival order: the meta-review prompt (and so its
    # cache key) must not depend on which reviewer happened to answer first.
    rank = {rid: i for i, rid in enumerate(state.reviewer_ids)}
    return Reviews(tuple(sorted(state.run.reviews, key=lambda r: rank.get(r.reviewer_id, len(rank)))))


async def meta_review(state: RunState) -> MetaReviewed | None:
    if not state.run.reviews:
        return None
    state.recorder.emit("review", "meta-reviewer", 0, 1, "started")
    meta = await state.style.meta_review(state.ctx, state.run.proposal, state.run.reviews)
    state.recorder.emit("review", "meta-reviewer", 1, 1, "done", f"mean score {meta.score}")
    return MetaReviewed(meta)


async def evaluate(state: RunState) -> Evaluated | None:
    """Similarity to the reference. It comes after the run's outcome is settled: its
    failure (model or embedder) is recorded beside a finished run and never turns it into
    a failure."""
    try:
        return await _compare_with_reference(state)
    except CancelledRun:
        raise
    except Exception as exc:
        state.recorder.fail("evaluate", "reference", exc)
        state.recorder.emit("evaluate", "reference", 1, 1, "failed", str(exc))
        return None


async def _compare_with_reference(state: RunState) -> Evaluated | None:
    ref_id = state.config.reference_paper_id
    if not ref_id or state.run.proposal is None:
        return None
    state.recorder.emit("evaluate", "reference", 0, 1, "started")
    tokens = state.embedder.tokens
    reference, restated = state.reference, None
    if reference is None:
        # The evaluator's own model restates the reference (never the run's model).
        reference = restated = await reference_answers(
            state.store, state.store.corpus.get_paper(ref_id),
            restater=restater_for(state.request, state.store))
    similarity = await asyncio.to_thread(compare, state.embedder, state.run.proposal, reference)
    state.recorder.meter(state.embedder.tokens - tokens)
    state.recorder.emit("evaluate", "reference", 1, 1, "done", f"similarity {similarity.mean:.3f}")
    return Evaluated(similarity, restated)


async def wait_for_model(state: RunState) -> None:
    """Take a place in the queue for the one in-process model; until it is this run's
    turn, report the place and the estimated start about once a second. The run leaves
    the queue when it ends, however it ends (`Simulation.arun`, run/pipeline/simulation.py)."""
    queue = state.model_queue()
    queue.join(state.run.id)
    while not await asyncio.to_thread(queue.wait_turn, state.run.id, 1.0):
        state.ctx.check_cancel()
        place = queue.place(state.run.id)
        if place is not None and place.ahead:
            state.recorder.emit("queue", "embedded model", 0, place.ahead, "waiting",
                              f"{place.ahead} run{'s' * (place.ahead > 1)} ahead; starts in about "
                              f"{place.eta_s:.0f} s")
    state.recorder.emit("queue", "embedded model", 1, 1, "done", "the model is free: starting")
