"""Several candidates per neighbourhood: the stages a plan with `candidates` > 1 runs.

The profiles, the drafts and the reviewers are shared; each candidate is one merge of
the drafts led by its own `Lead` (run/leads.py, run/candidate_writing.py) with its own
seed. Near-duplicates are merged before anyone reviews them, so no call is spent on a
copy. Reviewers are chosen once, against the mean of the live candidates (not the
first: reviewers close to one candidate would lean the reviewers' scores, a ranking
signal, towards it), and every live candidate is reviewed by the same reviewers, with a
meta-review each. The ranking (run/tournament.py) then copies the best candidate to the
run's proposal, reviews and meta-review, so everything downstream works unchanged.

Stage functions take the run's `Simulation`; what they leave each other is kept on
`CandidateState` (`state(sim)`), and on the run's own records (`run.candidates`,
`run.tournament`), which are saved when each stage ends.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from ..errors import RTError
from ..fiveq import QUESTION_KEYS
from ..types import Candidate, Tournament
from . import leads, provenance
from .agents import gather
from .candidate_writing import lead_first, seeded, writer_for
from .evaluate import content_text
from .steps import NEUTRAL_REVIEWER

# Two candidates whose answers have a mean cosine (question by question, with the run's
# embedder) of at least this are one idea said twice: the later is merged into the
# earlier. Measured with MiniLM (bench/bench_merge_threshold.py; docs/PERFORMANCE.md,
# "Several candidates"): the same five answers reworded sit at 0.83-0.84, two ideas in
# one sentence frame that differ only in their two concepts at 0.66-0.74, unrelated
# ideas at 0.13-0.30. 0.80 merges a rewording and keeps concept-level variants apart.
MERGE_THRESHOLD = 0.80


@dataclass
class CandidateState:
    lead_texts: dict[str, str] = field(default_factory=dict)  # candidate id -> lead in words
    personas: dict[str, str] = field(default_factory=dict)  # candidate id -> lead author's profile
    vectors: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # id -> q -> unit vector
    fluency: dict[str, float] = field(default_factory=dict)  # id -> mean token log-probability


def state(sim) -> CandidateState:
    """The candidates' working state on this simulation (made on first use)."""
    if getattr(sim, "candidate_state", None) is None:
        sim.candidate_state = CandidateState()
    return sim.candidate_state


def live(sim) -> list[Candidate]:
    """Candidates written and not merged into another, in order."""
    return [c for c in sim.run.candidates
            if not c.merged_into and any(c.proposal.answers().values())]


# -- leads ---------------------------------------------------------------------------------
def _neighbourhood(sim) -> leads.Neighbourhood:
    corpus, cfg = sim.store.corpus, sim.config
    authors = corpus.get_researchers(cfg.researcher_ids) if sim.mode.reads_profiles else []
    papers = corpus.get_papers(cfg.paper_ids)
    g = sim.ctx.grounding
    fields = g.fields or corpus.researcher_fields(cfg.researcher_ids)
    concepts = g.concepts  # key concepts, ranked with the run's embedder (no model call)
    return leads.Neighbourhood(list(authors), list(papers), list(fields), dict(concepts))


async def assign_leads(sim) -> None:
    """One candidate record per requested candidate, each with its lead and seed."""
    if sim.run.candidates:
        return
    hood = await asyncio.to_thread(_neighbourhood, sim)
    names = {r.id: r.name for r in hood.authors}
    titles = {p.id: p.title for p in hood.papers}
    st = state(sim)
    for i, lead in enumerate(leads.assign(sim.config.candidates, hood)):
        c = Candidate(id=f"c{i + 1}", lead=lead, seed=leads.seed_of(i))
        st.lead_texts[c.id] = leads.describe(lead, names, sim.ctx.grounding, titles)
        sim.run.candidates.append(c)


# -- writing -------------------------------------------------------------------------------
async def write_candidates(sim) -> None:
    """Each candidate merged from the shared drafts by its lead (progress under 'write')."""
    drafts = sim.ordered_drafts()
    if not drafts:
        raise RTError("no author produced a draft", "See the errors above for each author.")
    st, write = state(sim), writer_for(sim.client.settings.style)
    g = sim.ctx.grounding

    def job(c: Candidate):
        async def run():
            ctx, client = seeded(sim.ctx, c.seed)
            author = c.lead.author_ids[0] if c.lead.author_ids else ""
            persona = sim.run.profiles[author].text if author in sim.run.profiles else ""
            proposal = await write(ctx, lead_first(drafts, c.lead.author_ids),
                                   st.lead_texts.get(c.id, ""), persona, g, c.lead)
            if client.logprobs:
                st.fluency[c.id] = float(np.mean(client.logprobs))
            # Labels out before anything reads the answers (the merge's embedding, the
            # reviewers, the judge, the novelty check), by the plain aggregate's rule.
            return provenance.checked(sim, proposal, f"The editor of candidate {c.id}")
        return run

    def keep(cid: str, written) -> None:
        by_id[cid].proposal, by_id[cid].cited = written

    todo = [c for c in sim.run.candidates if not any(c.proposal.answers().values())]
    by_id = {c.id: c for c in sim.run.candidates}
    await gather(sim.recorder, "write", [(c.id, job(c)) for c in todo], keep,
                 lambda written: written[0].q1, serial=sim.serial)
    if not live(sim):
        raise RTError("no candidate was written", "See the errors above for each candidate.")


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


