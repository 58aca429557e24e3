"""A run's provenance and credit as export text: who and what each answer draws on, and
what each researcher (or paper) brought. JSON carries both already (they are fields of
the run record); this is the Markdown, with people by name and papers by title.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import fiveq
from ..types import Run, Source


def sources_named(run: Run) -> tuple[set[str], set[str]]:
    """(researcher ids, paper ids) the run's provenance and credit mention, and the papers a
    proposal or candidate written from facets rests on (its grounds may cite an author's own
    paper beyond the chosen ones: a card named one by its id)."""
    people: set[str] = set()
    papers: set[str] = set()
    prov = run.provenance
    lists = [*prov.answers.values(), *prov.reviews.values()] if prov else []
    for s in (s for sources in lists for s in sources):
        (people if s.kind == "author" else papers).add(s.id)
    if prov:
        people.update(prov.reviews)
    for c in run.credit:
        (people if c.kind == "author" else papers).add(c.id)
    for p in [run.proposal, *(c.proposal for c in run.candidates)]:
        if p is not None and p.grounds:
            papers.update(g.paper_id for grounds in p.grounds.values() for g in grounds)
    return people, papers


def source_label(s: Source, person: Callable[[str], str], paper: Callable[[str], str]) -> str:
    name = person(s.id) if s.kind == "author" else paper(s.id)
    return f"{name} ({s.score:.2f}{', cited' if s.cited else ''})"


def sources_markdown(run: Run, person: Callable[[str], str], paper: Callable[[str], str]) -> list[str]:
    lines: list[str] = []
    prov = run.provenance
    if prov and prov.answers:
        lines += ["## Where each answer came from", "",
                  f"_cosine similarity with {prov.method}; 'cited': the editor named the draft_", ""]
        for q in fiveq.QUESTIONS:
            found = prov.answers.get(q.key) or []
            if found:
                lines.append(f"- Q{q.number}: " + "; ".join(source_label(s, person, paper) for s in found))
        lines.append("")
    if prov and prov.reviews:
        lines += ["## What each review draws on (the reviewer's own papers)", ""]
        lines += [f"- {person(rid)}: " + "; ".join(source_label(s, person, paper) for s in found)
                  for rid, found in prov.reviews.items()]
        lines.append("")
    if run.credit:
        lines += ["## What each researcher brought (leave-one-out)", ""]
        for c in run.credit:
            score = "" if c.score_change is None else f"; review score {c.score_change:+.2f}"
            ref = "" if c.reference_change is None else f"; reference similarity {c.reference_change:+.3f}"
            low = min(c.moved.values()) if c.moved else 1.0
            lines.append(f"- {c.sentence} (lowest answer similarity {low:.2f}{score}{ref})")
        lines.append("")
    return lines


CREDIT_COLUMNS = ["kind", "name", "lowest_similarity", "moved_most", "score_change",
                  "reference_change", "sentence", "id", *[f"moved_{k}" for k in fiveq.QUESTION_KEYS]]


def credit_rows(run: Run, person: Callable[[str], str], paper: Callable[[str], str]) -> list[dict]:
    """One row per researcher (or paper) left out, by name, the id beside it."""
    rows = []
    for c in run.credit:
        key = min(c.moved, key=lambda q: (c.moved[q], q)) if c.moved else ""
        rows.append({"kind": c.kind, "name": person(c.id) if c.kind == "author" else paper(c.id),
                     "lowest_similarity": c.moved.get(key) if key else None,
                     "moved_most": key.upper(), "score_change": c.score_change,
                     "reference_change": c.reference_change, "sentence": c.sentence, "id": c.id,
                     **{f"moved_{k}": c.moved.get(k) for k in fiveq.QUESTION_KEYS}})
    return rows


def credit_csv(run: Run, person: Callable[[str], str], paper: Callable[[str], str]) -> bytes:
    import pandas as pd  # noqa: PLC0415  (slow)

    from ..study.results import to_csv  # noqa: PLC0415  (slow: pandas and the statistics)

    return to_csv(pd.DataFrame(credit_rows(run, person, paper), columns=CREDIT_COLUMNS))
