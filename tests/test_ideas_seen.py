"""Seen before (rt_core/ideas/seen.py): the threshold separates the planted paraphrases from
the planted distinct ideas, and runs made by the scripted model through the whole pipeline
mark the ideas that repeat an earlier run's, and only those, on both store engines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rt_core import fiveq
from rt_core.access import Viewer
from rt_core.ideas import seen
from rt_core.ideas.bank import Bank, Query
from rt_core.models.embed import Embedder
from rt_core.models.scripted import demo_responder
from rt_core.run.candidates.leads import SEED_STEP
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import Proposal, Run, RunConfig, RunRequest

PAIRS = json.loads((Path(__file__).parent / "fixtures" / "idea_pairs.json").read_text("utf-8"))
SAME, DISTINCT = PAIRS["same"], PAIRS["distinct"]


@pytest.fixture(scope="module")
def minilm():
    return Embedder().encode


def _cosine(embed, a: dict, b: dict) -> float:
    v = embed([seen.idea_text(a), seen.idea_text(b)])
    return float(v[0] @ v[1])


def test_the_threshold_separates_the_planted_paraphrases_from_the_distinct_ideas(minilm):
    same = [_cosine(minilm, a, b) for a, b in SAME]
    distinct = [_cosine(minilm, a, b) for a, b in DISTINCT]
    print(f"paraphrases {min(same):.3f}..{max(same):.3f}, distinct {min(distinct):.3f}..{max(distinct):.3f}")
    assert min(same) >= seen.THRESHOLD > max(distinct)
    assert len(same) == len(distinct) == 12


def _reply(idea: dict) -> str:
    answers = [idea["q1"], "It matters to the field.", "The data are hard to get.", "Nobody has tried.", idea["q5"]]
    return "\n".join(f"{q.heading}\n{x}" for q, x in zip(fiveq.QUESTIONS, answers, strict=True))


def _responder(ideas: list[dict]):
    """Candidate i (its seed says which) writes ideas[i - 1]; everything else as the demo."""
    def reply(messages: list, params: dict) -> str:
        if "The direction of this proposal:" in str(messages[-1].get("content", "")):
            return _reply(ideas[int(params.get("seed", 0)) // SEED_STEP - 1])
        return demo_responder(messages, params)
    return reply


def _run(store, scripted, ideas: list[dict]) -> Run:
    store.clear_caches(("llm_cache",))  # the second run asks the same prompts: it must write anew
    scripted.responder = _responder(ideas)
    cfg = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia", "r-cole"],
                    paper_ids=["p-gaia", "p-llm", "p-crime"], num_reviewers=2, candidates=len(ideas),
                    revision_rounds=0, check_novelty=False)
    run = Simulation(RunRequest(cfg, max_retries=0), store).run_sync()
    assert run.status == "done", run.errors
    assert not any(c.merged_into for c in run.candidates)
    return run


def test_runs_mark_the_ideas_an_earlier_run_had_and_not_the_distinct_ones(community, scripted, minilm):
    first = _run(community, scripted, [SAME[0][0], SAME[1][0], SAME[2][0]])
    # The second run: c1 and c3 say the first run's c1 and c3 in other words; c2 is another
    # idea on c2's topic (language models and code), and must stay new.
    second = _run(community, scripted, [SAME[0][1], DISTINCT[1][1], SAME[2][1]])
    bank = Bank(community, minilm)
    page = bank.find(Viewer(), Query(per_page=100))
    got = {i.id: i.seen_before for i in page.ideas}
    assert got == {f"{first.id}:c1": None, f"{first.id}:c2": None, f"{first.id}:c3": None,
                   f"{second.id}:c1": f"{first.id}:c1", f"{second.id}:c2": None,
                   f"{second.id}:c3": f"{first.id}:c3"}
    # One per group: the repeats are folded into the ideas they repeat.
    grouped = bank.find(Viewer(), Query(one_per_group=True, per_page=100))
    assert {i.id for i in grouped.ideas} == {f"{first.id}:c1", f"{first.id}:c2", f"{first.id}:c3",
                                             f"{second.id}:c2"}
    repeat = bank.one(Viewer(), f"{second.id}:c1")
    assert [i.id for i in bank.group(Viewer(), repeat)] == [f"{first.id}:c1", f"{second.id}:c1"]
    assert repeat.seen_similarity >= seen.THRESHOLD


def _hand_run(store, run_id: str, created: str, idea: dict, owner: str = "") -> None:
    run = Run(id=run_id, config=RunConfig(model="scripted/demo"), status="done", created_at=created,
              proposal=Proposal(q1=idea["q1"], q5=idea["q5"]))
    store.runs.create(run, owner_hash=owner)


@pytest.mark.parametrize("shared", [True, False])
def test_only_an_earlier_run_of_the_same_person_counts(store, minilm, shared):
    """On a shared server a person is a browser; on a personal server every run is the one person's."""
    a, b = SAME[3]
    _hand_run(store, "mine1", "2026-01-01T00:00:00+00:00", a, owner="h-me")
    _hand_run(store, "theirs", "2026-01-02T00:00:00+00:00", b, owner="h-other")  # another browser's
    _hand_run(store, "mine2", "2026-01-03T00:00:00+00:00", b, owner="h-me")
    _hand_run(store, "mine0", "2026-01-04T00:00:00+00:00", a, owner="h-me")  # later: repeats mine1
    Bank(store, minilm, per_owner=shared).refresh()
    rows = {r["id"]: r["seen_before"] for r in store.ideas.select()}
    assert rows == {"mine1:proposal": None, "theirs:proposal": None if shared else "mine1:proposal",
                    "mine2:proposal": "mine1:proposal" if shared else "theirs:proposal",  # the closest earlier
                    "mine0:proposal": "mine1:proposal"}


def test_of_two_runs_made_in_one_second_the_one_written_first_is_earlier(store, minilm):
    """Run ids are random and creation times have whole seconds: two runs of one second were
    once ordered by their ids, so the later run's idea could be the one marked as repeated."""
    a, b = SAME[2]
    _hand_run(store, "zz-first", "2026-01-01T00:00:00+00:00", a)
    _hand_run(store, "aa-second", "2026-01-01T00:00:00+00:00", b)
    Bank(store, minilm).refresh()
    rows = {r["id"]: r["seen_before"] for r in store.ideas.select()}
    assert rows == {"zz-first:proposal": None, "aa-second:proposal": "zz-first:proposal"}


def test_a_changed_idea_is_read_again_and_an_unchanged_one_keeps_its_mark(store, minilm):
    a, b = SAME[4]
    _hand_run(store, "r1", "2026-01-01T00:00:00+00:00", a)
    _hand_run(store, "r2", "2026-01-02T00:00:00+00:00", b)
    bank = Bank(store, minilm)
    bank.refresh()
    bank.star(Viewer(), "r2:proposal")
    run = store.runs.load("r2")
    store.runs.save(run)  # saved again, same text: nothing to redo
    assert store.ideas.pending(bank.model) == []
    run.proposal = Proposal(q1=DISTINCT[4][1]["q1"], q5=DISTINCT[4][1]["q5"])
    store.runs.save(run)
    assert [p["id"] for p in store.ideas.pending(bank.model)] == ["r2:proposal"]
    bank.refresh()
    idea = bank.one(Viewer(), "r2:proposal")
    assert idea.seen_before is None and idea.starred  # the star is the user's: kept
