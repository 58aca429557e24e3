"""Facets found once per paper: read from the store (m023), the missing ones found and kept.

Finding a paper's facets embeds its sentences (about 4 per bundled summary); kept, a later
run that reads the same paper pays nothing. Facets are kept per `extract.VERSION`, so a
change to how they are found recomputes them instead of reading stale ones.
"""
from __future__ import annotations

from ...types import Paper
from .extract import VERSION, PaperFacets, extract


def facets_of(papers: list[Paper], store=None, embedder=None) -> dict[str, PaperFacets]:
    """Each paper's facets by its id, from the store where kept, else found (and kept).
    Sentences are chosen by cue words and position: on the labelled papers, adding MiniLM
    found more facets but fewer right ones (tests/test_facets.py); the `embedder` only
    picks the topic phrase of a stated problem."""
    kept = store.facets.get([p.id for p in papers], VERSION) if store is not None else {}
    out = {pid: PaperFacets.from_dict(doc) for pid, doc in kept.items()}
    todo = [p for p in papers if p.id not in out]
    if todo:
        found = {p.id: extract(p, embedder) for p in todo}
        if store is not None:
            store.facets.put(VERSION, {pid: pf.to_dict() for pid, pf in found.items()})
        out.update(found)
    return out


def by_field(papers: list[Paper], found: dict[str, PaperFacets]) -> dict[str, list[PaperFacets]]:
    """The papers' facets grouped by each paper's primary field, in the papers' order."""
    out: dict[str, list[PaperFacets]] = {}
    for p in papers:
        if p.fields and p.id in found:
            out.setdefault(p.fields[0], []).append(found[p.id])
    return out


def notes_of(found: dict[str, PaperFacets]) -> list[str]:
    """Why some papers gave no facets (e.g. no abstract), one sentence each."""
    return [pf.note for pf in found.values() if pf.note]
