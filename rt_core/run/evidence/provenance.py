"""Where each answer came from: which authors' drafts and which papers it draws on most.

Attribution is by embedding, with the run's own embedder: an answer against the same
answer of every author's draft, and against the title and abstract of every paper in
reach (the run's chosen papers and the papers each author's profile was read from).
A cosine says how close two texts are, not that one was copied from the other; it is
reported as such (`Provenance.method` names the embedder). An instruction model's
aggregator (or, with several candidates, the editor of the candidate that became the
run's proposal) also cites its drafts by label (run/styles/citations.py); those sources carry
`cited=True`, for as long as a revision round leaves the answer as it was. Reviews get
the same treatment against the reviewer's own papers.

These are plan stages (run/pipeline/plan.py) after the writing and after the reviews: embedding
only, never a model call, and every vector is cached in the store, so a re-run is cheap.
"""
from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...text import first_sentence
from ...types import QUESTION_KEYS, Paper, Proposal, Provenance, Review, Source
from ..styles.citations import take_citations
from .evaluate import content_text

if TYPE_CHECKING:
    from ...models.embed import Embedder
    from ..pipeline.state import RunState

TOP_PAPERS = 5  # papers kept per answer (every author's draft is kept)
TOP_REVIEW_PAPERS = 3


def paper_text(p: Paper) -> str:
    """A paper's gist: the same text reviewer choice embeds (run/people/reviewers.py), so the
    vectors of papers it has embedded come from the store's cache."""
    return f"{p.title}. {first_sentence(p.abstract, 120)}"


class Vectors:
    """Every text of a stage embedded in one call (one batch, one cache read)."""

    def __init__(self, embedder: Embedder, texts: list[str]):
        unique = list(dict.fromkeys(t for t in texts if t.strip()))
        vecs = embedder.encode(unique) if unique else []
        self.of = {t: vecs[i] for i, t in enumerate(unique)}


def rank(vectors: Vectors, text: str, candidates: list[tuple[str, str, str]],
         cited: set[tuple[str, str]] = frozenset()) -> list[Source]:
    """(kind, id, text) candidates scored by cosine with `text`, best first."""
    candidates = [c for c in candidates if c[2].strip()]
    if not text.strip() or not candidates:
        return [Source(k, i, 0.0, True) for k, i in sorted(cited)]
    q = vectors.of[text]
    out = [Source(k, i, round(float(vectors.of[t] @ q), 4), (k, i) in cited) for k, i, t in candidates]
    return sorted(out, key=lambda s: (-s.score, s.kind, s.id))


def _keep(sources: list[Source], papers: int) -> list[Source]:
    """Every author, the best `papers` papers, and anything cited; best first."""
    kept, n = [], 0
    for s in sources:
        if s.kind == "paper" and not s.cited:
            n += 1
            if n > papers:
                continue
        kept.append(s)
    return kept


def answer_sources(embedder: Embedder, proposal: Proposal, papers: list[Paper],
                   cited: Provenance | None = None) -> dict[str, list[Source]]:
    """Per question, the drafts and papers the answer is closest to, best first."""
    out: dict[str, list[Source]] = {}
    paper_cands = [("paper", p.id, paper_text(p)) for p in papers]
    answers = {k: content_text(getattr(proposal, k)) for k in QUESTION_KEYS}
    drafts = {k: [("author", d.author_id, content_text(getattr(d, k))) for d in proposal.drafts
                  if d.author_id] for k in QUESTION_KEYS}
    vectors = Vectors(embedder, [*answers.values(), *(t for ds in drafts.values() for *_, t in ds),
                                 *(t for *_, t in paper_cands)])
    for key, answer in answers.items():
        if not answer:
            continue
        marks = {(s.kind, s.id) for s in (cited.answers.get(key, []) if cited else [])}
        # A proposal written from the papers' sentences (run/facets/) cites their papers.
        marks |= {("paper", g.paper_id) for g in proposal.grounds.get(key, [])}
        out[key] = _keep(rank(vectors, answer, drafts[key] + paper_cands, marks), TOP_PAPERS)
    return out


