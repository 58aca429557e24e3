"""What each stage of a run does, as a function of the run (a `Simulation`).

Each step reads what earlier stages left on the run and adds its own part, and skips
what is already there: a resumed run, or a replay whose modes share their authors'
profiles and reviewer candidates, passes through the same steps and makes no call
twice. Which steps run, and after what, is decided by `run.plan`, never here.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import CancelledRun, RTError
from ..novelty.stage import prior_titles
from ..types import QUESTION_KEYS, Proposal
from . import provenance
from .agents import gather
from .evaluate import compare, reference_answers, restater_for

if TYPE_CHECKING:
    from .simulation import Simulation

NEUTRAL_REVIEWER = "reviewer"  # the one reviewer of a mode without researchers


async def read_profiles(sim: Simulation, researcher_ids: list[str]) -> None:
    """Profiles of these researchers, those not on the run yet (progress under 'read')."""
    todo = [rid for rid in researcher_ids if rid not in sim.run.profiles]
    jobs = [(rid, (lambda rid=rid: sim.reader.profile(rid))) for rid in todo]
    await gather(sim.recorder, "read", jobs, sim.run.profiles.__setitem__, lambda p: p.text,
                 serial=sim.serial)


async def read_authors(sim: Simulation) -> None:
    await read_profiles(sim, sim.config.researcher_ids)


async def embed_candidates(sim: Simulation) -> None:
    """The reviewer candidates' papers, embedded in a thread (they do not depend on the
    proposal). A replay hands every mode the same vectors; then there is nothing to do."""
    if sim.candidate_vectors is not None:
        return
    try:
        sim.candidate_vectors = await asyncio.to_thread(sim.reviewers.candidate_vectors)
    except Exception as exc:  # the writers go on; the choice, which needs them, fails
        sim.candidates_error = exc


async def write_drafts(sim: Simulation) -> None:
    """One draft per author (or one neutral writer when the mode reads no profiles)."""
    papers = sim.reader.writing_papers() if sim.mode.reads_papers else []
    ctx, style = sim.ctx, sim.style
    if not sim.mode.reads_profiles:
        jobs = [("writer", lambda: style.write_draft(ctx, None, papers, ""))]
    else:
        authors = [rid for rid in sim.config.researcher_ids if rid in sim.run.profiles]
        jobs = [(rid, (lambda rid=rid: style.write_draft(ctx, sim.run.profiles[rid].text, papers, rid)))
                for rid in authors]
    sim.author_order = [a for a, _ in jobs]

    def keep(agent: str, draft) -> None:
        # Until the merge succeeds, the run's proposal holds the drafts alone.
        sim.drafts[agent] = draft
        sim.run.proposal = Proposal(missing=list(QUESTION_KEYS), drafts=sim.ordered_drafts())

    await gather(sim.recorder, "write", jobs, keep, lambda d: d.q1, serial=sim.serial)


async def aggregate(sim: Simulation) -> None:
    """The drafts merged into the run's proposal."""
    drafts = sim.ordered_drafts()
    if not drafts:
        raise RTError("no author produced a draft", "See the errors above for each author.")
    sim.recorder.emit("write", "aggregator", 0, 1, "started")
    try:
        proposal = await sim.style.aggregate(sim.ctx, drafts)
        proposal = provenance.after_aggregate(sim, proposal)  # cited labels checked, taken out
    except CancelledRun:
        raise
    except Exception as exc:
        sim.recorder.fail("write", "aggregator", exc)
        raise
    sim.run.proposal = proposal
    sim.recorder.emit("write", "aggregator", 1, 1, "done", proposal.q1)


async def choose_reviewers(sim: Simulation) -> None:
    """Named reviewers, the closest candidates, or one neutral reviewer (no researchers)."""
    if not sim.mode.reads_profiles:
        sim.reviewer_ids = [NEUTRAL_REVIEWER]
        return
    if sim.candidates_error is not None:
        raise sim.candidates_error
    tokens = sim.embedder.tokens
    sim.reviewer_ids = await asyncio.to_thread(sim.reviewers.choose_reviewers, sim.run.proposal,
                                               sim.candidate_vectors)
    sim.run.usage.prompt_tokens += sim.embedder.tokens - tokens


