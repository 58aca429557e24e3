"""The novelty check offline (the store is the literature), its verdicts, the explanation
that may cite retrieved papers only, and the check as a stage of a run."""
from __future__ import annotations

import asyncio
import json

import pytest

from rt_core import community as starter
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.embed import Embedder
from rt_core.run.novelty import CLOSE, THRESHOLD, assess, is_close, verdict
from rt_core.run.novelty.explain import explain
from rt_core.run.pipeline import budget
from rt_core.run.pipeline.plan import plan_for
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import chat, stem
from rt_core.run.styles.context import StageContext
from rt_core.store import Store
from rt_core.types import NearPaper, Proposal, RunConfig, RunRequest

UNRELATED = Proposal(q1="How do desert ants share the work of foraging between colonies?",
                     q5="We film ant trails with cheap cameras and count the loads they carry.")
NEAR = [NearPaper("Web agents that plan with language models", 0.71, 2022, "https://x.org/a"),
        NearPaper("Scaling instruction-tuned language models", 0.40, 2023)]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The shipped starter community in a store of this module's own."""
    store = Store(tmp_path_factory.mktemp("novelty") / "studio.sqlite3")
    starter.ensure_loaded(store)
    yield store
    store.close()


# -- offline, on the shipped store -------------------------------------------------------
def test_a_real_papers_own_problem_is_close_prior_work_naming_that_paper(shipped):
    target = starter.replay_targets()[0]
    paper = shipped.corpus.get_paper(target["paper_id"])
    novelty = assess(Proposal(**target["five_q"]), shipped, Embedder(store=shipped))
    q1 = novelty.facets[0]
    assert q1.facet == "q1" and is_close(q1)
    assert q1.nearest[0].paper_id == paper.id and q1.nearest[0].source == "store"
    assert paper.title in q1.verdict  # the verdict names a retrieved paper
    assert q1.nearest[0].similarity >= THRESHOLD and q1.nearest[0].url
    assert not novelty.online and novelty.sources == ["store"]
    assert any("the store is the literature" in n for n in novelty.notes)


def test_an_unrelated_idea_is_no_close_match_in_every_paper_of_the_store(shipped):
    n_papers = shipped.counts()["papers"]
    novelty = assess(UNRELATED, shipped, Embedder(store=shipped))
    assert [f.verdict for f in novelty.facets] == [
        f"no close match found in {n_papers} papers searched"] * 2
    assert all(f.nearest and f.nearest[0].similarity < THRESHOLD for f in novelty.facets)


def test_a_missing_facet_is_said_not_guessed(community):
    novelty = assess(Proposal(q1="How do stars move in the galactic disk?"), community,
                     Embedder(store=community))
    assert novelty.facets[1].verdict == "no close match found in 0 papers searched"
    assert any("no method" in n for n in novelty.notes)


# -- verdicts ------------------------------------------------------------------------------
def test_close_prior_work_needs_the_threshold_and_names_the_paper():
    assert verdict(NEAR, 7) == f'{CLOSE}: "Web agents that plan with language models" (2022)'
    assert verdict(NEAR[1:], 7) == "no close match found in 7 papers searched"
    assert verdict([], 0) == "no close match found in 0 papers searched"
    assert verdict([NearPaper("One", THRESHOLD)], 1).startswith(CLOSE)


# -- the explanation ------------------------------------------------------------------------
def ctx(store=None, style="auto"):
    return StageContext(LLMClient(ModelSettings(model="scripted/novelty", prompt_style=style),
                                  store=store))


def test_an_explanation_citing_retrieved_labels_is_kept(scripted):
    scripted.enqueue("The problem is close to [P1], which plans web tasks; [P2] does not.")
    text, note = asyncio.run(explain(ctx(), "q1", "How can agents plan?", NEAR))
    assert text.startswith("The problem is close to [P1]") and note == ""
    prompt = scripted.history[0]["messages"][-1]["content"]
    assert "[P1] Web agents that plan with language models (2022)" in prompt


def test_a_fabricated_citation_is_asked_again_once_then_dropped(scripted, store):
    scripted.enqueue("This was done by [P3] and by Smith et al. (2021).",
                     "As [P7] showed, it is not new.")
    text, note = asyncio.run(explain(ctx(store), "q5", "We plan with agents.", NEAR))
    assert text == "" and "[P7]" in note and "dropped" in note
    assert len(scripted.history) == 2
    reask = scripted.history[1]["messages"][-1]["content"]
    assert "[P3]" in reask and "et al" in reask and "[P1], [P2]" in reask
    # a re-run asks nothing: both replies come from the store's cache
    again = asyncio.run(explain(ctx(store), "q5", "We plan with agents.", NEAR))
    assert again == (text, note) and len(scripted.history) == 2


def test_a_fabricated_citation_corrected_on_the_re_ask_is_kept(scripted):
    scripted.enqueue("Close to [P4].", "Close to [P2], which differs in method.")
    text, note = asyncio.run(explain(ctx(), "q1", "How can agents plan?", NEAR))
    assert text == "Close to [P2], which differs in method." and note == ""


