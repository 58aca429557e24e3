"""Several candidates per neighbourhood: leads by design, shared work, merged duplicates."""
from __future__ import annotations

import re

import pytest

from rt_core.errors import ConfigError
from rt_core.export import candidates as ec
from rt_core.models import registry
from rt_core.run.candidates import leads
from rt_core.run.candidates.stages import MERGE_THRESHOLD, near_duplicates
from rt_core.run.pipeline.plan import plan_for
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import Paper, Researcher, RunConfig, RunRequest
from tests.ideas import responder

AUTHORS = ["r-ada", "r-nia", "r-cole"]
PAPERS = ["p-gaia", "p-llm", "p-crime"]


def request(n: int, reviewers: int = 2, **cfg) -> RunRequest:
    base = {"model": "scripted/demo", "researcher_ids": AUTHORS, "paper_ids": PAPERS,
            "num_reviewers": reviewers, "candidates": n}
    return RunRequest(RunConfig(**{**base, **cfg}), max_retries=0)


@pytest.mark.parametrize("n", [0, 13, -1])
def test_a_number_of_candidates_out_of_range_is_one_clear_error(community, n):
    with pytest.raises(ConfigError, match="between 1 and 12"):
        Simulation(request(n), community).start()


def test_the_plan_of_several_candidates_shares_reading_and_reviewer_choice():
    names = [s.name for s in plan_for(request(4, reference_paper_id="x").config)]
    assert names == ["candidates", "read", "write", "leads", "write_candidates", "merge_candidates", "choose",
                     "read_reviewers", "review_candidates", "meta_review_candidates", "tournament",
                     "rank", "evaluate", "provenance", "review_provenance"]
    assert [s.name for s in plan_for(request(1).config)][3] == "aggregate"  # one: unchanged


def test_leads_differ_by_author_field_pair_and_concepts():
    hood = leads.Neighbourhood(
        authors=[Researcher(id=a, name=a) for a in ("a1", "a2", "a3")],
        papers=[Paper(id="p1", title="x", fields=["f1"]), Paper(id="p2", title="y", fields=["f2"])],
        fields=["f1", "f2", "f3"],
        concepts={"f1": ["k11", "k12"], "f2": ["k21", "k22"], "f3": ["k31"]})
    got = leads.assign(6, hood)
    assert [g.author_ids[0] for g in got] == ["a1", "a2", "a3", "a1", "a2", "a3"]
    assert [tuple(g.fields) for g in got[:3]] == [("f1", "f2"), ("f1", "f3"), ("f2", "f3")]
    assert got[0].concepts == ["k11", "k21"] and got[3].concepts == ["k12", "k22"]  # next turn
    assert len({(tuple(g.author_ids), tuple(g.fields), tuple(g.concepts)) for g in got}) == 6
    assert leads.assign(6, hood) == got  # deterministic


def test_several_candidates_run_offline_end_to_end_and_a_rerun_makes_no_call(community, scripted):
    scripted.responder = responder(lambda a, b: "A" if a < b else "B")
    run = Simulation(request(3), community).run_sync()
    assert run.status == "done", run.errors
    assert [c.id for c in run.candidates] == ["c1", "c2", "c3"]
    assert [c.seed for c in run.candidates] == [1000, 2000, 3000]
    assert len({c.proposal.q1 for c in run.candidates}) == 3
    reviewers = [[r.reviewer_id for r in c.reviews] for c in run.candidates]
    assert len(reviewers[0]) == 2 and reviewers.count(reviewers[0]) == 3  # the same reviewers
    assert not set(reviewers[0]) & set(AUTHORS)
    assert all(c.meta_review is not None for c in run.candidates)
    # The authors' profiles and drafts were made once, not once per candidate.
    drafts = [h for h in scripted.history if "Propose one new research idea" in h["messages"][-1]["content"]]
    assert len(drafts) == 3
    # The lead is said in the editor's instruction, the lead author's draft first.
    led = [h["messages"][-1]["content"] for h in scripted.history
           if "The direction of this proposal:" in h["messages"][-1]["content"]]
    assert len(led) == 3 and "Ada Astro" in led[0] and "Nia Lang" in led[1]
    # The best candidate is the run's, so the Results page and exports work unchanged.
    t = run.tournament
    assert t.order[0] == "c1" and run.proposal == run.candidates[0].proposal
    assert run.reviews == run.candidates[0].reviews and run.meta_review == run.candidates[0].meta_review
    stored = community.runs.load(run.id)
    assert stored.candidates == run.candidates and stored.tournament == t
    calls = len(scripted.history)
    again = Simulation(request(3), community).run_sync()
    assert again.status == "done" and again.usage.calls == 0 and len(scripted.history) == calls
    assert again.tournament.order == t.order


def test_near_duplicates_are_merged_before_anyone_reviews_them(community, scripted):
    scripted.responder = responder(same={3: 1})  # c3 writes c1's proposal again
    run = Simulation(request(3), community).run_sync()
    by_id = {c.id: c for c in run.candidates}
    assert by_id["c3"].merged_into == "c1" and not by_id["c3"].reviews
    assert run.tournament.merged == 1 and run.tournament.merge_threshold == MERGE_THRESHOLD
    assert "c3" not in run.tournament.order and len(run.tournament.order) == 2


def test_the_merge_keeps_the_earlier_of_two_and_compares_question_by_question():
    import numpy as np

    e = np.eye(3)
    vecs = {"c1": {"q1": e[0], "q2": e[1]}, "c2": {"q1": e[0], "q2": e[1]}, "c3": {"q1": e[2]}}
    assert near_duplicates(["c1", "c2", "c3"], vecs, 0.9) == {"c2": "c1"}


