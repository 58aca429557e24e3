"""A brainstorm's ranking of candidates as Markdown, JSON and CSV, in the one order every
view of it shares.

The order is decided once, with the run (run/candidates/order.py), and the views and the
study's sampling read it from there; these exports are one view of it. What ranked
them is always said: a judge's pairwise verdicts, or signals measured on each candidate
when the run's model is a base model that cannot judge. Like export.py, names and titles
stand beside ids and CSV goes through the study export's writer (formulas neutralised).
"""
from __future__ import annotations

import json

from ..run.candidates.order import Ranked, merged, merged_count, ranked
from ..text import headline
from ..types import Candidate, FacetNovelty, Run
from .run import Names

FACET_NAMES = {"q1": "problem (Q1)", "q5": "method (Q5)"}
RANKING_COLUMNS = ["rank", "candidate", "title", "method", "score", "low", "high", "merged_into", "authors",
                   "fields", "concepts", "papers", "novelty_q1", "novelty_q5", "nearest_q1",
                   "nearest_q5", "signals", "author_ids", "paper_ids"]


def method_words(run: Run) -> str:
    """What the ranking is, in one line; never calls measured signals a judge's verdict."""
    t = run.tournament
    if t is None:
        return "not ranked: the run ended before its candidates were compared"
    if t.method == "signals":
        return ("ranked by measured signals (reviewers' scores, novelty, field coverage, fluency): "
                "the run's model is a base model and cannot judge")
    return (f"ranked by pairwise judgements of {t.judge_model or 'the run model'}, each pair judged "
            f"in both orders (Bradley-Terry fit, bootstrap intervals)")


def title_of(c: Candidate) -> str:
    """A candidate's title line: the question its problem (Q1) asks (text.headline)."""
    return headline(c.proposal.q1, 160) or f"(candidate {c.id} has no problem statement)"


def names_for(store, run: Run) -> Names:
    """Names for the run and for everything its candidates lead with or were reviewed by."""
    base = Names.for_runs(store, [run])
    people = {i for c in run.candidates for i in [*c.lead.author_ids, *(r.reviewer_id for r in c.reviews)]}
    papers = {i for c in run.candidates for i in c.lead.paper_ids}
    base.people.update(store.corpus.researcher_names(sorted(people - set(base.people))))
    base.papers.update(store.corpus.paper_titles(sorted(papers - set(base.papers))))
    return base


def facet(c: Candidate, key: str) -> FacetNovelty | None:
    if c.novelty is None:
        return None
    return next((f for f in c.novelty.facets if f.facet == key), None)


def verdict_words(f: FacetNovelty | None) -> str:
    """A facet's verdict as the check wrote it (a close match names its paper; no match says
    how many papers were searched), or why there is none."""
    if f is None:
        return "not checked"
    return f.verdict or "not decided"


def _nearest_line(f: FacetNovelty | None) -> str:
    if f is None or not f.nearest:
        return ""
    p = f.nearest[0]
    year = f" ({p.year})" if p.year else ""
    return f"{p.title}{year} · {p.similarity:.2f}" + (f" · {p.url}" if p.url else "")


def _method(run: Run, r: Ranked) -> str:
    """What measured a ranked candidate's score ("judge" or "signals"); "" when unranked."""
    return run.tournament.method if run.tournament is not None and r.rank else ""


def _row(run: Run, r: Ranked, names: Names) -> dict:
    c, lead = r.candidate, r.candidate.lead
    low, high = (r.interval or [None, None])[:2]
    return {"rank": r.rank, "candidate": c.id, "title": title_of(c), "method": _method(run, r),
            "score": None if r.score is None else round(r.score, 4),
            "low": None if low is None else round(low, 4), "high": None if high is None else round(high, 4),
            "merged_into": c.merged_into, "authors": "; ".join(names.person(i) for i in lead.author_ids),
            "fields": "; ".join(lead.fields), "concepts": "; ".join(lead.concepts),
            "papers": "; ".join(names.paper(i) for i in lead.paper_ids),
            "novelty_q1": verdict_words(facet(c, "q1")), "novelty_q5": verdict_words(facet(c, "q5")),
            "nearest_q1": _nearest_line(facet(c, "q1")), "nearest_q5": _nearest_line(facet(c, "q5")),
            "signals": "; ".join(f"{k}={v:.3f}" for k, v in sorted(c.signals.items())),
            "author_ids": "; ".join(lead.author_ids), "paper_ids": "; ".join(lead.paper_ids)}


def ranking_csv(run: Run, names: Names | None = None) -> bytes:
    """One row per candidate, best first; merged near-duplicates last, with what they joined."""
    import pandas as pd  # noqa: PLC0415  (slow)

    from ..study.results import to_csv  # noqa: PLC0415  (slow: pandas and the statistics)

    names = names or Names()
    rows = [_row(run, r, names) for r in ranked(run)]
    rows += [_row(run, Ranked(c, None, None, None), names) for c in merged(run)]
    df = pd.DataFrame(rows, columns=RANKING_COLUMNS)
    df["rank"] = df["rank"].astype("Int64")  # an unranked row leaves it empty, not "nan"
    return to_csv(df)


