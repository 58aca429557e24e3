"""The wall time before Start: from the speeds measured on this machine, over the plan's
parallel stages, kept with the run beside the time it took, and printed by the CLI.

Speeds are planted as recorded calls (what the client keeps after every call), so each
test knows the speed the estimate must use; no test asserts how long anything really took.
"""
from __future__ import annotations

import datetime
import json
import threading

import pytest

from rt_core.__main__ import main
from rt_core.config import LOCAL_MODEL
from rt_core.errors import ProviderError
from rt_core.models import calibration, registry, speeds
from rt_core.models.facts import facts_for
from rt_core.run.pipeline import budget, costs, timing
from rt_core.run.pipeline.costs import Calls
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store.speeds import CallTime
from rt_core.types import RunConfig, RunRequest

AUTHORS = ["r-ada", "r-nia", "r-cole"]


@pytest.fixture(autouse=True)
def stem_path(monkeypatch):
    """These tests time the embedded model's stem path: the one it takes when the papers
    share no usable facet. On the facets path it makes no call (tests/test_timing_facets.py)."""
    monkeypatch.setattr(costs, "from_facets", lambda sizes: False)


def config(**kw) -> RunConfig:
    return RunConfig(**{"model": "scripted/demo", "researcher_ids": AUTHORS,
                        "paper_ids": ["p-gaia", "p-llm"], "num_reviewers": 2, **kw})


def plant(store, model: str, per_call: float, per_write: float = 0.0, n: int = 4) -> None:
    """Calls of a provider taking per_call + completion * per_write seconds (no split)."""
    for i in range(n):
        written = 20 + 40 * i
        store.call_speeds.add(model, CallTime(300, written, per_call + written * per_write))


def plant_linear(store, model: str, scale: float = 1.0) -> None:
    """Calls taking 0.1 s, plus 2 ms a prompt token and 25 ms a written token, times `scale`,
    one after another."""
    end = 1e6
    for prompt, written in ((400, 30), (900, 2), (250, 30), (600, 12)):
        seconds = (0.1 + prompt * 0.002 + written * 0.025) * scale
        end += seconds
        store.call_speeds.add(model, CallTime(prompt, written, seconds, at=end))


# -- the speed comes from what was measured ---------------------------------------------------------
def test_reading_and_writing_speeds_are_fitted_from_the_calls(store):
    plant_linear(store, LOCAL_MODEL)
    s = calibration.speed_for(LOCAL_MODEL, store)
    assert s.per_read == pytest.approx(0.002) and s.per_write == pytest.approx(0.025)
    assert s.per_call == pytest.approx(0.1) and s.calls == 4 and not s.calibrated


def test_a_term_that_would_be_negative_is_left_out(store):
    """Every call the same prompt length: reading cannot be told from the round trip, so
    the fit keeps the round trip and the tokens written."""
    plant(store, "scripted/demo", per_call=0.4, per_write=0.01)
    s = calibration.speed_for("scripted/demo", store)
    assert s.per_write == pytest.approx(0.01) and s.per_read >= 0 and s.per_call >= 0
    assert s.seconds(1, 300, 50) == pytest.approx(0.4 + 0.5)


def test_the_estimate_follows_the_measured_speed(community):
    """The same run on the embedded model, estimated on a machine twice as slow, takes twice
    as long; and the figure is the plan at exactly the recorded speeds."""
    cfg = config(model=LOCAL_MODEL)
    plant_linear(community, LOCAL_MODEL)
    fast = timing.for_config(cfg, community)
    speed = calibration.speed_for(LOCAL_MODEL, community)
    assert fast.seconds == pytest.approx(timing.raw_seconds(cfg, facts_for(cfg), community, speed))
    community.db.conn.execute("DELETE FROM call_speeds")
    plant_linear(community, LOCAL_MODEL, scale=2.0)
    assert timing.for_config(cfg, community).seconds == pytest.approx(2 * fast.seconds)
    assert "measured on this machine" in timing.for_config(cfg, community).text()


def test_no_measured_speed_means_no_time_not_a_guess(community):
    e = timing.for_config(config(), community)
    assert e.seconds is None and "not known yet" in e.text()