async def read_reviewers(sim: Simulation) -> None:
    """The chosen reviewers' profiles; a reviewer without one does not review."""
    await read_profiles(sim, sim.reviewer_ids)
    sim.reviewer_ids = [r for r in sim.reviewer_ids if r in sim.run.profiles]


async def review(sim: Simulation) -> None:
    proposal = sim.run.proposal
    assert proposal is not None
    papers = sim.reader.writing_papers() if sim.mode.reads_papers else []
    personas = {r: (sim.run.profiles[r].text if r in sim.run.profiles else None)
                for r in sim.reviewer_ids}
    done = {r.reviewer_id for r in sim.run.reviews}
    prior = prior_titles(sim.run.novelty)  # the novelty check's nearest papers, if it ran
    jobs = [(rid, (lambda rid=rid: sim.style.review(sim.ctx, rid, personas[rid], proposal, papers,
                                                    prior)))
            for rid in sim.reviewer_ids if rid not in done]
    await gather(sim.recorder, "review", jobs, lambda _agent, rev: sim.run.reviews.append(rev),
                 lambda r: f"score {r.score}", serial=sim.serial)
    # Reviews in reviewer order, not arrival order: the meta-review prompt (and so its
    # cache key) must not depend on which reviewer happened to answer first.
    rank = {rid: i for i, rid in enumerate(sim.reviewer_ids)}
    sim.run.reviews.sort(key=lambda r: rank.get(r.reviewer_id, len(rank)))


async def meta_review(sim: Simulation) -> None:
    if not sim.run.reviews:
        return
    sim.recorder.emit("review", "meta-reviewer", 0, 1, "started")
    sim.run.meta_review = await sim.style.meta_review(sim.ctx, sim.run.proposal, sim.run.reviews)
    sim.recorder.emit("review", "meta-reviewer", 1, 1, "done", f"mean score {sim.run.meta_review.score}")


async def evaluate(sim: Simulation) -> None:
    """Similarity to the reference. It comes after the run's outcome is settled: its
    failure (model or embedder) is recorded beside a finished run and never turns it into
    a failure."""
    try:
        await _compare_with_reference(sim)
    except CancelledRun:
        raise
    except Exception as exc:
        sim.recorder.fail("evaluate", "reference", exc)
        sim.recorder.emit("evaluate", "reference", 1, 1, "failed", str(exc))


async def _compare_with_reference(sim: Simulation) -> None:
    ref_id = sim.config.reference_paper_id
    if not ref_id or sim.run.proposal is None:
        return
    sim.recorder.emit("evaluate", "reference", 0, 1, "started")
    tokens = sim.embedder.tokens
    if sim.reference is None:
        # The evaluator's own model restates the reference (never the run's model).
        sim.reference = await reference_answers(
            sim.store, sim.store.corpus.get_paper(ref_id),
            restater=restater_for(sim.request, sim.store))
    sim.run.similarity = await asyncio.to_thread(compare, sim.embedder, sim.run.proposal, sim.reference)
    sim.run.usage.prompt_tokens += sim.embedder.tokens - tokens
    sim.recorder.emit("evaluate", "reference", 1, 1, "done", f"similarity {sim.run.similarity.mean:.3f}")


async def wait_for_model(sim: Simulation) -> None:
    """Take a place in the queue for the one in-process model; until it is this run's
    turn, report the place and the estimated start about once a second. The run leaves
    the queue when it ends, however it ends (`Simulation.arun`)."""
    queue = sim.model_queue()
    queue.join(sim.run.id)
    while not await asyncio.to_thread(queue.wait_turn, sim.run.id, 1.0):
        sim.ctx.check_cancel()
        place = queue.place(sim.run.id)
        if place is not None and place.ahead:
            sim.recorder.emit("queue", "embedded model", 0, place.ahead, "waiting",
                              f"{place.ahead} run{'s' * (place.ahead > 1)} ahead; starts in about "
                              f"{place.eta_s:.0f} s")
    sim.recorder.emit("queue", "embedded model", 1, 1, "done", "the model is free: starting")