def _lead_doc(c: Candidate, names: Names) -> dict:
    lead = c.lead
    return {"authors": [{"id": i, "name": names.person(i)} for i in lead.author_ids],
            "fields": list(lead.fields), "concepts": list(lead.concepts),
            "papers": [{"id": i, "title": names.paper(i)} for i in lead.paper_ids]}


def tournament_notes(run: Run) -> list[str]:
    """The ranking's notes in words: the stored ones, and how many judgements gave no
    decision (counted from the judgements; a run stored when that was a note has it once)."""
    t = run.tournament
    if t is None:
        return []
    undecided = sum(not j.winner for j in t.judgements)
    said = (f"{undecided} of {len(t.judgements)} judgements gave no decision (asked twice); "
            "they count for neither side.")
    return list(dict.fromkeys([*t.notes, *([said] if undecided else [])]))


def ranking_json(run: Run, names: Names | None = None) -> str:
    """The ranking with each candidate's whole record (proposal, reviews, novelty, signals),
    the judgements with their reasons and the win matrix."""
    names = names or Names()
    t = run.tournament
    doc = {"run_id": run.id, "model": run.config.model, "method": t.method if t else None,
           "ranked_by": method_words(run), "judge_model": t.judge_model if t else "",
           "position_bias": t.position_bias if t else None, "merged": merged_count(run),
           "merge_threshold": t.merge_threshold if t else None, "notes": tournament_notes(run),
           "ranking": [], "merged_candidates": [], "wins": t.wins if t else {},
           "judgements": [j.to_dict() for j in t.judgements] if t else []}
    for r in ranked(run):
        cand = r.candidate.to_dict()
        cand["lead"] = _lead_doc(r.candidate, names)
        for review in cand.get("reviews") or []:
            review["reviewer_name"] = names.person(review["reviewer_id"])
        doc["ranking"].append({"rank": r.rank, "id": r.candidate.id, "title": title_of(r.candidate),
                               "score": r.score, "interval": r.interval, "candidate": cand})
    doc["merged_candidates"] = [{"id": c.id, "merged_into": c.merged_into, "title": title_of(c)}
                                for c in merged(run)]
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _md_candidate(run: Run, r: Ranked, names: Names) -> list[str]:
    c = r.candidate
    place = f"#{r.rank}" if r.rank else "unranked"
    lines = [f"## {place} · {c.id}: {title_of(c)}", ""]
    if r.score is not None:
        span = f" (interval {r.interval[0]:.2f} to {r.interval[1]:.2f})" if r.interval else ""
        lines.append(f"- score: {r.score:.3f}{span}")
    lead = _row(run, r, names)
    for label, key in (("leads with authors", "authors"), ("fields", "fields"),
                       ("concepts", "concepts"), ("papers", "papers")):
        if lead[key]:
            lines.append(f"- {label}: {lead[key]}")
    for key in ("q1", "q5"):
        f = facet(c, key)
        lines.append(f"- novelty of the {FACET_NAMES[key]}: {verdict_words(f)}")
        lines += [f"  - {p.title} ({p.year or 'n.d.'}), similarity {p.similarity:.2f}"
                  + (f", {p.url}" if p.url else "") for p in (f.nearest[:3] if f else [])]
    if c.signals:
        lines.append("- signals: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(c.signals.items())))
    lines += ["", c.proposal.to_markdown(f"Proposal {c.id}").replace("## ", "### ", 1)]
    lines += [f"- review by {names.person(v.reviewer_id)} (score {v.score})" for v in c.reviews]
    return [*lines, ""]


def ranking_markdown(run: Run, names: Names | None = None) -> str:
    """The ranking for a reader: how it was made, then each candidate best first."""
    names = names or Names()
    t = run.tournament
    lines = [f"# Candidates of ResearchTown run {run.id}", "", f"- model: {run.config.model}",
             f"- {method_words(run)}"]
    if t and t.position_bias is not None and t.method == "judge":
        lines.append(f"- position bias: the first-shown candidate won {t.position_bias:.0%} of decisions")
    if merged_count(run):
        lines.append(f"- {merged_count(run)} near-duplicates merged at similarity >= "
                     f"{t.merge_threshold if t else 0:.2f}")
    lines += [f"- note: {n}" for n in tournament_notes(run)]
    lines.append("")
    for r in ranked(run):
        lines += _md_candidate(run, r, names)
    for c in merged(run):
        lines.append(f"- {c.id} was merged into {c.merged_into}: {title_of(c)}")
    if t and t.method == "judge" and t.judgements:
        lines += ["", "## The judge's reasons", ""]
        lines += [f"- {j.first} vs {j.second}: {('winner ' + j.winner) if j.winner else 'no decision'}"
                  + (f". {j.reason}" if j.reason else "") for j in t.judgements]
    return "\n".join([*lines, ""])