def test_a_base_model_or_no_papers_asks_nothing(scripted):
    assert asyncio.run(explain(ctx(style="stem"), "q1", "x", NEAR)) == ("", "")
    assert asyncio.run(explain(ctx(), "q1", "x", [])) == ("", "")
    assert scripted.history == []


# -- the stage in a run -------------------------------------------------------------------
def novelty_config(**kw) -> RunConfig:
    return RunConfig(**{"model": "scripted/demo", "researcher_ids": ["r-ada", "r-nia"],
                        "paper_ids": ["p-gaia"], "num_reviewers": 1, "check_novelty": True, **kw})


def test_the_plan_checks_novelty_after_the_proposal_and_before_the_reviews():
    needs = {s.name: s.needs for s in plan_for(novelty_config())}
    assert needs["novelty"] == ("aggregate",) and "novelty" in needs["review"]
    assert "novelty" not in {s.name for s in plan_for(novelty_config(check_novelty=False))}
    est = budget.estimate(novelty_config())
    assert (est.stages["novelty"].calls, est.stages["novelty"].max_calls) == (2, 4)
    assert budget.estimate(novelty_config(candidates=3)).stages["novelty"].calls == 6
    base = budget.estimate(novelty_config(model="local/gemma", prompt_style="stem"))
    assert base.stages["novelty"].calls == 0  # the base model is never asked to explain


def test_a_run_checks_its_proposal_and_the_reviewers_see_the_nearest_titles(community, demo):
    run = Simulation(RunRequest(novelty_config(), max_retries=0), community).run_sync()
    assert run.status == "done", run.errors
    assert run.novelty is not None and [f.facet for f in run.novelty.facets] == ["q1", "q5"]
    assert all(f.explanation for f in run.novelty.facets)  # the demo model cites nothing
    stored = community.runs.load(run.id)
    assert stored.novelty.to_dict() == run.novelty.to_dict()
    first = run.novelty.facets[0].nearest[0]
    reviews = [h for h in demo.history if "You are reviewing" in h["messages"][-1]["content"]]
    prior = reviews[0]["messages"][-1]["content"].split("closest published work", 1)[1]
    assert first.title in prior.split("Write a review")[0]
    calls = len(demo.history)
    Simulation(RunRequest(novelty_config(), max_retries=0), community, run_id=run.id,
               resume=True).run_sync()
    assert len(demo.history) == calls  # a resumed run repeats no call


def test_without_the_check_the_review_prompt_is_unchanged(scripted):
    """No check, no prior-work text: earlier runs' cached reviews still match."""
    scripted.enqueue("Strengths:\n- a\nWeaknesses:\n- b\nScore: 5", "Strengths:\n- a\n"
                     "Weaknesses:\n- b\nScore: 5")
    p = Proposal(q1="How can stars be mapped?")
    asyncio.run(chat.review(ctx(), "r", None, p, []))
    asyncio.run(chat.review(ctx(), "r", None, p, [], ["Star maps (2020)"]))
    plain, shown = (h["messages"][-1]["content"] for h in scripted.history)
    assert shown.startswith(plain.split("Write a review")[0].rstrip())
    assert "- Star maps (2020)" in shown and "Star maps" not in plain


def test_the_base_model_reviewer_sees_the_nearest_titles(demo):
    p = Proposal(q1="How can stellar kinematics be mapped?", q2="Surveys need maps.")
    asyncio.run(stem.review(ctx(style="stem"), "r", "I review.", p, [], ["Star maps (2020)"]))
    docs = [h["messages"][-1]["content"] for h in demo.history]
    assert docs and all("Closest published work: Star maps (2020)" in d for d in docs)


# -- the command line ---------------------------------------------------------------------
def test_the_cli_checks_a_proposal_file_and_writes_json(shipped, tmp_path, capsys):
    from rt_core.cli.parser import build_parser

    target = starter.replay_targets()[0]
    title = shipped.corpus.get_paper(target["paper_id"]).title
    md = tmp_path / "proposal.md"
    md.write_text(Proposal(**target["five_q"]).to_markdown(), "utf-8")
    out = tmp_path / "novelty.json"
    args = build_parser().parse_args(["--db", str(shipped.path), "novelty", str(md),
                                      "--out", str(out)])
    assert args.fn(args) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text("utf-8"))
    assert [f["facet"] for f in data["facets"]] == ["q1", "q5"]
    assert data["facets"][0]["verdict"] == f'{CLOSE}: "{title}" (2025)'
    assert f"Problem (Q1): {CLOSE}" in printed and title in printed
    assert "the store is the literature" in printed


def test_the_cli_refuses_a_file_without_questions(tmp_path, capsys):
    from rt_core.cli.parser import build_parser
    from rt_core.errors import InputError

    md = tmp_path / "notes.md"
    md.write_text("just some notes", "utf-8")
    args = build_parser().parse_args(["novelty", str(md)])
    with pytest.raises(InputError, match="no problem .Q1. or method .Q5."):
        args.fn(args)


