"""Every stage of every plan returns what it made (issue 50, point 1).

A stage reads the run's state and returns a frozen output that the runner folds in when it
ends; it never writes the run's record or another stage's part itself. The one exception is
the recorder's route (`Recorder.keep`, and `Recorder.fail` for an agent's error): an agent's
output written on the run the moment it arrives, so a failed stage keeps what finished.

How it is checked: every runner of the test (the runs' own, a replay's, and the runs a
replay, a revision or leave-one-out credit starts) runs its stages one at a time, each stage's
state (the run serialised, and the state's stage parts: RunState's or the Replay's) is
taken before its action and again after the action returns and before the fold, and any
difference is a stage that wrote state itself, named in the failure. Allowed: the run's
parts the stage wrote through the recorder's route while it went, and the usage (the
model client's meter, counted as each call is made so the budget sees it).
"""
from __future__ import annotations

import asyncio
import dataclasses
import json

import numpy as np
import pytest

from rt_core import community
from rt_core.run.pipeline import runner as runner_mod
from rt_core.run.pipeline.recorder import Recorder
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.pipeline.state import RunState
from rt_core.run.replay.paper import Replay
from rt_core.types import RunConfig, RunRequest
from tests.revisehelp import improving

# RunState's fields other than the run's fixed context: what stages hand each other (a field
# added later is watched without touching this test).
CONTEXT = {"request", "store", "run", "client", "ctx", "style", "recorder", "embedder", "cutoff_year"}
STATE_PARTS = tuple(f.name for f in dataclasses.fields(RunState) if f.name not in CONTEXT)
REPLAY_PARTS = ("reference", "band", "errors")
METER = {"usage"}  # written by the model client on every call, whoever makes it