def review_sources(embedder: Embedder, reviews: list[Review],
                   papers_of: dict[str, list[Paper]]) -> dict[str, list[Source]]:
    """Per reviewer, which of their own papers their review is closest to."""
    out: dict[str, list[Source]] = {}
    texts = {r.reviewer_id: f"{r.strengths}\n{r.weaknesses}".strip() for r in reviews}
    own = {rid: [("paper", p.id, paper_text(p)) for p in papers_of.get(rid, [])] for rid in texts}
    vectors = Vectors(embedder, [*texts.values(), *(t for ps in own.values() for *_, t in ps)])
    for rid, text in texts.items():
        if text and own[rid]:
            out[rid] = rank(vectors, text, own[rid])[:TOP_REVIEW_PAPERS]
    return out


# -- the stages -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attributed:
    """What `provenance` and `review_provenance` return: where the answers and the reviews
    came from, folded into the run by the runner (run/pipeline/state.py)."""
    provenance: Provenance

    def fold_into(self, state: RunState) -> None:
        state.run.provenance = self.provenance


def checked(state: RunState, proposal: Proposal,
            who: str = "The aggregator") -> tuple[Proposal, Provenance | None]:
    """A merged proposal with an instruction model's citation labels checked and taken
    out, and what it cited (None: a base model, or a single draft, cites nothing). The
    one rule for the plain aggregate and for every candidate's merge, applied as soon as
    the merge returns, before anything reads the answers."""
    if not state.client.traits.follows_instructions or not proposal.drafts or len(proposal.drafts) < 2:
        return proposal, None
    return take_citations(proposal, state.client.notes, who)


def still_cited(run) -> Provenance | None:
    """The citations that still hold for the answers the run shows. They were made for
    the first proposal's text (round 0 when the run was revised); a revision round's
    rewrite was not written from the labelled drafts, so a rewritten answer keeps only
    what embedding measures, while an answer left as it was keeps its citations. Only
    `cited` sources count: a resumed provenance stage reads its own earlier output."""
    prov = run.provenance
    if prov is None or run.proposal is None:
        return None
    first = run.rounds[0].proposal if run.rounds else run.proposal
    answers = {}
    for key, sources in prov.answers.items():
        kept = [s for s in sources if s.cited]
        if kept and getattr(first, key) == getattr(run.proposal, key):
            answers[key] = kept
    return Provenance(answers=answers, reviews=prov.reviews)


def _papers_in_reach(state: RunState, researcher_ids: list[str], grounds: list[str] = ()) -> list[Paper]:
    ids = [p.id for p in state.reader.writing_papers()] if state.mode.reads_papers else []
    ids += list(grounds)
    for rid in researcher_ids:
        prof = state.run.profiles.get(rid)
        ids += prof.paper_ids if prof else []
    ids = list(dict.fromkeys(i for i in ids if i != state.config.reference_paper_id))
    return state.store.corpus.get_papers(ids) if ids else []


def _measure(state: RunState, fn) -> object:
    tokens = state.embedder.tokens
    try:
        return fn()
    finally:
        state.recorder.meter(state.embedder.tokens - tokens)


async def attribute_answers(state: RunState) -> Attributed | None:
    proposal = state.run.proposal
    if proposal is None:
        return None
    papers = _papers_in_reach(state, [d.author_id for d in proposal.drafts if d.author_id],
                              [g.paper_id for gs in proposal.grounds.values() for g in gs])
    cited = still_cited(state.run)
    answers = await asyncio.to_thread(
        _measure, state, lambda: answer_sources(state.embedder, proposal, papers, cited))
    reviews = cited.reviews if cited else {}
    return Attributed(Provenance(answers=answers, reviews=reviews, method=state.embedder.name))


async def attribute_reviews(state: RunState) -> Attributed | None:
    reviews = [r for r in state.run.reviews if r.reviewer_id in state.run.profiles]
    if not reviews:
        return None
    ids = {r.reviewer_id: state.run.profiles[r.reviewer_id].paper_ids for r in reviews}
    found = {p.id: p for p in state.store.corpus.get_papers(sorted({i for v in ids.values() for i in v}))}
    papers_of = {rid: [found[i] for i in pids if i in found] for rid, pids in ids.items()}
    sources = await asyncio.to_thread(
        _measure, state, lambda: review_sources(state.embedder, reviews, papers_of))
    prov = state.run.provenance or Provenance(method=state.embedder.name)
    return Attributed(dataclasses.replace(prov, reviews=sources))