# -- parallel stages and the client's concurrency ----------------------------------------------------
def test_the_estimate_counts_stages_and_calls_that_run_at_once(community):
    """Every call takes 1 s. The chat plan: 3 profiles, 3 drafts, the merge, 2 reviewer
    profiles, 2 reviews, the meta-review (12 calls). With 4 calls at once each stage takes
    one call's time, so the critical path is 6 s; one at a time, the 12 s of calls."""
    plant(community, "scripted/demo", per_call=1.0)
    assert budget.estimate(config(), community).total.calls == 12
    assert timing.for_config(config(concurrency=4), community).seconds == pytest.approx(6.0)
    assert timing.for_config(config(concurrency=1), community).seconds == pytest.approx(12.0)
    # Two calls at once: the profiles and drafts need two rounds each (2 x 1.5 s), and the
    # 12 s of calls cannot take less than 6 s on two lanes.
    assert timing.for_config(config(concurrency=2), community).seconds == pytest.approx(8.0)


def test_credit_variants_side_by_side(community):
    cfg = config(concurrency=4)
    plant(community, "scripted/demo", per_call=1.0)
    nine = Calls(9, 9, 0, 0)  # 3 variants, each the merge and 2 reviews
    assert timing.for_credit(cfg, nine, 3, 2, community).seconds == pytest.approx(9 / 6)
    # The embedded model: one engine, whose calls were measured two at a time, 1 s each.
    serial = config(model=LOCAL_MODEL)
    plant_in_flight(community, at_once=2)
    assert timing.for_credit(serial, nine, 3, 2, community).seconds == pytest.approx(9 / 2)


def plant_in_flight(store, at_once: int, per_call: float = 1.0, batches: int = 3) -> None:
    """Calls of the embedded model measured `at_once` at a time, each `per_call` seconds."""
    for b in range(batches):
        for i in range(at_once):  # as many tokens written or not: the time is per call
            store.call_speeds.add(LOCAL_MODEL, CallTime(300, 20 + 10 * i + b, per_call,
                                                        at=1e6 + 2 * b * per_call + per_call))


@pytest.mark.parametrize("at_once", [1, 2, 6])
def test_the_embedded_models_calls_take_their_time_over_those_measured_in_flight(community, at_once):
    """Its engine holds six calls, but the time a call was measured at is its time beside
    the calls that really ran with it: the plan's calls (with their usual re-asks) take
    their measured time over the calls measured in flight, not over the six it could hold."""
    plant_in_flight(community, at_once)
    cfg = config(model=LOCAL_MODEL)
    t = budget.estimate(cfg, community).total
    assert registry.calls_at_once(LOCAL_MODEL, 4) == 6
    assert timing.for_config(cfg, community).seconds == pytest.approx(t.typical / at_once)


def test_a_run_keeps_the_estimate_its_start_worked_out(community, demo):
    """Simulation.start works the estimate out once, from the run's own plan and sizes: the
    figures the Run page states for these settings, and the wall time the run keeps beside
    the time it took (what the CLI prints is this same value)."""
    plant_linear(community, "scripted/demo")
    sim = Simulation(RunRequest(config(), max_retries=0), community)
    sim.start()
    assert sim.expected.seconds == pytest.approx(timing.for_config(sim.config, community).seconds)
    assert sim.estimate.total == budget.estimate(sim.config, community).total
    run = sim.run_sync()
    assert community.runs.wall_times([run.id])[run.id][0] == pytest.approx(sim.expected.seconds)


