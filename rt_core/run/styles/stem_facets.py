"""The base-model stages' proposals and reviews from facets (run/facets/), as records.

A base model's proposal is written from one pairing of the neighbourhood (the run's own
proposal from the best, candidate i from the i-th distinct one, each author's draft from
one chosen by their id), and reviewed by rubric: the model neither plans nor judges. When
the papers share no usable facet the stem stages write as before, and the run says why
once (the note goes with the client's notes onto the run).
"""
from __future__ import annotations

import zlib

from ...types import Ground, MetaReview, Paper, Proposal, Review
from ..facets import rubric
from ..facets.write import write
from .context import StageContext
from .grounding import Grounding, chosen_fields


def note_once(ctx: StageContext, text: str) -> None:
    notes = getattr(ctx.client, "notes", None)
    if text and notes is not None and text not in notes:
        notes.append(text)


def planned(ctx: StageContext, g: Grounding, index: int | None = None,
            author_id: str = "") -> Proposal | None:
    """The proposal of one pairing (`index`: a candidate's; else by the author's id; else
    the best), or None when there is no pairing (the caller writes by stems)."""
    if (g.embedder is None and g.store is None) or not g.papers:
        return None  # nothing to pair: a stage called on its own, or `self` (reads no paper)
    plans = g.pairings
    note_once(ctx, plans.note)
    if not plans:
        return None
    if index is None:
        index = zlib.crc32(author_id.encode("utf-8")) % min(3, len(plans.ranked)) if author_id else 0
    # The authors' own papers too: a pairing may quote one, and a revision round (which
    # titles the same pool) rewrote Q2 only to add the title round 0 had left out.
    titles = {p.id: p.title for p in [*g.facet_pool, *g.papers]}
    w = write(plans.pick(index), g.name, titles)
    grounds = {k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs] for k, fs in w.grounds}
    return Proposal(**dict(w.answers), grounds=grounds, author_id=author_id)


def reviewer_field(g: Grounding, reviewer_id: str) -> tuple[str, list[Paper]]:
    """The reviewer's primary field (of their papers) and their papers, from the store."""
    store = g.store
    if store is None:
        return "", []
    if not store.corpus.researcher_exists(reviewer_id):
        return "", []
    papers = store.corpus.publications(reviewer_id)
    fields = chosen_fields(papers)
    return (fields[0] if fields else ""), papers


def by_rubric(g: Grounding, reviewer_id: str, proposal: Proposal,
              prior: list[str] | None) -> Review:
    """A review whose every sentence is one rubric check's outcome, and whose score is the
    rubric's, said so in `basis`."""
    field, own = reviewer_field(g, reviewer_id)
    grounded = {gr.paper_id for gs in proposal.grounds.values() for gr in gs}
    compared = [p for p in own if p.id not in grounded]
    near = rubric.nearest(proposal.q1, compared, list(prior or []), g.embedder)
    r = rubric.check(proposal, reviewer_id, field, g.fields, g.name, near,
                     rubric.fit_of(proposal, g.pairings))
    good, bad = rubric.sections(r, g.name(field) if field else "")
    return Review(reviewer_id, good, bad, r.score, rubric={c.key: c.holds for c in r.checks},
                  basis=r.basis)


def meta_by_rubric(reviews: list[Review]) -> MetaReview | None:
    """Agreement on the rubric's checks, or None when a review was not by rubric."""
    if not reviews or not all(r.rubric for r in reviews):
        return None
    good, bad = rubric.agreement({r.reviewer_id: r.rubric for r in reviews})
    scores = [r.score for r in reviews if r.score is not None]
    mean = round(sum(scores) / len(scores), 2) if scores else None
    return MetaReview(good, bad or "- No check failed for any reviewer.", mean)