def test_a_check_that_fails_is_recorded_and_the_reviews_go_on(community, demo, monkeypatch):
    from rt_core.errors import ProviderError
    from rt_core.run.pipeline import novelty as stage

    async def broken(*_a, **_k):
        raise ProviderError("the embedder is unreachable", "Check the embedder.")

    monkeypatch.setattr(stage, "assess_async", broken)
    run = Simulation(RunRequest(novelty_config(), max_retries=0), community).run_sync()
    assert run.status == "done" and run.novelty is None and run.reviews
    assert [(e.stage, e.message) for e in run.errors] == [("novelty", "the embedder is unreachable")]


def test_the_cli_searches_online_when_asked(shipped, fake_server, tmp_path, capsys, monkeypatch):
    from rt_core.cli.parser import build_parser

    fake_server.json("/graph/v1/paper/search", {"total": 1, "offset": 0, "data": [{
        "paperId": "abc", "title": "A community of simulated researchers", "year": 2024,
        "abstract": "Agents read, write and review papers.", "url": "https://s2.example/abc"}]})
    monkeypatch.setenv("RT_S2_URL", fake_server.url + "/graph/v1")
    md = tmp_path / "p.md"
    md.write_text(Proposal(q1="Can agents simulate a research community?").to_markdown(), "utf-8")
    args = build_parser().parse_args(["--db", str(shipped.path), "novelty", str(md), "--online"])
    assert args.fn(args) == 0
    printed = capsys.readouterr().out
    assert "A community of simulated researchers (2024)  [semantic_scholar]  https://s2.example/abc" \
        in printed
    assert "Searched: store, semantic_scholar" in printed
    assert len(fake_server.hits()) == 1  # Q1 only: the proposal has no method to search for


def test_with_candidates_each_one_not_merged_is_checked_after_the_merge(community, demo):
    from rt_core.run.pipeline import novelty as stage
    from rt_core.run.pipeline.runner import Stage
    from rt_core.types import Candidate

    plan = [Stage("aggregate", None), Stage("merge_candidates", None, ("aggregate",)),
            Stage("review", None, ("merge_candidates",))]
    placed = {s.name: s.needs for s in stage.with_novelty(plan, novelty_config(candidates=3))}
    assert placed["novelty"] == ("merge_candidates",)
    assert placed["review"] == ("merge_candidates", "novelty")
    sim = Simulation(RunRequest(novelty_config(candidates=3), max_retries=0), community)
    sim.run.candidates = [Candidate("c1", Proposal(q1="How do stars move in the disk?")),
                          Candidate("c2", Proposal(q1="How do stars move?"), merged_into="c1"),
                          Candidate("c3", Proposal(q5="We classify stellar spectra."))]
    state = sim.start()
    state.fold(asyncio.run(stage.run_stage(state)))  # the runner folds a stage's output
    c1, c2, c3 = sim.run.candidates
    assert c1.novelty and c3.novelty and c2.novelty is None and sim.run.novelty is None
    assert c3.novelty.facets[1].nearest[0].title == "Automated classification of stellar spectra"


def test_the_markdown_export_carries_the_check(community, demo):
    from rt_core.export.run import run_markdown

    run = Simulation(RunRequest(novelty_config(num_reviewers=0)), community).run_sync()
    text = run_markdown(run)
    section = text.split("## Nearest prior work", 1)[1]
    assert run.novelty.facets[0].verdict in section and "Problem (Q1)" in section


def test_the_cli_explains_with_an_instruction_model(shipped, scripted, tmp_path, capsys):
    from rt_core.cli.parser import build_parser

    scripted.responder = lambda messages, params: "This problem is already studied in [P1]."
    target = starter.replay_targets()[0]
    md = tmp_path / "p.md"
    md.write_text(Proposal(**target["five_q"]).to_markdown(), "utf-8")
    args = build_parser().parse_args(["--db", str(shipped.path), "novelty", str(md),
                                      "--model", "scripted/explainer"])
    assert args.fn(args) == 0
    printed = capsys.readouterr().out
    assert printed.count("Explanation: This problem is already studied in [P1].") == 2
    assert len(scripted.history) == 2  # one call per facet, no re-ask


def test_a_run_with_online_literature_asks_the_sources_once(community, demo, fake_server,
                                                            monkeypatch):
    fake_server.json("/s2/paper/search", {"total": 1, "offset": 0, "data": [{
        "paperId": "w1", "title": "Galactic disk maps from stellar motions", "year": 2021,
        "abstract": "We map the galactic disk with the motions of stars.",
        "url": "https://s2.example/w1"}]})
    monkeypatch.setenv("RT_S2_URL", fake_server.url + "/s2")
    config = novelty_config(literature="online", num_reviewers=0)
    run = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert run.status == "done", run.errors
    assert run.novelty.online and run.novelty.sources == ["store", "semantic_scholar"]
    asked = len(fake_server.hits())
    assert asked == 2  # one search per facet
    again = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert len(fake_server.hits()) == asked  # a second run: the store's cache answers
    assert again.novelty.to_dict() == run.novelty.to_dict()