def test_the_estimate_learns_how_far_finished_runs_were_from_it(community, demo):
    """A finished run that took twice what its settings are estimated at today doubles the
    next estimate: the bias of the plan's token counts and of the work between calls."""
    plant(community, "scripted/demo", per_call=1.0)
    cfg = config()
    raw = timing.for_config(cfg, community).seconds
    credit = timing.for_credit(cfg, Calls(9, 9, 0, 0), 3, 2, community)
    run = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    # The run's own calls took 1 s each (planted inside its time), and it took twice the plan.
    community.db.conn.execute("DELETE FROM call_speeds")
    plant(community, "scripted/demo", per_call=1.0)
    began = datetime.datetime.fromisoformat(run.created_at).timestamp()
    community.db.conn.execute("UPDATE call_speeds SET at=?", (began + 1,))
    community.db.conn.execute("UPDATE runs SET wall_seconds=? WHERE id=?", (2 * raw, run.id))
    e = timing.for_config(cfg, community)
    assert e.seconds == pytest.approx(2 * raw) and "x2.00, as 1 earlier run took" in e.text()
    # Credit's merges and reviews are not a run's plan: what the run mis-counted is not theirs.
    later = timing.for_credit(cfg, Calls(9, 9, 0, 0), 3, 2, community)
    assert later.seconds == pytest.approx(credit.seconds) and later.factor == 1.0
    assert "earlier run" not in later.text()
    # Calls are slower now (3 s each): the estimate follows the speed, the bias stays x2.
    plant(community, "scripted/demo", per_call=3.0, n=300)
    community.db.conn.execute("UPDATE call_speeds SET at=? WHERE seconds=3.0", (began + 1000,))
    assert timing.for_config(cfg, community).seconds == pytest.approx(3 * 2 * raw)
    # A run whose replies came from the cache says nothing about how long calls take.
    again = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    assert again.usage.cache_hits and not again.usage.calls
    community.db.conn.execute("UPDATE runs SET wall_seconds=? WHERE id=?", (0.001, again.id))
    assert timing.for_config(cfg, community).seconds == pytest.approx(3 * 2 * raw)


def test_calls_of_other_work_after_a_run_do_not_change_the_speed_its_calls_show(community, demo):
    """The speed comes from one kind of work: the newest run's calls (credit after it keeps
    fewer calls going, so its calls' seconds are of another crowding), until the run has
    left the model's newest `speeds.RECENT` calls: the machine may have changed since."""
    plant(community, "scripted/demo", per_call=1.0)
    cfg = config()
    run = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    community.db.conn.execute("DELETE FROM call_speeds")
    plant(community, "scripted/demo", per_call=1.0)  # the run's own calls, inside its time
    began = datetime.datetime.fromisoformat(run.created_at).timestamp()
    community.db.conn.execute("UPDATE call_speeds SET at=?", (began + 1,))
    community.db.conn.execute("UPDATE runs SET wall_seconds=? WHERE id=?", (10.0, run.id))
    before = calibration.speed_for("scripted/demo", community)
    plant(community, "scripted/demo", per_call=3.0, n=40)  # other work after the run, more calls
    community.db.conn.execute("UPDATE call_speeds SET at=? WHERE seconds=3.0", (began + 1000,))
    assert calibration.speed_for("scripted/demo", community) == before and before.calls == 4
    plant(community, "scripted/demo", per_call=3.0, n=speeds.RECENT)  # the run is out of the window
    community.db.conn.execute("UPDATE call_speeds SET at=? WHERE seconds=3.0", (began + 1000,))
    assert calibration.speed_for("scripted/demo", community).calls == speeds.RECENT


# -- kept with the run --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_estimate_is_kept_with_the_run_and_survives_a_resume(community, scripted, backend):
    from rt_core.models.scripted import demo_responder

    plant(community, "scripted/demo", per_call=1.0)
    cfg = config()
    expected = timing.for_config(cfg, community).seconds
    def merge_fails(messages, params):  # the aggregation prompt fails: the run stops there
        if "Draft 2:" in "\n".join(m["content"] for m in messages):
            raise ProviderError("the provider fell over", "Try again.")
        return demo_responder(messages, params)

    scripted.responder = merge_fails
    first = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    assert first.status == "failed"
    est, wall = community.runs.wall_times([first.id])[first.id]
    assert est == pytest.approx(expected) and wall is not None and wall >= 0
    calls_kept = len(community.call_speeds.recent("scripted/demo", 500))
    # The client kept every call that reached the model (the planted 4, then the run's).
    assert calls_kept == 4 + first.usage.calls
    # Slower calls since: a new run would be estimated longer, but the resumed run keeps
    # the estimate it started with, and adds the second attempt's time to the first's.
    plant(community, "scripted/demo", per_call=50.0, n=40)
    scripted.responder = demo_responder
    again = Simulation(RunRequest(cfg, max_retries=0), community, run_id=first.id, resume=True).run_sync()
    assert again.status == "done"
    est2, wall2 = community.runs.wall_times([first.id])[first.id]
    assert est2 == pytest.approx(expected) and wall2 >= wall
    assert timing.took_text(est2, wall2).startswith("estimated about 6 s, took about ")


