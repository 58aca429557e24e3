"""The closest earlier idea beside the closest paper (rt_core/ideas/closest.py) and the link
back from a run continued from an idea (rt_core/ideas/lineage.py), decided in rt_core: two
similar runs of the scripted model name the first from the second, a stranger is told of none,
and a run continued from an idea names it (or says its run was deleted)."""
from __future__ import annotations

import json

import pytest

from rt_core.access import Viewer
from rt_core.export.run import run_json, run_markdown
from rt_core.ideas import closest, lineage
from rt_core.ideas.bank import Bank
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import Proposal, Run, RunConfig, RunRequest
from tests.test_ideas_seen import minilm  # noqa: F401  (the bundled MiniLM, once per module)


def _scripted_run(store, **config) -> Run:
    store.clear_caches(("llm_cache",))  # the second run writes anew, the same neighbourhood
    cfg = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia", "r-cole"],
                    paper_ids=["p-gaia", "p-llm", "p-crime"], num_reviewers=2, check_novelty=True, **config)
    run = Simulation(RunRequest(cfg, max_retries=0), store).run_sync()
    assert run.status == "done", run.errors
    return run


@pytest.fixture
def two_runs(community, demo):
    return _scripted_run(community), _scripted_run(community)


def test_two_similar_scripted_runs_name_the_first_idea_beside_the_papers(community, two_runs, minilm):  # noqa: F811
    # "earlier" is the bank's order (seen.py): by creation, then by run id (two runs may share a second)
    first, second = sorted(two_runs, key=lambda r: (r.created_at, r.id))
    bank = Bank(community, minilm)
    got = closest.for_run(bank, Viewer(), second)
    assert (got.idea_id, got.run_id) == (f"{first.id}:proposal", first.id)
    assert got.similarity >= closest.seen.THRESHOLD and got.repeats
    assert closest.for_run(bank, Viewer(), first) == closest.Closest()  # nothing earlier: says none
    assert "Closest earlier idea: none" in closest.Closest().sentence()
    # the run's export carries it under the nearest prior work, Markdown and JSON
    md = run_markdown(second, earlier=got)
    assert f"Closest earlier idea: {first.id}:proposal of run {first.id}" in md.split("## Nearest prior work")[1]
    assert json.loads(run_json(second, earlier=got))["novelty"]["closest_earlier_idea"]["id"] == f"{first.id}:proposal"


def test_a_stranger_on_a_shared_server_is_told_of_none(store, minilm):  # noqa: F811
    """Planted: the visible-runs condition removed from closest.for_run (the stranger then sees the owner's idea)."""
    for rid, day in (("mine1", "01"), ("mine2", "02")):
        run = Run(id=rid, config=RunConfig(model="scripted/demo"), status="done",
                  created_at=f"2026-01-{day}T00:00:00+00:00",
                  proposal=Proposal(q1="Can telescopes share observing time fairly?", q5="An auction of hours."))
        store.runs.create(run, owner_hash="h-me")
    bank = Bank(store, minilm, per_owner=True)
    second = store.runs.load("mine2")
    assert closest.for_run(bank, Viewer(shared=True, owner_hash="h-me"), second).idea_id == "mine1:proposal"
    assert closest.for_run(bank, Viewer(shared=True, owner_hash="h-stranger"), second) == closest.Closest()
    assert closest.for_run(bank, Viewer(shared=True, operator=True), second).idea_id == "mine1:proposal"


def test_a_run_continued_from_an_idea_links_back_and_the_idea_forward(store, minilm):  # noqa: F811
    idea = Proposal(q1="Can bees map gardens?", q5="Follow them with radar.")
    store.runs.create(Run(id="src1", config=RunConfig(model="scripted/demo"), status="done",
                          created_at="2026-01-01T00:00:00+00:00", proposal=idea), owner_hash="h-me")
    cont = Run(id="next1", config=RunConfig(model="scripted/demo", from_idea="src1:proposal"), status="done",
               created_at="2026-01-02T00:00:00+00:00", proposal=idea)
    store.runs.create(cont, owner_hash="h-me")
    bank = Bank(store, minilm, per_owner=True)
    me, stranger = Viewer(shared=True, owner_hash="h-me"), Viewer(shared=True, owner_hash="h-other")
    assert store.runs.load("next1").config.from_idea == "src1:proposal"  # stored with the run
    assert lineage.origin(bank, me, cont) == lineage.Origin("src1:proposal", lineage.OPEN)
    assert lineage.origin(bank, stranger, cont) is None  # an idea outside their bank is never named
    assert lineage.continued_in(bank, me, "src1:proposal") == ["next1"]
    assert lineage.continued_in(bank, stranger, "src1:proposal") == []
    store.runs.delete("src1")
    gone = lineage.origin(bank, me, cont)
    assert gone.state == lineage.DELETED and "deleted" in gone.sentence()


def test_a_replay_started_from_a_seeded_session_continues_no_idea():
    """A replay's neighbourhood is the hidden paper's, not the seeded one (planted: for_door
    keeping from_idea, fails)."""
    from rt_core.settings import schema
    from rt_core.settings.run_config import for_door

    assert for_door(RunConfig(from_idea="src1:proposal"), schema.REPLAY).from_idea == ""
