"""Exports a reader can use: people by name and papers by title (ids beside them), CSV cells
that no spreadsheet runs as a formula, and History's CSV of runs through the app."""
from __future__ import annotations

import csv
import io
import json

import pytest

from rt_core.export import run as export
from rt_core.types import MetaReview, Paper, Proposal, Researcher, Review, Run, RunConfig, Similarity, Usage
from tests.apphelp import goto, module_data_dir, new_app

data_dir = module_data_dir("export-app")

FORMULA_TITLE = "=HYPERLINK(\"http://example.com\",\"click\")"


def _run(run_id: str = "exp0001") -> Run:
    return Run(id=run_id, status="done", created_at="2026-01-02T03:04:05+00:00",
               config=RunConfig(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia", "p-llm"],
                                reference_paper_id="p-spectra", mode="global", model="scripted/demo"),
               proposal=Proposal(q1="How can language models read star maps?"),
               reviews=[Review("r-cole", "- clear", "- thin", 6), Review("r-gone", "- ok", "- vague", 4)],
               meta_review=MetaReview("s", "w", 5.0),
               similarity=Similarity({"q1": 0.4}, 0.4, "local/minilm", evaluator="minilm · shipped summary"),
               usage=Usage(calls=9, prompt_tokens=1200, completion_tokens=300, cost=0.0125))


def _rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_markdown_names_researchers_reviewers_and_papers(community):
    run = _run()
    md = export.run_markdown(run, export.Names.for_runs(community, [run]))
    assert "- researchers: Ada Astro, Nia Lang" in md
    assert "  - Mapping the Milky Way disk with stellar kinematics" in md
    assert "- reference paper: Automated classification of stellar spectra" in md
    assert "## Review by Cole Crim (score 6)" in md
    assert "r-cole" not in md and "p-gaia" not in md  # names and titles, not ids
    assert "## Review by r-gone (score 4)" in md  # a reviewer the store lost keeps its id


def test_json_adds_names_and_titles_and_still_loads_as_a_run(community):
    run = _run()
    doc = json.loads(export.run_json(run, export.Names.for_runs(community, [run])))
    assert doc["researchers"] == [{"id": "r-ada", "name": "Ada Astro"}, {"id": "r-nia", "name": "Nia Lang"}]
    assert doc["papers"][1] == {"id": "p-llm", "title": "Scaling instruction-tuned language models"}
    assert doc["reference_paper"]["title"] == "Automated classification of stellar spectra"
    assert [r["reviewer_name"] for r in doc["reviews"]] == ["Cole Crim", "r-gone"]
    back = Run.from_dict(doc)
    assert back.reviews[0].reviewer_id == "r-cole" and back.config == run.config


def test_runs_csv_has_names_titles_ids_and_no_formula_cells(community):
    community.corpus.upsert_papers([Paper(id="p-evil", title=FORMULA_TITLE)])
    community.corpus.upsert_researchers([Researcher(id="r-evil", name="+SUM(A1:A9)")])
    run = _run()
    run.config.researcher_ids.append("r-evil")
    run.config.paper_ids.append("p-evil")
    [row] = _rows(export.runs_csv([run], export.Names.for_runs(community, [run])))
    assert row["authors"] == "Ada Astro; Nia Lang; +SUM(A1:A9)"  # only a cell's first character counts
    assert row["papers"].startswith("Mapping the Milky Way disk") and FORMULA_TITLE in row["papers"]
    assert row["author_ids"] == "r-ada; r-nia; r-evil" and row["paper_ids"].endswith("p-evil")
    assert (row["mean_score"], row["similarity"], row["evaluator"]) == ("5.0", "0.4", "minilm · shipped summary")
    assert (row["tokens"], row["cost_usd"]) == ("1500", "0.0125")
    solo = Run(id="exp0002", config=RunConfig(researcher_ids=["r-evil"], paper_ids=["p-evil"]))
    [row] = _rows(export.runs_csv([solo], export.Names.for_runs(community, [solo])))
    assert row["authors"] == "'+SUM(A1:A9)" and row["papers"] == "'" + FORMULA_TITLE


def test_reviews_csv_names_the_reviewer_and_keeps_the_id(community):
    run = _run()
    run.reviews[0].strengths = "-1 point for clarity"
    rows = _rows(export.reviews_csv(run, export.Names.for_runs(community, [run])))
    assert [(r["reviewer"], r["reviewer_id"], r["score"]) for r in rows] == [
        ("Cole Crim", "r-cole", "6"), ("r-gone", "r-gone", "4")]
    assert rows[0]["strengths"] == "'-1 point for clarity"


@pytest.fixture
def stored_run():
    from rt_core import community
    from rt_core.store import open_store

    s = open_store()
    community.ensure_loaded(s)
    rid = next(i for i in s.corpus.all_researcher_ids() if s.corpus.get_researcher(i).publication_ids)
    pid = s.corpus.get_researcher(rid).publication_ids[0]
    s.corpus.upsert_papers([Paper(id="p-evil-hist", title=FORMULA_TITLE)])
    run = _run("hist0001")
    run.config.researcher_ids = [rid]
    run.config.paper_ids = [pid, "p-evil-hist"]
    s.runs.save(run, title=run.proposal.q1)
    yield s, run
    s.runs.delete(run.id)


def test_history_offers_a_csv_of_the_listed_runs(stored_run, monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager

    s, run = stored_run
    made: dict[str, tuple] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name or ""] = (data_callable, mimetype)
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    at = goto(new_app(), "history")
    assert not at.exception and any(b.label == "Download these runs (CSV)"
                                    for b in at.get("download_button"))
    build, mime = made["researchtown-runs.csv"]
    assert mime == "text/csv"
    [row] = [r for r in _rows(build()) if r["id"] == run.id]
    name = s.corpus.get_researcher(run.config.researcher_ids[0]).name
    title = s.corpus.get_paper(run.config.paper_ids[0]).title
    assert row["authors"] == name and row["papers"] == f"{title}; {FORMULA_TITLE}"
    assert row["created"] == run.created_at and row["status"] == "done" and row["mode"] == "global"
    assert row["model"] == "scripted/demo" and row["evaluator"] == "minilm · shipped summary"
    # The download holds the runs the filter shows, no others.
    other = _run("hist0002")
    other.proposal = Proposal(q1="How do soil microbes respond to drought?")
    s.runs.save(other, title=other.proposal.q1)
    try:
        made.clear()
        at.text_input(key="hist_text").input("star maps").run()
        assert [r["id"] for r in _rows(made["researchtown-runs.csv"][0]())] == [run.id]
        made.clear()
        at.text_input(key="hist_text").input("").run()
        assert {r["id"] for r in _rows(made["researchtown-runs.csv"][0]())} == {run.id, other.id}
    finally:
        s.runs.delete(other.id)