def test_a_revision_adds_its_own_estimate(community, demo):
    from rt_core.run.revision import more

    plant(community, "scripted/demo", per_call=1.0)
    cfg = config(num_reviewers=1)
    run = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    before, _ = community.runs.wall_times([run.id])[run.id]
    community.db.conn.execute("DELETE FROM call_speeds")  # the run's own calls: planted again
    plant(community, "scripted/demo", per_call=1.0)
    p = more.plan(community.runs.load(run.id), 1, community)
    speed = calibration.speed_for("scripted/demo", community)
    # the rewrite, one review, the meta-review, in a row (before the bias of the run above)
    assert timing.raw_seconds(p.config, facts_for(p.config), community, speed, set(p.stages)) == pytest.approx(3.0)
    added = timing.for_config(p.config, community, counted=set(p.stages)).seconds
    more.revise_finished(community, run.id, 1)
    assert community.runs.wall_times([run.id])[run.id][0] == pytest.approx(before + added)


# -- the command line ---------------------------------------------------------------------------
def test_the_cli_states_the_time_before_run_credit_and_revise(tmp_path, demo, capsys):
    from rt_core.store import open_store

    db = str(tmp_path / "cli.sqlite3")
    out = tmp_path / "run.json"
    run_args = ["--db", db, "run", "--model", "scripted/demo", "--researchers",
                "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854", "--reviewers", "1",
                "--out-json", str(out)]
    assert main(run_args) == 0
    err = capsys.readouterr().err
    assert "wall time not known yet (model 'scripted/demo' has made no call" in err
    run_id = json.loads(out.read_text())["id"]
    store = open_store(db)
    store.db.conn.execute("DELETE FROM call_speeds")
    store.db.conn.execute("UPDATE runs SET wall_seconds=NULL")  # no bias learnt from that run
    plant(store, "scripted/demo", per_call=1.0)
    store.close()
    assert main(run_args) == 0  # every call cached now: the estimate is of a fresh run
    assert "expected wall time about 6 s (from 4 calls measured on this machine)" in capsys.readouterr().err
    assert main(["--db", db, "revise", run_id, "--rounds", "1"]) == 0
    assert "Expected wall time about 3 s" in capsys.readouterr().err
    assert main(["--db", db, "credit", run_id, "--no-progress", "--out-dir", str(tmp_path / "c")]) == 0
    assert "; expected wall time about " in capsys.readouterr().err
    code = main(["--db", db, "ideate", *run_args[3:9], "--candidates", "2", "--reviewers", "1",
                 "--out-dir", str(tmp_path / "i"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.index("; expected wall time about ") < err.index("best: ")


def test_the_embedded_model_is_calibrated_by_a_few_short_calls(store):
    """With nothing recorded, the CLI's estimate for the embedded model times two small
    calls (one mostly reading, one mostly writing) and keeps them, so both speeds are known
    and the next estimate reads them from the store."""
    e = timing.for_config(config(model=LOCAL_MODEL), store, calibrate=True)
    kept = store.call_speeds.recent(LOCAL_MODEL)
    assert len(kept) == 2 and all(k.calibration for k in kept)
    s = calibration.speed_for(LOCAL_MODEL, store)
    assert s.calibrated and s.per_call == 0 and s.per_read + s.per_write > 0
    assert e.seconds > 0 and "short calibration" in e.text()
    assert timing.for_config(config(model=LOCAL_MODEL), store, calibrate=True).seconds == e.seconds
    assert len(store.call_speeds.recent(LOCAL_MODEL)) == 2  # measured once, then read


def test_credit_counts_the_full_proposal_when_a_later_stage_changed_it(community, scripted):
    """After candidates the full proposal is written again (the plain merge and its reviews):
    the estimate, and so the time, counts those calls, as many as credit makes."""
    from rt_core.run.credit import variants as credit
    from tests import credit_script

    demo = scripted
    demo.responder = credit_script.responder
    run = Simulation(RunRequest(config(candidates=2), max_retries=0), community).run_sync()
    assert run.status == "done"
    est = credit.estimate(run, community)
    demo.history.clear()
    result = credit.leave_one_out(run, community, save=False)
    assert result.calls_by_variant[credit.FULL] == 3  # the merge, two reviews
    assert est.calls.calls == result.usage.calls == len(demo.history)


def test_calibration_calls_are_fit_on_reading_and_writing_alone():
    """Two calls fit a per-call and a writing term exactly (here 1.98 s a call and reading
    unknown): the calibration's two calls must give both token speeds instead."""
    calls = [speeds.CallTime(prompt_tokens=400, completion_tokens=1, seconds=2.0, calibration=True),
             speeds.CallTime(prompt_tokens=20, completion_tokens=60, seconds=3.0, calibration=True)]
    s = speeds.fit(calls)
    assert s.per_call == 0
    assert s.per_read == pytest.approx(0.0048791, rel=1e-3)
    assert s.per_write == pytest.approx(0.048373, rel=1e-3)


def test_an_estimate_of_nothing_to_run_reads_as_a_sentence():
    """`replay` with every mode already stored estimates no run at all; its line must still
    print (it raised AttributeError on the missing speed, failing the CLI before any work)."""
    assert timing.combined([]).text() == "no model call expected, so no wait"


def test_a_caller_waits_for_a_calibration_under_way_instead_of_reading_no_speed(store, monkeypatch):
    """In the app a click on Start during "Measure this machine's speed" starts a new script
    run at once, while the old one still calibrates in its thread: the new one must wait for
    that calibration and read its speed, not find the store empty and start the run with no
    estimate. The calibration here is the real one, held at its start until the other caller
    has looked in the store once."""
    real_calibrate, real_calls = calibration.calibrate, speeds.speed_calls
    calibrating, looked = threading.Event(), threading.Event()

    def held_calibrate(model):
        calibrating.set()
        assert looked.wait(60), "the other caller never looked for a speed"
        return real_calibrate(model)

    def watched_calls(model, store_):
        out = real_calls(model, store_)
        if threading.current_thread().name == "reader":
            looked.set()
        return out

    monkeypatch.setattr(calibration, "calibrate", held_calibrate)
    monkeypatch.setattr(speeds, "speed_calls", watched_calls)
    measured: list = []
    measuring = threading.Thread(target=lambda: measured.append(calibration.speed_for(LOCAL_MODEL, store, True)))
    measuring.start()
    assert calibrating.wait(60)
    assert calibration.calibrating(LOCAL_MODEL)
    read: list = []
    reader = threading.Thread(target=lambda: read.append(calibration.speed_for(LOCAL_MODEL, store)), name="reader")
    reader.start()
    reader.join(120)
    measuring.join(120)
    assert measured[0] is not None and measured[0].calibrated
    assert read == measured and not calibration.calibrating(LOCAL_MODEL)
    assert len(store.call_speeds.recent(LOCAL_MODEL)) == 2  # calibrated once


@pytest.mark.parametrize("door", ["cli", "app"])
def test_a_calibration_times_the_model_only_once_the_warm_up_is_in(community, monkeypatch, door):
    """The command line calibrates in `start`, the app's first run before its first stage:
    both wait for the warm-up first (litellm's import beside it slowed the calibration's
    decodes 2.7x here, and the estimate took that speed)."""
    from rt_core.run.pipeline import simulation

    order: list[str] = []

    class Warming:
        def join(self, timeout=None):
            order.append("warm-up in")

    def calibrate(model):
        order.append("calibrated")
        return [CallTime(256, 1, 0.1, calibration=True, at=1e6), CallTime(16, 24, 0.3, calibration=True, at=1e6 + 1)]

    monkeypatch.setattr(simulation, "warm_up", lambda parts, preload=None: Warming())
    monkeypatch.setattr(calibration, "calibrate", calibrate)
    sim = Simulation(RunRequest(config(model=LOCAL_MODEL)), community)
    if door == "cli":
        sim.start(calibrate=True)
    else:
        sim.start()
        registry.run_async(sim._measure_if_unknown())
    assert order[-1] == "calibrated" and "warm-up in" in order[:-1]
    assert sim.expected is not None and sim.expected.seconds is not None