async def merge(sim) -> None:
    """Merge near-duplicate candidates; the tournament record says how many and at what
    threshold."""
    cands = live(sim)
    tokens = sim.embedder.tokens
    vectors = await asyncio.to_thread(answer_vectors, sim.embedder, cands)
    sim.run.usage.prompt_tokens += sim.embedder.tokens - tokens
    state(sim).vectors = vectors
    merged = near_duplicates([c.id for c in cands], vectors, MERGE_THRESHOLD)
    for c in cands:
        if c.id in merged:
            c.merged_into = merged[c.id]
    t = sim.run.tournament or Tournament()
    t.merged, t.merge_threshold = len(merged), MERGE_THRESHOLD
    sim.run.tournament = t
    sim.recorder.emit("write", "merge", 1, 1, "done",
                      f"{len(merged)} near-duplicate{'s' * (len(merged) != 1)} merged")


# -- reviewing -----------------------------------------------------------------------------
def mean_vector(vectors: dict[str, dict[str, np.ndarray]], cands: list[Candidate]) -> np.ndarray:
    """The live candidates' mean, each candidate the mean of its answers' vectors (the
    merge embedded them already, so choosing costs no second pass of the embedder)."""
    def unit(v: np.ndarray) -> np.ndarray:
        return v / (np.linalg.norm(v) or 1.0)
    return unit(np.mean([unit(np.mean(list(vectors[c.id].values()), axis=0))
                         for c in cands if vectors.get(c.id)], axis=0))


async def choose_reviewers(sim) -> None:
    """Reviewers chosen once, against the mean of the live candidates' vectors."""
    if not sim.mode.reads_profiles:
        sim.reviewer_ids = [NEUTRAL_REVIEWER]
        return
    if sim.candidates_error is not None:
        raise sim.candidates_error

    def choose():
        return sim.reviewers.choose_reviewers(live(sim)[0].proposal, sim.candidate_vectors,
                                              query=mean_vector(state(sim).vectors, live(sim)))

    tokens = sim.embedder.tokens
    sim.reviewer_ids = await asyncio.to_thread(choose)
    sim.run.usage.prompt_tokens += sim.embedder.tokens - tokens


async def review_candidates(sim) -> None:
    """Every live candidate reviewed by every chosen reviewer (progress under 'review')."""
    papers = sim.reader.writing_papers() if sim.mode.reads_papers else []
    personas = {r: (sim.run.profiles[r].text if r in sim.run.profiles else None)
                for r in sim.reviewer_ids}
    jobs, reviewed = [], {}  # reviewed: each job's agent name -> the candidate it reviews
    for c in live(sim):
        done = {r.reviewer_id for r in c.reviews}
        for rid in sim.reviewer_ids:
            if rid not in done:
                reviewed[f"{c.id}:{rid}"] = c
                jobs.append((f"{c.id}:{rid}", (lambda c=c, rid=rid: sim.style.review(
                    sim.ctx, rid, personas[rid], c.proposal, papers))))

    def keep(agent: str, rev) -> None:
        reviewed[agent].reviews.append(rev)

    await gather(sim.recorder, "review", jobs, keep, lambda r: f"score {r.score}", serial=sim.serial)
    rank = {rid: i for i, rid in enumerate(sim.reviewer_ids)}
    for c in live(sim):  # reviewer order, so each meta-review's prompt is stable
        c.reviews.sort(key=lambda r: rank.get(r.reviewer_id, len(rank)))


async def meta_review_candidates(sim) -> None:
    """A meta-review of each live candidate's reviews."""
    jobs = [(c.id, (lambda c=c: sim.style.meta_review(sim.ctx, c.proposal, c.reviews)))
            for c in live(sim) if c.reviews and c.meta_review is None]
    by_id = {c.id: c for c in sim.run.candidates}
    await gather(sim.recorder, "review", jobs, lambda cid, m: setattr(by_id[cid], "meta_review", m),
                 lambda m: f"mean score {m.score}", serial=sim.serial)