@pytest.fixture
def base_model(request):
    """`scripted/base`: the scripted model declared a base model (prompt style stem)."""
    previous = registry.declare("scripted/base", registry.Capabilities(
        prompt_style=registry.STEM, in_process=True))
    request.addfinalizer(lambda: registry.forget("scripted/base", previous))


def test_a_base_model_gets_its_lead_as_material_and_is_ranked_by_signals(community, demo, base_model, stem_writing):
    run = Simulation(request(2, model="scripted/base"), community).run_sync()
    assert run.status == "done", run.errors
    t = run.tournament
    assert t.method == "signals" and not t.judgements and t.judge_model == ""
    words = ec.method_words(run)
    assert "measured signals" in words and "cannot judge" in words
    assert not any("signals" in n for n in t.notes), "said once, by method_words, not again as a note"
    live = [c for c in run.candidates if not c.merged_into]
    assert all("review_score" in c.signals and "field_coverage" in c.signals for c in live)
    docs = [h["messages"][-1]["content"] for h in demo.history
            if "written from the team's drafts" in h["messages"][-1]["content"]]
    assert docs
    for c in run.candidates:  # the lead author's profile heads the document, lead concepts first
        doc = next(d for d in docs if f"Led by: {run.profiles[c.lead.author_ids[0]].text[:40]}" in d)
        concepts = doc.split("Key concepts in ", 2)[1]
        assert concepts.split(": ", 1)[1].startswith(c.lead.concepts[0])
    assert run.proposal == next(c.proposal for c in run.candidates if c.id == t.order[0])
    # A base model follows no instruction, so it is neither shown draft labels nor asked to
    # cite: its provenance is embedding alone.
    assert not any(re.search(r"\[A\d", str(h["messages"])) for h in demo.history)
    assert all(c.cited is None for c in run.candidates)
    assert run.provenance.answers and not any(s.cited for v in run.provenance.answers.values() for s in v)
    calls = len(demo.history)
    again = Simulation(request(2, model="scripted/base"), community).run_sync()
    assert again.usage.calls == 0 and len(demo.history) == calls and again.tournament.order == t.order


@pytest.mark.slow
def test_two_candidates_on_the_embedded_model(starter_store, stem_writing):
    """The real embedded model writing two candidates by stems: the path a neighbourhood
    without a usable facet takes (the facets path makes no model call to rank by fluency)."""
    ids = {"researchers": ["r-neubig-graham", "r-ivezic-zeljko"], "papers": ["arxiv:2307.13854",
                                                                          "arxiv:2208.00211"]}
    cfg = RunConfig(researcher_ids=ids["researchers"], paper_ids=ids["papers"], num_reviewers=1,
                    candidates=2)
    run = Simulation(RunRequest(cfg), starter_store).run_sync()
    assert run.status == "done", run.errors
    assert run.tournament.method == "signals" and len(run.candidates) == 2
    assert all(c.proposal.q1 for c in run.candidates)
    assert any("fluency" in c.signals for c in run.candidates if not c.merged_into)


# -- the command line ----------------------------------------------------------------------
STARTER = ["--researchers", "r-neubig-graham,r-ivezic-zeljko", "--papers",
           "arxiv:2307.13854,arxiv:2208.00211"]


def test_ideate_writes_the_ranking_the_candidates_and_the_run(tmp_path, scripted, capsys):
    import csv
    import json

    from rt_core.__main__ import main

    scripted.responder = responder(lambda a, b: "A" if a < b else "B")

    out = tmp_path / "out"
    code = main(["--db", str(tmp_path / "db.sqlite3"), "ideate", *STARTER, "--candidates", "3",
                 "--model", "scripted/demo", "--reviewers", "2", "--out-dir", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.index("Estimate:") < err.index("best: ")  # the estimate comes first
    rows = list(csv.DictReader((out / "ranking.csv").open()))
    assert [r["rank"] for r in rows] == ["1", "2", "3"] and {r["method"] for r in rows} == {"judge"}
    run = json.loads((out / "ideate.json").read_text())
    assert len(run["candidates"]) == 3 and run["tournament"]["order"][0] == rows[0]["candidate"]
    md = (out / "candidates.md").read_text()
    assert "both orders" in md and f"## #1 · {rows[0]['candidate']}:" in md


@pytest.mark.parametrize("extra, message", [
    (["--candidates", "13"], "from 1 to 12"),
    (["--candidates", "3", "--max-tokens", "5"], "smaller than one model call"),
    (["--candidates", "3", "--judge-model", "openai/judge", "--judge-base-url",
      "http://127.0.0.1:9/v1", "--judge-api-key-env", "RT_TEST_JUDGE_KEY"], "cannot be reached"),
    (["--candidates", "3", "--judge-model", "local/gemma-3-270m"], "cannot judge"),
])
def test_ideate_refuses_bad_input_with_one_message(tmp_path, demo, capsys, monkeypatch, extra, message):
    from rt_core.__main__ import main

    monkeypatch.setenv("RT_TEST_JUDGE_KEY", "sk-judge")
    code = main(["--db", str(tmp_path / "db.sqlite3"), "ideate", *STARTER, "--model", "scripted/demo",
                 "--out-dir", str(tmp_path / "out"), "--no-progress", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("error:") == 1
    assert not demo.history  # refused before any call


def test_with_the_novelty_check_each_live_candidate_carries_a_novelty_signal(community, demo,
                                                                            base_model):
    run = Simulation(request(2, model="scripted/base", check_novelty=True), community).run_sync()
    assert run.status == "done", run.errors
    live = [c for c in run.candidates if not c.merged_into]
    assert all(c.novelty is not None for c in live)
    assert all(any(f.nearest for f in c.novelty.facets) for c in live)  # the store has papers
    assert all(0 <= c.signals["novelty"] <= 1 for c in live)
