"""Runs that cannot be orphaned, kept apart outcomes and optimistic versioning."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from rt_core.errors import ConfigError
from rt_core.models.scripted import demo_responder
from rt_core.run.evidence.evaluate import compare_reviews, evaluate_against
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store.runs import HEARTBEAT, HOST, RunConflict
from rt_core.types import Run, RunConfig, RunRequest


def request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", **cfg}), max_retries=0)


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def running_row(store, run_id: str, pid: int, host: str, beat: float, lease: str = "other") -> None:
    store.runs.create(Run(id=run_id, config=RunConfig(), status="running", created_at="2026"))
    store.db.conn.execute("UPDATE runs SET owner_pid=?, owner_host=?, owner_lease=?, heartbeat_at=? "
                          "WHERE id=?", (pid, host, lease, beat, run_id))


def test_a_run_whose_process_died_is_interrupted_and_a_live_ones_is_not(store):
    now = time.time()
    running_row(store, "dead", dead_pid(), HOST, now)
    running_row(store, "live-here", os.getppid(), HOST, now)  # pytest's parent: alive
    running_row(store, "live-away", 4242, "another-host", now)
    running_row(store, "silent-away", 4242, "another-host", now - 3600)
    assert sorted(store.runs.reap_orphans()) == ["dead", "silent-away"]
    status = {r["id"]: r["status"] for r in store.runs.list()}
    assert status == {"dead": "interrupted", "silent-away": "interrupted", "live-here": "running",
                      "live-away": "running"}
    assert store.runs.load("dead").status == "interrupted"  # the stored record agrees


def test_this_process_keeps_its_own_live_run_and_reaps_an_ended_one(store):
    running_row(store, "mine", os.getpid(), HOST, time.time(), lease="lease-live")
    HEARTBEAT.add("lease-live", store.db)
    try:
        assert store.runs.reap_orphans() == []
    finally:
        HEARTBEAT.remove("lease-live")
    assert store.runs.reap_orphans() == ["mine"]


def test_the_heartbeat_keeps_a_running_run_fresh(store, monkeypatch):
    monkeypatch.setenv("RT_HEARTBEAT_SECONDS", "0.05")
    running_row(store, "beating", os.getpid(), HOST, 0.0, lease="lease-beat")
    HEARTBEAT.add("lease-beat", store.db)
    HEARTBEAT.wake.set()  # beat now rather than after the current wait
    try:
        deadline = time.monotonic() + 30
        while store.runs.owner("beating")["heartbeat_at"] == 0.0:
            assert time.monotonic() < deadline, "no heartbeat"
            HEARTBEAT.wake.set()
            time.sleep(0.01)
    finally:
        HEARTBEAT.wake.clear()
        HEARTBEAT.remove("lease-beat")


def test_a_stale_copy_cannot_overwrite_and_a_deleted_run_is_not_resurrected(community, demo):
    run = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1),
                     community).run_sync()
    assert run.status == "done"
    a, b = community.runs.load(run.id), community.runs.load(run.id)
    a.notes = ["first writer"]
    community.runs.save(a)
    b.notes = ["second writer, from an old read"]
    with pytest.raises(RunConflict, match="changed elsewhere"):
        community.runs.save(b)
    assert community.runs.load(run.id).notes == ["first writer"]
    community.runs.delete(run.id)
    with pytest.raises(RunConflict, match="deleted"):
        compare_reviews(a, "Strengths:\n- clear\nWeaknesses:\n- vague\nScore: 6", community)
    assert not community.runs.exists(run.id)


def test_another_session_cannot_write_a_run_that_is_still_going(community, demo):
    sim = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1), community)
    seen = {}

    def meddle(event):
        if event.stage == "review" and "tried" not in seen:
            seen["tried"] = True
            copy = community.runs.load(sim.run.id)
            copy.proposal.q1 = "overwritten by another session"
            try:
                community.runs.save(copy)
            except RunConflict as exc:
                seen["refused"] = str(exc)

    sim.on_progress = meddle
    run = sim.run_sync()
    assert "still running" in seen["refused"]
    assert run.status == "done"
    assert community.runs.load(run.id).proposal.q1 != "overwritten by another session"


def test_an_evaluation_failure_leaves_the_run_done_with_the_failure_beside_it(community, scripted):
    def responder(messages, params):
        if "restate published research" in str(messages[0].get("content", "")):
            raise ConfigError("the judge model is unreachable")
        return demo_responder(messages, params)

    scripted.responder = responder
    # The evaluator's model restates the reference (the run's own model never does).
    run = Simulation(request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1,
                             reference_paper_id="p-llm", evaluator_model="scripted/evaluator"),
                     community).run_sync()
    assert run.status == "done"
    assert run.proposal is not None and run.reviews and run.similarity is None
    assert [(e.stage, e.agent) for e in run.errors] == [("evaluate", "reference")]
    assert community.runs.load(run.id).status == "done"


def test_a_failed_evaluation_afterwards_does_not_touch_the_stored_run(community, scripted):
    scripted.responder = demo_responder
    run = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1),
                     community).run_sync()
    before = community.runs.load(run.id)

    def broken(messages, params):
        raise ConfigError("down")

    scripted.responder = broken
    with pytest.raises(ConfigError):
        evaluate_against(before, "p-agents", request(evaluator_model="scripted/evaluator"), community)
    after = community.runs.load(run.id)
    assert after.status == "done" and after.similarity is None and after.version == before.version
    assert community.comparisons.for_run(run.id) == []


def test_resume_reuses_the_id_and_the_cache(community, demo):
    req = request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1)
    run = Simulation(req, community).run_sync()
    calls = len(demo.history)
    community.db.conn.execute("UPDATE runs SET status='interrupted' WHERE id=?", (run.id,))
    again = Simulation(req, community, run_id=run.id, resume=True).run_sync()
    assert again.id == run.id and again.status == "done" and again.created_at == run.created_at
    assert len(demo.history) == calls and again.usage.calls == 0  # everything from the cache
    assert again.proposal == run.proposal and again.reviews == run.reviews
    assert [r["id"] for r in community.runs.list()] == [run.id]


def test_a_live_run_cannot_be_resumed_twice(community, demo):
    running_row(community, "busy", os.getppid(), HOST, time.time())
    with pytest.raises(RunConflict, match="still running"):
        Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"]), community,
                   run_id="busy", resume=True).run_sync()


def test_app_start_reaps_only_dead_owners_and_resume_is_one_click(tmp_path, demo):
    """A second app process on a shared store: its start marks the dead process's run
    interrupted, leaves the live one alone, and History resumes the interrupted one."""
    from rt_core import community as starter
    from rt_core.store import open_store
    from tests.reliability.apphelp import DataDir, goto, new_app

    d = DataDir(tmp_path)
    try:
        s = open_store(tmp_path / "studio.sqlite3")
        starter.ensure_loaded(s)
        cfg = RunConfig(researcher_ids=["r-neubig-graham"], model="scripted/demo", mode="agent",
                        num_reviewers=0)
        for rid, pid in (("deadowner01", dead_pid()), ("liveowner01", os.getppid())):
            s.runs.create(Run(id=rid, config=cfg, status="running", created_at="2026-01-01"))
            s.db.conn.execute("UPDATE runs SET owner_pid=?, owner_host=?, owner_lease='x', heartbeat_at=? "
                              "WHERE id=?", (pid, HOST, time.time(), rid))
        at = new_app()
        status = {r["id"]: r["status"] for r in s.runs.list()}
        assert status == {"deadowner01": "interrupted", "liveowner01": "running"}
        goto(at, "history")
        at.selectbox(key="hist_pick").set_value("deadowner01").run()
        at.button(key="hist_resume").click().run()
        assert not at.exception, [e.value for e in at.exception]
        job = at.session_state["jobs"]["deadowner01"]
        assert job.wait(timeout=300)
        assert s.runs.load("deadowner01").status == "done"
        assert s.runs.load("liveowner01").status == "running"
        s.db.conn.execute("DELETE FROM runs")
    finally:
        d.restore()
