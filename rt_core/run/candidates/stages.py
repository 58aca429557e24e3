"""Several candidates per neighbourhood: the stages a plan with `candidates` > 1 runs.

The profiles, the drafts and the reviewers are shared; each candidate is one merge of
the drafts led by its own `Lead` (run/candidates/leads.py, run/candidates/writing.py) with its own
seed. Near-duplicates are merged before anyone reviews them, so no call is spent on a
copy. Reviewers are chosen once, against the mean of the live candidates (not the
first: reviewers close to one candidate would lean the reviewers' scores, a ranking
signal, towards it), and every live candidate is reviewed by the same reviewers, with a
meta-review each. The ranking (run/candidates/tournament.py) then copies the best candidate to the
run's proposal, reviews and meta-review, so everything downstream works unchanged.

Stage functions take the run's state (run/pipeline/state.py) and return what they made
(run/candidates/outputs.py), which the runner folds into the state's `candidates` record
(`CandidateWork`) and the run's own records (`run.candidates`, `run.tournament`), saved
when each stage ends; a candidate's text, reviews and meta-review are kept on the run as
each arrives (`Recorder.keep`).
"""
from __future__ import annotations

import asyncio

import numpy as np

from ...errors import RTError
from ...fiveq import QUESTION_KEYS
from ...types import Candidate
from ..evidence import provenance
from ..evidence.evaluate import content_text
from ..pipeline.agents import gather
from ..pipeline.state import Reviewers, RunState
from ..pipeline.steps import pick_reviewers
from . import leads
from .outputs import Leads, Merged, Reviewed, Written
from .writing import lead_first, seeded, writer_for

# Two candidates whose answers have a mean cosine (question by question, with the run's
# embedder) of at least this are one idea said twice: the later is merged into the
# earlier. Measured with MiniLM (bench/bench_merge_threshold.py; docs/PERFORMANCE.md,
# "Several candidates"): the same five answers reworded sit at 0.83-0.84, two ideas in
# one sentence frame that differ only in their two concepts at 0.66-0.74, unrelated
# ideas at 0.13-0.30. 0.80 merges a rewording and keeps concept-level variants apart.
MERGE_THRESHOLD = 0.80


def live(state: RunState) -> list[Candidate]:
    """Candidates written and not merged into another, in order."""
    return [c for c in state.run.candidates
            if not c.merged_into and any(c.proposal.answers().values())]


# -- leads ---------------------------------------------------------------------------------
def _neighbourhood(state: RunState) -> leads.Neighbourhood:
    corpus, cfg = state.store.corpus, state.config
    authors = corpus.get_researchers(cfg.researcher_ids) if state.mode.reads_profiles else []
    papers = corpus.get_papers(cfg.paper_ids)
    g = state.ctx.grounding
    fields = g.fields or corpus.researcher_fields(cfg.researcher_ids)
    concepts = g.concepts  # key concepts, ranked with the run's embedder (no model call)
    return leads.Neighbourhood(list(authors), list(papers), list(fields), dict(concepts))


async def assign_leads(state: RunState) -> Leads | None:
    """One candidate record per requested candidate, each with its lead and seed."""
    if state.run.candidates:
        return None
    hood = await asyncio.to_thread(_neighbourhood, state)
    names = {r.id: r.name for r in hood.authors}
    titles = {p.id: p.title for p in hood.papers}
    made, texts = [], {}
    for i, lead in enumerate(leads.assign(state.config.candidates, hood)):
        c = Candidate(id=f"c{i + 1}", lead=lead, seed=leads.seed_of(i))
        texts[c.id] = leads.describe(lead, names, state.ctx.grounding, titles)
        made.append(c)
    return Leads(tuple(made), texts)


# -- writing -------------------------------------------------------------------------------
async def write_candidates(state: RunState) -> Written:
    """Each candidate merged from the shared drafts by its lead (progress under 'write')."""
    drafts = state.ordered_drafts()
    if not drafts:
        raise RTError("no author produced a draft", "See the errors above for each author.")
    st, write = state.candidates, writer_for(state.client.style)
    fluency: dict[str, float] = {}
    g = state.ctx.grounding

    def job(c: Candidate):
        async def run():
            ctx, client = seeded(state.ctx, c.seed)
            author = c.lead.author_ids[0] if c.lead.author_ids else ""
            persona = state.run.profiles[author].text if author in state.run.profiles else ""
            proposal = await write(ctx, lead_first(drafts, c.lead.author_ids),
                                   st.lead_texts.get(c.id, ""), persona, g, c.lead)
            if client.logprobs:
                fluency[c.id] = float(np.mean(client.logprobs))
            # Labels out before anything reads the answers (the merge's embedding, the
            # reviewers, the judge, the novelty check), by the plain aggregate's rule.
            return provenance.checked(state, proposal, f"The editor of candidate {c.id}")
        return run

    def keep(cid: str, written) -> None:
        by_id[cid].proposal, by_id[cid].cited = written

    todo = [c for c in state.run.candidates if not any(c.proposal.answers().values())]
    by_id = {c.id: c for c in state.run.candidates}
    await gather(state.recorder, "write", [(c.id, job(c)) for c in todo], keep,
                 lambda written: written[0].q1, serial=state.serial, part="candidates")
    if not live(state):
        raise RTError("no candidate was written", "See the errors above for each candidate.")
    return Written(fluency)


