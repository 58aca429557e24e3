"""The embedded model's calibration is kept per machine: a fresh store on a machine that has
timed the model already starts from that timing instead of timing it again (1.2-1.5 s of a
one-shot CLI run), unless what it was measured on has changed.

The calibration itself is replaced by a counted stand-in: these tests are about which
calls are kept and read, not about how fast the model is.
"""
from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from rt_core.config import LOCAL_MODEL
from rt_core.models import calibration, machine_speeds, speeds
from rt_core.store import Store
from rt_core.store.speeds import CallTime

ROOT = Path(__file__).resolve().parents[1]
MEASURED = [CallTime(256, 1, 0.2, calibration=True, at=1e6), CallTime(16, 24, 0.6, calibration=True, at=1e6 + 1)]


@pytest.fixture
def timings(monkeypatch):
    """How many times the model was timed (the stand-in returns the same two calls)."""
    made = []

    def calibrate(model):
        made.append(model)
        return list(MEASURED)

    monkeypatch.setattr(calibration, "calibrate", calibrate)
    return made


def fresh(tmp_path, name: str) -> Store:
    return Store(str(tmp_path / f"{name}.sqlite3"))


def test_a_fresh_store_starts_from_the_machines_calibration(tmp_path, timings):
    first = calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    second_store = fresh(tmp_path, "b")
    second = calibration.speed_for(LOCAL_MODEL, second_store, calibrate=True)
    assert timings == [LOCAL_MODEL]  # timed once, for the first store only
    assert (second.per_read, second.per_write) == pytest.approx((first.per_read, first.per_write))
    assert second.calibrated and second.calls == first.calls
    assert second_store.call_speeds.recent(LOCAL_MODEL) == []  # read, not copied into the store


def test_the_warm_up_is_waited_for_only_when_the_model_is_timed_now(tmp_path, timings):
    """A run hands its wait for the warm-up to the calibration: it is called once, just before
    the model is timed, and never when the speed is known (the estimate is printed at once)."""
    waits = []
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), True, lambda: waits.append(len(timings)))
    assert waits == [0] and timings == [LOCAL_MODEL]  # before the timing, not after it
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "b"), True, lambda: waits.append(len(timings)))
    assert waits == [0]  # the machine's kept calibration: nothing to wait for


def test_a_page_that_only_asks_gets_the_machines_speed_without_timing(tmp_path, timings):
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    asked = calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "b"), calibrate=False)
    assert asked is not None and asked.calibrated and timings == [LOCAL_MODEL]


def test_a_store_with_calls_of_its_own_reads_them_not_the_machines(tmp_path, timings):
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    own = fresh(tmp_path, "b")
    for i in range(4):
        own.call_speeds.add(LOCAL_MODEL, CallTime(300, 20 + 40 * i, 1.0 + 0.1 * i, at=2e6 + i))
    assert not calibration.speed_for(LOCAL_MODEL, own).calibrated


def _another_machine(monkeypatch, tmp_path, change: str) -> None:
    """Change one thing the model's speed depends on, where machine_speeds reads it."""
    import importlib.metadata

    from rt_core.models import local

    if change == "cpu":
        monkeypatch.setattr(machine_speeds, "_cpu_name", lambda: "Another CPU")
    elif change == "build":
        monkeypatch.setattr(machine_speeds, "_llama_build", lambda: "another build")
    elif change == "cores":
        monkeypatch.setattr(machine_speeds.os, "cpu_count", lambda: 64)
    elif change == "llama_cpp":
        monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.9.9")
    else:
        other = tmp_path / "other.gguf"
        other.write_bytes(b"GGUF" * 10)
        monkeypatch.setattr(local, "resolve_model_path", lambda name: other)


@pytest.mark.parametrize("change", ["cpu", "build", "cores", "llama_cpp", "model_bytes"])
def test_a_calibration_made_on_something_else_is_not_used(tmp_path, timings, monkeypatch, change):
    """A new CPU, core count, llama.cpp version or build, or model file may be faster or
    slower: time it again."""
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    assert machine_speeds.read(LOCAL_MODEL)
    _another_machine(monkeypatch, tmp_path, change)
    assert machine_speeds.read(LOCAL_MODEL) == []
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "b"), calibrate=True)
    assert timings == [LOCAL_MODEL, LOCAL_MODEL]