def plain(obj):
    """A comparable, JSON-able view of a state part (numbers, text, lists and dicts)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    if isinstance(obj, set | frozenset):
        return sorted(map(repr, obj))
    if isinstance(obj, np.ndarray):
        return obj.round(6).tolist()
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return repr(obj)


def snapshot(state) -> dict[str, str]:
    """Part name -> its serialised value: the run's parts and the state's own."""
    if isinstance(state, RunState):
        parts = {f"run.{k}": v for k, v in state.run.to_dict().items()}
        parts |= {k: plain(getattr(state, k)) for k in STATE_PARTS}
    elif isinstance(state, Replay):
        parts = {k: plain(getattr(state, k)) for k in REPLAY_PARTS}
        for mode, sim in state.sims.items():  # what the shared stages hand every mode
            parts |= {f"{mode}.{k}": plain(getattr(sim.state, k)) for k in ("reference", "candidate_vectors",
                                                                             "candidates_error")}
    else:
        raise AssertionError(f"a runner over a state this test does not know: {type(state).__name__}")
    return {k: json.dumps(v, sort_keys=True, default=repr) for k, v in parts.items()}


@pytest.fixture
def watched(monkeypatch):
    """Every runner started in the test runs its stages one at a time per state and checks
    each; returns the list of (stage, parts it wrote) found."""
    wrote: list[tuple[str, list[str]]] = []
    locks: dict[int, asyncio.Lock] = {}
    keep, fail = Recorder.keep, Recorder.fail
    runner_init = runner_mod.Runner.__init__

    def kept(self, part, write):
        self.__dict__.setdefault("touched", set()).add(f"run.{part}")
        keep(self, part, write)

    def failed(self, stage, agent, exc):
        self.__dict__.setdefault("touched", set()).add("run.errors")
        fail(self, stage, agent, exc)

    def checking(stage, state):
        """The stage's action, run alone among its state's stages, with the state taken before
        it and after it returns (before the runner folds its output)."""
        async def action(st):
            async with locks.setdefault(id(state), asyncio.Lock()):
                recorder = getattr(st, "recorder", None)
                if recorder is not None:
                    recorder.touched = set()
                before = snapshot(st)
                output = await stage.action(st)
                after = snapshot(st)
                allowed = (recorder.touched if recorder is not None else set()) | {f"run.{m}" for m in METER}
                changed = sorted(k for k in before.keys() | after.keys()
                                 if before.get(k) != after.get(k) and k not in allowed)
                if changed:
                    wrote.append((stage.name, changed))
                return output
        return action

    def init(self, plan, state, *args, **kwargs):
        checked = [dataclasses.replace(s, action=checking(s, state)) for s in plan]
        runner_init(self, checked, state, *args, **kwargs)

    monkeypatch.setattr(Recorder, "keep", kept)
    monkeypatch.setattr(Recorder, "fail", failed)
    monkeypatch.setattr(runner_mod.Runner, "__init__", init)
    return wrote


def case_study(store, **cfg) -> RunRequest:
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    return RunRequest(RunConfig(**{"model": "scripted/demo", "researcher_ids": preset["researcher_ids"],
                                   "paper_ids": preset["paper_ids"], "num_reviewers": 2, **cfg}),
                      max_retries=0)


def finished(store, request):
    run = Simulation(request, store).run_sync()
    assert run.status == "done", run.errors
    return run


@pytest.mark.parametrize("plan, cfg", [
    ("single, with the novelty check and an evaluation", dict(check_novelty=True,
                                                              reference_paper_id="arxiv:2208.00211")),
    ("brainstorm: candidates, tournament, novelty", dict(candidates=3, check_novelty=True)),
    ("the agent mode: profiles without the papers", dict(mode="agent")),
])
def test_no_stage_of_a_run_writes_state(store, demo, watched, plan, cfg):
    assert "candidates" in STATE_PARTS and "reviewer_ids" in STATE_PARTS  # the watch sees them
    finished(store, case_study(store, **cfg))
    assert watched == [], f"{plan}: stages that wrote state themselves: {watched}"


def test_no_stage_of_revision_rounds_writes_state(store, scripted, watched):
    scripted.responder = improving(ceiling=6)
    run = finished(store, case_study(store, revision_rounds=2))
    assert len(run.rounds) > 1
    assert watched == [], f"stages that wrote state themselves: {watched}"


def test_more_rounds_of_a_finished_run_write_no_state(store, scripted, watched):
    from rt_core.run.revision import more

    scripted.responder = improving(ceiling=10)
    base = finished(store, case_study(store))
    run = more.revise_finished(store, base.id, 2)
    assert run.status == "done" and len(run.rounds) == 3
    assert watched == [], f"stages that wrote state themselves: {watched}"


def test_a_steer_writes_no_state(store, demo, watched):
    from rt_core.run.steer.steer import Steer, steer

    base = finished(store, case_study(store))
    done = steer(store, base.id, Steer(question=1, text="How can star catalogues find agents?", rounds=1),
                 request_for=lambda c: RunRequest(c, max_retries=0))
    assert done.nodes
    assert watched == [], f"stages that wrote state themselves: {watched}"


def test_no_stage_of_a_replay_writes_state(store, demo, watched):
    community.ensure_loaded(store)
    result = Replay(RunRequest(RunConfig(model="scripted/demo", num_reviewers=2), max_retries=0), store,
                    "arxiv:2410.16179", modes=["self", "global"]).run_sync()
    assert {r["status"] for r in result.rows()} == {"done"}
    assert watched == [], f"stages that wrote state themselves: {watched}"


def test_the_runs_of_leave_one_out_credit_write_no_state(store, demo, watched):
    from rt_core.run.credit import variants as credit

    base = finished(store, case_study(store))
    result = credit.leave_one_out(base, store, save=False)
    assert result.credits
    assert watched == [], f"stages that wrote state themselves: {watched}"


# -- the watch itself: a stage that writes state is caught and named -------------------------------
def test_a_brainstorm_stage_that_writes_state_is_named(store, demo, watched, monkeypatch):
    from rt_core.run.candidates import stages

    merge = stages.merge

    async def merge_and_write(state):
        out = await merge(state)
        state.candidates.vectors = out.vectors  # the fold's job, done by the stage
        return out

    monkeypatch.setattr(stages, "merge", merge_and_write)
    finished(store, case_study(store, candidates=3))
    assert watched == [("merge_candidates", ["candidates"])]


def test_a_replay_stage_that_writes_state_is_named(store, demo, watched, monkeypatch):
    from rt_core.run.replay import paper

    chance = paper._chance

    async def chance_and_write(r):
        out = await chance(r)
        r.band = out.band  # the fold's job, done by the stage
        return out

    monkeypatch.setattr(paper, "_chance", chance_and_write)
    community.ensure_loaded(store)
    Replay(RunRequest(RunConfig(model="scripted/demo", num_reviewers=2), max_retries=0), store,
           "arxiv:2410.16179", modes=["self"]).run_sync()
    assert watched == [("chance", ["band"])]
