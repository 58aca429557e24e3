"""A run's reference is fixed at start (issue 16, item 3): "Compare with a paper" stores a
comparison beside the run and never changes the run; answers pasted for a paper stay
with that paper; a study's real-paper arm comes only from the run's own reference."""
from __future__ import annotations

import pytest

from rt_core.errors import InputError
from rt_core.run.evidence.evaluate import PASTED, evaluate_against
from rt_core.run.pipeline.simulation import Simulation
from rt_core.study.design import REAL_ARM, build_items
from rt_core.types import Proposal, RunConfig, RunRequest

PASTED_FOR_AGENTS = "\n".join(f"[Question {n}] PASTED-FOR-AGENTS answer {n} about web agents."
                              for n in range(1, 6))
LLM = Proposal(q1="How does instruction tuning change language models?", q2="Assistants depend on it.",
               q3="Behaviour shifts are hard to measure.", q4="Earlier studies were small.",
               q5="We tune models of many sizes and compare them.")


def request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", **cfg}), max_retries=0)


def finished_run(store, **cfg):
    """Ada writes from her Milky Way paper (her profile reads p-gaia and p-spectra)."""
    return Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=0, **cfg),
                      store).run_sync()


def test_a_run_without_a_reference_keeps_none_after_two_comparisons(community, demo):
    run = finished_run(community)
    first = evaluate_against(run, "p-agents", request(), community, pasted=PASTED_FOR_AGENTS)
    second = evaluate_against(run, "p-networks", request(), community)
    stored = community.runs.load(run.id)
    assert stored.config.reference_paper_id == "" and stored.similarity is None
    assert stored.version == run.version  # the run was not written at all
    listed = community.comparisons.for_run(run.id)
    assert [c.paper_id for c in listed] == ["p-agents", "p-networks"]
    assert [c.id for c in listed] == [first.id, second.id]
    agents, networks = listed
    assert agents.source == PASTED and "PASTED-FOR-AGENTS" in agents.similarity.reference.q1
    assert set(agents.similarity.per_question) == {"q1", "q2", "q3", "q4", "q5"}
    assert agents.evaluator.startswith(agents.similarity.embedder)
    # No five answers exist for p-networks: its abstract, labelled; nothing from p-agents.
    assert networks.similarity.kind == "whole-text" and "abstract" in networks.source
    assert networks.similarity.reference is None


def test_a_run_with_a_reference_keeps_it_and_its_similarity(community, demo):
    community.references.put("p-llm", "summary", LLM)
    run = finished_run(community, reference_paper_id="p-llm")
    own = run.similarity
    assert own is not None, (run.status, run.errors)
    assert own.reference == LLM
    evaluate_against(run, "p-agents", request(), community, pasted=PASTED_FOR_AGENTS)
    stored = community.runs.load(run.id)
    assert stored.config.reference_paper_id == "p-llm" and stored.similarity == own


def test_pasted_answers_for_one_paper_never_reach_another_papers_real_arm(community, demo):
    community.references.put("p-llm", "summary", LLM)
    with_ref = finished_run(community, reference_paper_id="p-llm")
    without = finished_run(community, mode="agent")
    for run in (with_ref, without):
        evaluate_against(run, "p-agents", request(), community, pasted=PASTED_FOR_AGENTS)
    runs = [community.runs.load(r.id) for r in (with_ref, without)]
    items = build_items(runs, real_arm=True, targets={})
    real = [i for i in items if i.arm == REAL_ARM]
    assert [(i.target, i.answers["q1"]) for i in real] == [("p-llm", LLM.q1)]
    assert not any("PASTED-FOR-AGENTS" in text for i in items for text in i.answers.values())
    assert "p-agents" not in {i.target for i in items}


def test_a_failed_comparison_stores_nothing(community, demo):
    run = finished_run(community)
    with pytest.raises(InputError, match="profile"):
        evaluate_against(run, "p-spectra", request(), community)  # Ada's profile read it
    with pytest.raises(InputError, match="no recognisable questions"):
        evaluate_against(run, "p-agents", request(), community, pasted="just some words")
    assert community.comparisons.for_run(run.id) == []


def test_comparisons_go_with_their_run(community, demo):
    run = finished_run(community)
    evaluate_against(run, "p-agents", request(), community)
    assert community.runs.delete(run.id)
    assert community.comparisons.for_run(run.id) == []