NO_KEY = json.dumps({"version": 1, "models": {LOCAL_MODEL: {"key": 3}}})
ODD_CALLS = json.dumps({"version": 1, "models": {LOCAL_MODEL: {"key": "KEY", "calls": [{"tokens": 3}]}}})


@pytest.mark.parametrize("content", ["", "{not json", NO_KEY, ODD_CALLS])
def test_an_unreadable_file_means_timing_the_model_again(tmp_path, timings, content):
    content = content.replace('"KEY"', json.dumps(machine_speeds.machine_key(LOCAL_MODEL)))
    machine_speeds.path().write_text(content)
    s = calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    assert s is not None and s.calibrated and timings == [LOCAL_MODEL]
    assert machine_speeds.read(LOCAL_MODEL) == [vars(c) for c in MEASURED]  # and kept anew


def test_the_kept_file_holds_counts_and_seconds_only(tmp_path, timings):
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    calls = machine_speeds.read(LOCAL_MODEL)
    assert calls and all(set(c) == {"prompt_tokens", "completion_tokens", "seconds", "calibration", "at"}
                         for c in calls)


def test_each_test_has_its_own_machine():
    """conftest gives every test its own file, so no test's calibration answers another's."""
    assert not machine_speeds.path().exists()


def test_the_command_line_prints_its_estimate_without_waiting_for_the_warm_up_once_timed(
        tmp_path, timings, community, monkeypatch, stem_writing):
    """The command line waits for the warm-up before its estimate only to calibrate alone; a
    model this machine has timed is estimated at once (the first stage still waits). On the
    stem path (`stem_writing`): the facets path makes no call, so it times nothing at all."""
    from rt_core.run.pipeline import simulation
    from rt_core.types import RunConfig, RunRequest

    joined = []

    class Warming:
        def join(self, timeout=None):
            joined.append(True)

    monkeypatch.setattr(simulation, "warm_up", lambda parts, preload=None: Warming())
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)  # an earlier store's
    sim = simulation.Simulation(RunRequest(RunConfig(
        model=LOCAL_MODEL, researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia", "p-llm"], num_reviewers=2)),
        community)
    sim.start(calibrate=True)
    assert joined == [] and timings == [LOCAL_MODEL]
    assert sim.expected.seconds is not None and "short calibration" in sim.expected.text()


def test_the_speed_command_times_the_model_once_then_reads_what_was_kept(timings, capsys):
    from rt_core.__main__ import main

    assert main(["speed"]) == 0
    first = capsys.readouterr().out
    assert main(["speed"]) == 0
    second = capsys.readouterr().out
    assert timings == [LOCAL_MODEL]
    assert "timed now" in first and "as timed earlier" in second
    fitted = speeds.fit(MEASURED)
    assert f"writes about {1 / fitted.per_write:,.0f} tokens a second and reads about {1 / fitted.per_read:,.0f}" \
        in second


def test_the_speed_command_refuses_a_model_it_cannot_time_alone(timings, capsys):
    from rt_core.__main__ import main

    assert main(["speed", "--model", "openai/gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert "is not timed on its own" in err and timings == []


def test_the_apps_start_script_times_the_model_through_the_light_entry(tmp_path):
    """scripts/app runs `python -m rt_core.cli.speed` at every start: it reads what the
    machine kept (no model load here) and refuses a provider with the one-line message."""
    import os
    import subprocess
    import sys

    machine_speeds.keep(LOCAL_MODEL, [vars(c) for c in MEASURED])
    env = {**os.environ, "RT_MACHINE_SPEEDS": str(machine_speeds.path())}
    ok = subprocess.run([sys.executable, "-m", "rt_core.cli.speed"], env=env, capture_output=True, text=True)
    assert ok.returncode == 0 and "as timed earlier" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "rt_core.cli.speed", "--model", "openai/gpt-4o-mini"],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "\nhint: " in bad.stderr
    assert "python -m rt_core.cli.speed" in (ROOT / "scripts/app").read_text()


def test_the_kept_calibration_is_readable_by_an_app_run_as_another_user(tmp_path, timings):
    """`scripts/app` may time the model as one user and the app run as another."""
    calibration.speed_for(LOCAL_MODEL, fresh(tmp_path, "a"), calibrate=True)
    assert stat.S_IMODE(machine_speeds.path().stat().st_mode) == 0o644
