"""Novelty that names its sources: an idea's problem (Q1) and method (Q5), each matched
against the nearest papers, with a verdict that only a retrieved paper can support.

The threshold (`THRESHOLD`) is a cosine under the bundled MiniLM, measured on the shipped
store by bench/bench_novelty_threshold.py: a real paper's own Q1 scores 0.63-0.81
against its own title and abstract (median 0.68) and its own Q5 0.43-0.80 (median 0.72),
while the 95th percentile of the other 138 papers stays at or below 0.40 (Q1) and 0.48
(Q5). 0.62 flags every paper's own Q1 and 8 of 10 own Q5s, and no paper outside the top
5% of unrelated ones; the papers above it that are not the target itself are its close
neighbours (its references, its authors' earlier work), which is what "close prior work"
should catch. With another embedder the scale differs, and the Novelty's notes say so.
"""
from __future__ import annotations

import asyncio

from ...config import LOCAL_EMBEDDER
from ...models.client import run_async
from ...types import FacetNovelty, NearPaper, Novelty, Proposal
from ..styles.context import StageContext
from . import nearest
from .explain import FACET_NAMES, explain
from .online import NAMES, OnlineLiterature

THRESHOLD = 0.62
FACETS = ("q1", "q5")
CLOSE = "close prior work"
NO_MATCH = "no close match found"
ALL_FAILED = "every online source failed"  # the one note that says no source answered


def verdict(papers: list[NearPaper], searched: int, threshold: float = THRESHOLD) -> str:
    """'close prior work: "<title>" (<year>)' naming the nearest retrieved paper when it
    reaches the threshold; else 'no close match found in N papers searched'."""
    if papers and papers[0].similarity >= threshold:
        top = papers[0]
        return f'{CLOSE}: "{top.title}"' + (f" ({top.year})" if top.year else "")
    return f"{NO_MATCH} in {searched} paper{'s' if searched != 1 else ''} searched"


def is_close(facet: FacetNovelty) -> bool:
    return facet.verdict.startswith(CLOSE)


def _search(store, embedder, literature: OnlineLiterature | None, facet: str,
            text: str) -> tuple[FacetNovelty, list[str], str]:
    """One facet's nearest papers and verdict (no model call); its notes; the online
    source that answered ('' for none)."""
    found, searched = nearest.in_store(store, embedder, text)
    notes: list[str] = []
    source = ""
    online: list[NearPaper] = []
    if literature is not None:
        answer = literature.search(text)
        notes += [f"{FACET_NAMES[facet]}: {n}" for n in answer.notes]
        online = nearest.online_papers(embedder, text, answer.papers, answer.source)
        searched += len(answer.papers)
        source = answer.source
    papers = nearest.merged(found, online)
    return FacetNovelty(facet, papers, verdict(papers, searched), searched), notes, source


async def assess_async(proposal: Proposal, store, embedder,
                       literature: OnlineLiterature | None = None,
                       ctx: StageContext | None = None) -> Novelty:
    """The Novelty of one proposal. `literature` None: the store is the literature.
    `ctx`: the model that explains each facet (asked only when it is an instruction model)."""
    novelty = Novelty(sources=["store"], online=False, threshold=THRESHOLD)
    answered: list[str] = []
    for facet in FACETS:
        text = nearest.facet_text(getattr(proposal, facet) or "")
        if not text:
            novelty.facets.append(FacetNovelty(facet, [], verdict([], 0), 0))
            novelty.notes.append(f"the proposal has no {FACET_NAMES[facet]} (Q{facet[1]}) to check")
            continue
        result, notes, source = await asyncio.to_thread(_search, store, embedder, literature,
                                                        facet, text)
        novelty.notes += notes
        if source:
            answered.append(source)
        if ctx is not None:
            result.explanation, note = await explain(ctx, facet, text, result.nearest)
            if note:
                novelty.notes.append(note)
        novelty.facets.append(result)
    novelty.sources += [s for s in NAMES if s in answered]
    novelty.online = bool(answered)
    novelty.notes += _scope_notes(literature, answered, embedder.name)
    novelty.warning = _all_failed_note(literature)
    return novelty


def _all_failed_note(literature: OnlineLiterature | None) -> str:
    """The note that no online source answered, with their errors ('' when one did)."""
    if literature is None or not literature.all_failed():
        return ""
    errors = "; ".join(f"{b.name}: {b.last_error}" for b in literature.breakers.values())
    return f"{ALL_FAILED}, so the store is the literature ({errors})"


def _scope_notes(literature: OnlineLiterature | None, answered: list[str], embedder: str) -> list[str]:
    notes = []
    if literature is None:
        notes.append("offline: the store is the literature (no online source was asked)")
    elif literature.all_failed():
        notes.append(_all_failed_note(literature))
    elif not answered:
        notes.append("no online source found a paper, so the store is the literature")
    if embedder != LOCAL_EMBEDDER:
        notes.append(f"the threshold {THRESHOLD} was measured with {LOCAL_EMBEDDER}; "
                     f"similarities from {embedder} may sit on another scale")
    return notes


def assess(proposal: Proposal, store, embedder, literature: OnlineLiterature | None = None,
           ctx: StageContext | None = None) -> Novelty:
    """`assess_async`, for callers without an event loop (the CLI, scripts)."""
    return run_async(assess_async(proposal, store, embedder, literature, ctx))
