"""What a base model's documents carry: papers and proposals cut to fit, the key
concepts of each chosen field, and the concept pairs that seed the question stems.

A 270M model cannot combine two fields unaided, so every stem-style document hands it
the material (run/styles/grounding.py computes it); this module only lays it out.
"""
from __future__ import annotations

import hashlib

from ... import fiveq
from ...text import clip, first_sentence
from ...types import Paper, Proposal
from .context import NO_PAPERS, StageContext
from .grounding import Grounding


def format_papers(papers: list[Paper]) -> str:
    """Titles and first sentences of at most five papers: a small model reads ~190 tok/s."""
    if not papers:
        return NO_PAPERS
    return "\n".join(f"- {clip(p.title, 110)}: {first_sentence(p.abstract, 160)}" for p in papers[:5])


def format_proposal(p: Proposal) -> str:
    return "\n".join(f"{q.number}. {clip(getattr(p, q.key), 220)}"
                     for q in fiveq.QUESTIONS if getattr(p, q.key))


def grounding_of(ctx: StageContext, papers: list[Paper]) -> Grounding:
    """The run's material (set by the simulation, with the run's embedder), or, for a
    stage called on its own, one made from these papers with no embedder: no concepts."""
    g = getattr(ctx, "grounding", None)
    return g if g is not None else Grounding(papers)


def concepts_block(g: Grounding) -> str:
    return "\n".join(f"Key concepts in {g.name(f)}: {'; '.join(cs)}."
                     for f, cs in g.concepts.items() if cs)


def fields_phrase(g: Grounding) -> str:
    names = [g.name(f) for f in g.fields]
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def concept_pairs(g: Grounding, offset: int = 0) -> list[tuple[str, str]]:
    """Endless-enough list of (concept of one field, concept of another), rotating through
    the field pairs and each field's concepts from `offset`, so drafts and questions differ."""
    fields = [f for f, cs in g.concepts.items() if cs]
    if not fields:
        return []
    if len(fields) == 1:
        cs = g.concepts[fields[0]]
        return [(cs[(offset + i) % len(cs)], cs[(offset + i + 1) % len(cs)]) for i in range(12)]
    field_pairs = [(a, b) for i, a in enumerate(fields) for b in fields[i + 1:]]
    out = []
    for i in range(12):
        a, b = field_pairs[(offset + i) % len(field_pairs)]
        if (offset + i) % 2:  # alternate which field leads
            a, b = b, a
        ca, cb = g.concepts[a], g.concepts[b]
        out.append((ca[(offset + i) % len(ca)], cb[(offset + i // 2) % len(cb)]))
    return out


def every_field_pairs(g: Grounding, offset: int = 0) -> list[tuple[str, str]]:
    """Like concept_pairs, but the second slot names a concept of every other field
    ("stellar spectra and police records"), so a question seeded with it names them all.
    Used for Q1 when three or more fields are chosen: one pair cannot name them all."""
    fields = [f for f, cs in g.concepts.items() if cs]
    if len(fields) < 3:
        return concept_pairs(g, offset)
    out = []
    for i in range(12):
        k = (offset + i) % len(fields)
        order = fields[k:] + fields[:k]
        picks = [g.concepts[f][(offset + i) % len(g.concepts[f])] for f in order]
        rest = picks[1:]
        out.append((picks[0], ", ".join(rest[:-1]) + " and " + rest[-1]))
    return out


def offset_of(text: str) -> int:
    """A stable offset into the concept pairs for one author, so drafts differ."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:6], 16)
