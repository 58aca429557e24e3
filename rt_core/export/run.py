"""Runs as Markdown, JSON and CSV for download. Exports never contain API keys:
a run records the model name and base URL, never the key.

A reader knows researchers by name and papers by title, so exports say those; ids
stay beside them (JSON, CSV) for whoever joins the export with the store. Names
come from the store (`Names.for_runs`); without one an id stands for itself. CSV
goes through the study export's writer, so a cell a spreadsheet would run as a
formula is neutralised in one place.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import redact
from ..errors import RTError
from ..run.novelty.report import report as novelty_report
from ..run.pipeline.timing import took_text
from ..run.revision.report import rounds_markdown
from ..types import Run
from .sources import sources_markdown, sources_named


@dataclass
class Names:
    """id -> name of researchers and id -> title of papers; unknown ids map to themselves."""
    people: dict[str, str] = field(default_factory=dict)
    papers: dict[str, str] = field(default_factory=dict)

    def person(self, rid: str) -> str:
        return self.people.get(rid) or rid

    def paper(self, pid: str) -> str:
        return self.papers.get(pid) or pid

    @classmethod
    def for_runs(cls, store, runs: Iterable[Run]) -> Names:
        """Every researcher, reviewer and paper the runs mention, looked up once."""
        people: set[str] = set()
        papers: set[str] = set()
        for run in runs:
            people.update(run.config.researcher_ids)
            people.update(r.reviewer_id for r in run.reviews)
            papers.update(run.config.paper_ids)
            if run.config.reference_paper_id:
                papers.add(run.config.reference_paper_id)
            more_people, more_papers = sources_named(run)
            people.update(more_people)
            papers.update(more_papers)
        return cls(store.corpus.researcher_names(sorted(people)),
                   store.corpus.paper_titles(sorted(papers)))


def run_json(run: Run, names: Names | None = None, cache_hits: bool = True, earlier=None) -> str:
    """The stored record, plus the names and titles of the people and papers it cites by id
    (extra keys: the record still loads with Run.from_dict). `cache_hits=False` leaves the
    cache-hit count out, for a viewer rt_core.access.shows_cache_hits refuses it. `earlier`:
    the closest earlier idea this viewer may see (rt_core.ideas.closest), beside the novelty."""
    names = names or Names()
    doc = run.to_dict()
    if earlier is not None and doc.get("novelty") is not None:
        doc["novelty"]["closest_earlier_idea"] = earlier.to_dict()
    if not cache_hits:
        (doc.get("usage") or {}).pop("cache_hits", None)
    for review in doc.get("reviews") or []:
        review["reviewer_name"] = names.person(review["reviewer_id"])
    doc["researchers"] = [{"id": i, "name": names.person(i)} for i in run.config.researcher_ids]
    doc["papers"] = [{"id": i, "title": names.paper(i)} for i in run.config.paper_ids]
    ref = run.config.reference_paper_id
    doc["reference_paper"] = {"id": ref, "title": names.paper(ref)} if ref else None
    return redact.hide(json.dumps(doc, indent=2, ensure_ascii=False))  # base URLs' credentials


def _header(run: Run, names: Names) -> list[str]:
    lines = [f"# ResearchTown run {run.id}", "",
             f"- model: {run.config.model}", f"- mode: {run.config.mode}",
             f"- status: {run.status}",
             f"- researchers: {', '.join(names.person(i) for i in run.config.researcher_ids) or '-'}",
             "- papers:" + ("" if run.config.paper_ids else " -")]
    lines += [f"  - {names.paper(i)}" for i in run.config.paper_ids]
    if run.config.reference_paper_id:
        lines.append(f"- reference paper: {names.paper(run.config.reference_paper_id)}")
    return [*lines, ""]


def run_markdown(run: Run, names: Names | None = None, cache_hits: bool = True, earlier=None) -> str:
    """`earlier`: as for run_json, a line of the nearest prior work."""
    names = names or Names()
    lines = _header(run, names)
    if run.proposal:
        lines.append(run.proposal.to_markdown("Proposal"))
    if run.novelty:  # the novelty check (rt_core.run.novelty), when the run had one
        lines += ["## Nearest prior work", "", novelty_report(run.novelty), ""]
        lines += [earlier.sentence(), ""] if earlier is not None else []
    for r in run.reviews:
        lines += [f"## Review by {names.person(r.reviewer_id)} (score {r.score})", "",
                  "**Strengths**", "", r.strengths, "", "**Weaknesses**", "", r.weaknesses, ""]
    if run.meta_review:
        m = run.meta_review
        lines += [f"## Meta-review (mean score {m.score})", "", "**Strengths**", "", m.strengths, "",
                  "**Weaknesses**", "", m.weaknesses, ""]
    lines += rounds_markdown(run.rounds, names.person)  # revision rounds, when the run had them
    if run.similarity:
        s = run.similarity
        lines += ["## Similarity to the reference", "", f"_evaluator: {s.evaluator or s.embedder}_", "",
                  *[f"- {k}: {v:.3f}" for k, v in s.per_question.items()],
                  *[f"- {k}: missing (counts 0)" for k in s.missing], f"- mean: {s.mean:.3f}", ""]
    if run.review_similarity:
        rs = run.review_similarity
        lines += ["## Reviews compared with a real review", "",
                  *[f"- {k}: {'-' if v is None else f'{v:.3f}'}" for k, v in rs.items()], ""]
    if run.judge:
        lines += ["## LLM judge (1-10)", "",
                  *[f"- {k}: {v}" for k, v in run.judge.items() if k != "rationale"],
                  "", run.judge.get("rationale") or "", ""]
    lines += sources_markdown(run, names.person, names.paper)
    for e in run.errors:
        lines.append(f"- error in {e.stage} ({names.person(e.agent)}): {e.message}. {e.hint}")
    u = run.usage
    hits = f", cache hits {u.cache_hits}" if cache_hits else ""
    lines += ["", f"_calls {u.calls}{hits}, tokens {u.prompt_tokens}+"
                  f"{u.completion_tokens}, cost ${u.cost:.4f}_", ""]
    return redact.hide("\n".join(lines))  # an error's detail may name a base URL with credentials


# -- CSV --------------------------------------------------------------------------------------

RUN_COLUMNS = ["id", "created", "status", "mode", "model", "authors", "papers", "mean_score",
               "similarity", "evaluator", "tokens", "cost_usd", "wall_time", "estimate_seconds",
               "wall_seconds", "author_ids", "paper_ids"]
REVIEW_COLUMNS = ["run_id", "reviewer", "score", "strengths", "weaknesses", "reviewer_id"]


def _csv(rows: list[dict], columns: list[str]) -> bytes:
    import pandas as pd  # noqa: PLC0415  (slow)

    from ..study.results import to_csv  # noqa: PLC0415  (slow: pandas and the statistics)

    return to_csv(pd.DataFrame(rows, columns=columns))


def run_row(run: Run, names: Names, times: tuple[float | None, float | None] = (None, None)) -> dict:
    """One run as a History row: names and titles joined with '; ', the ids beside them;
    `times` (estimate, wall seconds, as the store keeps them) in History's words and as numbers."""
    estimate, wall = times
    sim = run.similarity
    score = run.meta_review.score if run.meta_review else None
    return {"id": run.id, "created": run.created_at, "status": run.status, "mode": run.config.mode,
            "model": run.config.model,
            "authors": "; ".join(names.person(i) for i in run.config.researcher_ids),
            "papers": "; ".join(names.paper(i) for i in run.config.paper_ids),
            "mean_score": None if score is None else round(score, 2),
            "similarity": round(sim.mean, 4) if sim else None,
            "evaluator": (sim.evaluator or sim.embedder) if sim else "",
            "tokens": run.usage.prompt_tokens + run.usage.completion_tokens,
            "cost_usd": round(run.usage.cost, 6),
            "wall_time": took_text(estimate, wall),
            "estimate_seconds": None if estimate is None else round(estimate, 1),
            "wall_seconds": None if wall is None else round(wall, 1),
            "author_ids": "; ".join(run.config.researcher_ids),
            "paper_ids": "; ".join(run.config.paper_ids)}


def runs_csv(runs: list[Run], names: Names | None = None,
             times: dict[str, tuple[float | None, float | None]] | None = None) -> bytes:
    names, times = names or Names(), times or {}
    return _csv([run_row(r, names, times.get(r.id, (None, None))) for r in runs], RUN_COLUMNS)


def reviews_csv(run: Run, names: Names | None = None) -> bytes:
    """One row per review, the reviewer by name (and id)."""
    names = names or Names()
    return _csv([{"run_id": run.id, "reviewer": names.person(r.reviewer_id), "score": r.score,
                  "strengths": r.strengths, "weaknesses": r.weaknesses,
                  "reviewer_id": r.reviewer_id} for r in run.reviews], REVIEW_COLUMNS)


def stored_runs_csv(store, run_ids: Iterable[str]) -> bytes:
    """The History download: each stored run (runs that no longer load are left out)."""
    runs = []
    for rid in run_ids:
        try:
            runs.append(store.runs.load(rid))
        except RTError:
            continue
    return runs_csv(runs, Names.for_runs(store, runs), store.runs.wall_times([r.id for r in runs]))
