"""Facets found once per paper: read from the store (m023), the missing ones found and kept.

Finding a paper's facets embeds its sentences (about 4 per bundled summary); kept, a later
run that reads the same paper pays nothing. Facets are kept per `extract.VERSION` (a digest
of the rules' source), so a change to how they are found recomputes them instead of reading
stale ones. The bundled papers' facets also ship with the app (bundle.py), so the first run
in a fresh data folder does not find them either: it would take about twice as long as
every later run, and the estimate learns one scale from them all.
"""
from __future__ import annotations

from ...types import Paper
from . import bundle
from . import extract as _extract
from .extract import PaperFacets


def facets_of(papers: list[Paper], store=None, embedder=None) -> dict[str, PaperFacets]:
    """Each paper's facets by its id, from the store where kept, else from the shipped
    file (bundle.py) when still right for this paper and embedder, else found; both kept.
    Sentences are chosen by cue words and position: on the labelled papers, adding MiniLM
    was less precise on two sets of three and no better as a tie-break (tests/test_facets.py,
    README); the `embedder` only picks the topic phrase of a stated problem."""
    version = _extract.VERSION  # read at each call: the rules' version, not the one at import
    kept = store.facets.get([p.id for p in papers], version) if store is not None else {}
    out = {pid: PaperFacets.from_dict(doc) for pid, doc in kept.items()}
    todo = [p for p in papers if p.id not in out]
    shipped = bundle.usable(todo, getattr(embedder, "name", None)) if todo else {}
    if shipped:
        if store is not None:  # later runs read the store, as for any paper met before
            store.facets.put(version, shipped)
        out.update({pid: PaperFacets.from_dict(doc) for pid, doc in shipped.items()})
        todo = [p for p in todo if p.id not in shipped]
    if todo:
        found = {p.id: _extract.extract(p, embedder) for p in todo}
        if store is not None:
            store.facets.put(version, {pid: pf.to_dict() for pid, pf in found.items()})
        out.update(found)
    return out


def by_field(papers: list[Paper], found: dict[str, PaperFacets]) -> dict[str, list[PaperFacets]]:
    """The papers' facets grouped by each paper's primary field, in the papers' order."""
    out: dict[str, list[PaperFacets]] = {}
    for p in papers:
        if p.fields and p.id in found:
            out.setdefault(p.fields[0], []).append(found[p.id])
    return out


def one_note(papers: list[Paper], found: dict[str, PaperFacets], none_note: str = "") -> str:
    """What the run says about facets it could not use, as ONE sentence ("" when nothing
    went wrong): the papers without an abstract, named together (not a sentence each), and
    `none_note`, why no two fields could be paired (run/facets/pair.py), after them."""
    bare = [p.title for p in papers if p.id in found and found[p.id].note]
    if not bare:
        return none_note
    named = [f"“{t}”" for t in bare[:3]]
    more = len(bare) - len(named)
    if more:
        named.append(f"{more} more paper{'s' * (more > 1)}")
    who = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    said = f"{who} {'has' if len(bare) == 1 else 'have'} no abstract to find facets in"
    if not none_note:
        return f"{said}, so the proposal is written from the other papers."
    return f"{said}; {none_note[:1].lower()}{none_note[1:]}"
