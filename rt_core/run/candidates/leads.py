"""What each of several candidates leads with, decided from the neighbourhood alone.

Sampling the same prompt n times gives n versions of one idea. So the candidates of a
run differ by design: candidate i leads with one author (round-robin over the authors),
one pair of fields (round-robin over every pair of the chosen fields) and one concept
of each of those fields (the grounding's key concepts, moving to the next concept each
time the field pairs come round again), plus the chosen papers of its author or fields.
The assignment is deterministic, so a re-run writes the same prompts and is answered
from the cache.

A lead is then said to the model in the way it can use it (run/candidates/writing.py):
in words in an instruction model's prompt, as material for a base model (the lead
author's profile and draft first, the lead concepts first among the key concepts).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...types import Lead, Paper, Researcher
from ..styles.grounding import Grounding

SEED_STEP = 1000  # candidate i samples with seeds from i * SEED_STEP: no two share one


@dataclass
class Neighbourhood:
    """What leads are drawn from: the authors (in the run's order), the chosen papers,
    the chosen fields (most common first) and their key concepts."""
    authors: list[Researcher] = field(default_factory=list)
    papers: list[Paper] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    concepts: dict[str, list[str]] = field(default_factory=dict)


def field_pairs(fields: list[str]) -> list[tuple[str, ...]]:
    """Every pair of the chosen fields, in the fields' order; one field alone when only
    one is chosen; none when there are none."""
    if len(fields) < 2:
        return [tuple(fields)] if fields else []
    return [(a, b) for i, a in enumerate(fields) for b in fields[i + 1:]]


def assign(n: int, hood: Neighbourhood) -> list[Lead]:
    """n leads: author i mod M, field pair i mod P, and in each lead field its concept
    number (i div P), so that a field pair that comes round again brings new concepts."""
    pairs = field_pairs(hood.fields)
    out = []
    for i in range(n):
        author = hood.authors[i % len(hood.authors)] if hood.authors else None
        lead_fields = list(pairs[i % len(pairs)]) if pairs else []
        turn = i // len(pairs) if pairs else i
        concepts = []
        for f in lead_fields:
            cs = hood.concepts.get(f) or []
            if cs:
                concepts.append(cs[turn % len(cs)])
        out.append(Lead(author_ids=[author.id] if author else [], fields=lead_fields,
                        concepts=concepts, paper_ids=_lead_papers(hood.papers, author, lead_fields)))
    return out


def _lead_papers(papers: list[Paper], author: Researcher | None, fields: list[str],
                 limit: int = 2) -> list[str]:
    """The chosen papers the lead author wrote, else those of the lead fields."""
    mine = [p.id for p in papers if author is not None and
            (p.id in author.publication_ids or author.name in p.authors)]
    if mine:
        return mine[:limit]
    return [p.id for p in papers if p.fields and p.fields[0] in fields][:limit]


def seed_of(index: int) -> int:
    """The seed base of the candidate at `index` (0-based): c1 samples from 1000 on."""
    return (index + 1) * SEED_STEP


def describe(lead: Lead, names: dict[str, str], g: Grounding, titles: dict[str, str]) -> str:
    """The lead in words, for an instruction model's prompt."""
    parts = []
    if lead.author_ids:
        who = " and ".join(names.get(a, a) for a in lead.author_ids)
        parts.append(f"build it around the draft of {who} (Draft 1)")
    if len(lead.fields) >= 2:
        parts.append(f"join {g.name(lead.fields[0])} with {g.name(lead.fields[1])}")
    elif lead.fields:
        parts.append(f"stay rooted in {g.name(lead.fields[0])}")
    if lead.concepts:
        parts.append("make " + " and ".join(f"'{c}'" for c in lead.concepts) + " the heart of the idea")
    if lead.paper_ids:
        parts.append("start from " + "; ".join(f"'{titles.get(p, p)}'" for p in lead.paper_ids))
    return ("; ".join(parts) + ".") if parts else "follow the drafts' strongest idea."


def led_grounding(g: Grounding, lead: Lead) -> Grounding:
    """The run's grounding with the lead's fields first and, in each, its lead concept
    first: a base model's document lists them first, and the seeded stems start from
    the first pair, so the lead is what the model builds on."""
    concepts = g.concepts
    order = [f for f in lead.fields if f in concepts] + [f for f in concepts if f not in lead.fields]
    led = {}
    for f in order:
        cs = list(concepts[f])
        first = [c for c in lead.concepts if c in cs]
        led[f] = first + [c for c in cs if c not in first]
    return Grounding(g.papers, g.background, g.field_names, g.embedder, g.k, led,  # concepts given
                     store=g.store, _pairings=g._pairings)