# -- merging near-duplicates ---------------------------------------------------------------
def answer_vectors(embedder, candidates: list[Candidate]) -> dict[str, dict[str, np.ndarray]]:
    """Per candidate, one unit vector per answered question (headings and stems left out,
    as in the similarity to a reference), all in one batch."""
    keys, texts = [], []
    for c in candidates:
        for q in QUESTION_KEYS:
            text = content_text(getattr(c.proposal, q))
            if text:
                keys.append((c.id, q))
                texts.append(text)
    out: dict[str, dict[str, np.ndarray]] = {c.id: {} for c in candidates}
    if texts:
        for (cid, q), v in zip(keys, embedder.encode(texts), strict=True):
            out[cid][q] = v
    return out


def similarity(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    """Mean cosine over the questions both answer (0 when they share none)."""
    common = [q for q in a if q in b]
    return float(np.mean([a[q] @ b[q] for q in common])) if common else 0.0


def near_duplicates(ids: list[str], vectors: dict[str, dict[str, np.ndarray]],
                    threshold: float) -> dict[str, str]:
    """Later candidate -> the earlier live one it repeats (similarity >= threshold)."""
    merged: dict[str, str] = {}
    kept: list[str] = []
    for cid in ids:
        twin = next((k for k in kept if similarity(vectors[cid], vectors[k]) >= threshold), None)
        if twin is None:
            kept.append(cid)
        else:
            merged[cid] = twin
    return merged


async def merge(state: RunState) -> Merged:
    """Merge near-duplicate candidates; the tournament record says how many and at what
    threshold."""
    cands = live(state)
    tokens = state.embedder.tokens
    vectors = await asyncio.to_thread(answer_vectors, state.embedder, cands)
    state.recorder.meter(state.embedder.tokens - tokens)
    merged = near_duplicates([c.id for c in cands], vectors, MERGE_THRESHOLD)
    state.recorder.emit("write", "merge", 1, 1, "done",
                        f"{len(merged)} near-duplicate{'s' * (len(merged) != 1)} merged")
    return Merged(vectors, merged, MERGE_THRESHOLD)


# -- reviewing -----------------------------------------------------------------------------
def mean_vector(vectors: dict[str, dict[str, np.ndarray]], cands: list[Candidate]) -> np.ndarray:
    """The live candidates' mean, each candidate the mean of its answers' vectors (the
    merge embedded them already, so choosing costs no second pass of the embedder)."""
    def unit(v: np.ndarray) -> np.ndarray:
        return v / (np.linalg.norm(v) or 1.0)
    return unit(np.mean([unit(np.mean(list(vectors[c.id].values()), axis=0))
                         for c in cands if vectors.get(c.id)], axis=0))


async def choose_reviewers(state: RunState) -> Reviewers:
    """Reviewers chosen once, against the mean of the live candidates' vectors."""
    if not state.mode.reads_profiles:
        return await pick_reviewers(state, state.run.proposal)
    return await pick_reviewers(state, live(state)[0].proposal,
                                query=mean_vector(state.candidates.vectors, live(state)))


async def review_candidates(state: RunState) -> Reviewed:
    """Every live candidate reviewed by every chosen reviewer (progress under 'review')."""
    papers = state.reader.writing_papers() if state.mode.reads_papers else []
    personas = {r: (state.run.profiles[r].text if r in state.run.profiles else None)
                for r in state.reviewer_ids}
    jobs, reviewed = [], {}  # reviewed: each job's agent name -> the candidate it reviews
    for c in live(state):
        done = {r.reviewer_id for r in c.reviews}
        for rid in state.reviewer_ids:
            if rid not in done:
                reviewed[f"{c.id}:{rid}"] = c
                jobs.append((f"{c.id}:{rid}", (lambda c=c, rid=rid: state.style.review(
                    state.ctx, rid, personas[rid], c.proposal, papers))))

    def keep(agent: str, rev) -> None:
        reviewed[agent].reviews.append(rev)

    await gather(state.recorder, "review", jobs, keep, lambda r: f"score {r.score}", serial=state.serial,
                 part="candidates")
    rank = {rid: i for i, rid in enumerate(state.reviewer_ids)}
    # reviewer order, so each meta-review's prompt is stable
    return Reviewed({c.id: tuple(sorted(c.reviews, key=lambda r: rank.get(r.reviewer_id, len(rank))))
                     for c in live(state)})


async def meta_review_candidates(state: RunState) -> None:
    """A meta-review of each live candidate's reviews."""
    jobs = [(c.id, (lambda c=c: state.style.meta_review(state.ctx, c.proposal, c.reviews)))
            for c in live(state) if c.reviews and c.meta_review is None]
    by_id = {c.id: c for c in state.run.candidates}
    await gather(state.recorder, "review", jobs, lambda cid, m: setattr(by_id[cid], "meta_review", m),
                 lambda m: f"mean score {m.score}", serial=state.serial, part="candidates")
