"""The wall time in the app (AppTest): expected on the Run page from the speeds this
machine measured, and 'estimated X, took Y' on Results and in History after a run."""
from __future__ import annotations

import re

import pytest

from rt_core.config import LOCAL_MODEL
from rt_core.store.speeds import CallTime
from tests.apphelp import captions, errors, goto, module_data_dir, run_page

data_dir = module_data_dir("timing-app")


@pytest.fixture
def model(demo):
    return demo


@pytest.fixture(autouse=True)
def stem_path(monkeypatch):
    """The calibration these tests walk through times the embedded model's stem path (taken
    when the papers share no facet); on the facets path it makes no call, so it needs no
    speed (tests/test_timing_facets.py)."""
    from rt_core.run.pipeline import costs

    monkeypatch.setattr(costs, "from_facets", lambda sizes: False)


def store():
    from rt_core.store import open_store

    return open_store()


def plant(per_call: float) -> None:
    """Replace the scripted model's recorded calls with four of `per_call` seconds each."""
    s = store()
    s.db.conn.execute("DELETE FROM call_speeds")
    for written in (20, 60, 100, 140):
        s.call_speeds.add("scripted/demo", CallTime(300, written, per_call))




def seconds_in(text: str) -> int:
    """The expected wall time a caption states, in seconds."""
    m = re.search(r"Expected wall time about (?:(\d+) min ?)?(?:(\d+) s)?", text)
    assert m, text
    return int(m.group(1) or 0) * 60 + int(m.group(2) or 0)


def test_the_run_page_states_the_time_from_the_measured_speed(model):
    store().db.conn.execute("DELETE FROM call_speeds")
    at = run_page()
    assert "Wall time not known yet (model 'scripted/demo' has made no call" in captions(at)
    plant(1.0)
    at.run()
    text = captions(at)
    assert "(from 4 calls measured on this machine)" in text
    one = seconds_in(text)
    plant(10.0)  # the same run on a machine ten times slower
    at.run()
    assert seconds_in(captions(at)) == pytest.approx(10 * one, abs=10)
    assert one > 0


def test_the_embedded_model_offers_to_measure_its_speed():
    at = run_page("Embedded offline demo model")
    assert at.session_state["model"] == LOCAL_MODEL
    assert "Wall time not known yet" in captions(at)
    assert any(b.key == "timing_calibrate" for b in at.button)


def test_a_machine_that_timed_the_model_before_states_the_time_on_a_fresh_store():
    """What a newcomer meets after `scripts/app` (which times the model once per machine):
    the Run page of a store with no calls states the time, with no button to measure."""
    from rt_core.models import machine_speeds

    store().db.conn.execute("DELETE FROM call_speeds")
    machine_speeds.keep(LOCAL_MODEL, [vars(CallTime(256, 1, 0.1, calibration=True, at=1e6)),
                                      vars(CallTime(16, 24, 0.3, calibration=True, at=1e6 + 1))])
    at = run_page("Embedded offline demo model")
    assert "from a short calibration on this machine" in captions(at), captions(at)
    assert "Wall time not known yet" not in captions(at)
    assert not any(b.key == "timing_calibrate" for b in at.button)


@pytest.mark.slow
def test_measuring_the_speed_draws_the_estimate_in_the_same_run_without_a_rerun(monkeypatch):
    """The calibration button measures the embedded model (real calls) and the estimate is drawn
    below it in the same script run: a rerun there swallowed a Start clicked meanwhile."""
    import streamlit as st

    store().db.conn.execute("DELETE FROM call_speeds")
    at = run_page("Embedded offline demo model")
    reruns = []
    original = st.rerun
    monkeypatch.setattr(st, "rerun", lambda *a, **kw: (reruns.append(a), original(*a, **kw)))
    at.button(key="timing_calibrate").click().run()
    assert not at.exception and not reruns
    assert "from a short calibration on this machine" in captions(at), captions(at)
    assert "Wall time not known yet" not in captions(at)
    assert not any(b.key == "timing_calibrate" for b in at.button), "the button stays after measuring"


def test_results_and_history_show_the_estimate_beside_the_time_taken(model):
    plant(1.0)
    at = run_page()
    at.session_state["num_reviewers"] = 0
    at.run()
    at.button(key="run_start").click().run()
    assert not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300)
    est, wall = store().runs.wall_times([job.run_id])[job.run_id]
    assert est is not None and wall is not None
    at.run()
    goto(at, "results")
    assert re.search(r"Wall time: estimated about .+, took about ", captions(at)), captions(at)
    goto(at, "history")
    table = at.dataframe[0].value
    row = list(table["id"]).index(job.run_id)
    assert list(table["wall time"])[row].startswith("estimated about ")


def test_a_page_drawn_during_a_calibration_waits_for_it_and_shows_its_estimate(monkeypatch):
    """A script run that starts while another one calibrates (a click made meanwhile) says it
    is waiting, then draws the estimate from that calibration: no second button, no
    "not known yet". The calibration is another thread holding the model's calibration lock;
    it stores its calls once the page, having said it is waiting, has looked in the store."""
    import threading

    import streamlit as st

    from rt_core.models import calibration, speeds
    from studio import timing_view

    store().db.conn.execute("DELETE FROM call_speeds")
    at = run_page("Embedded offline demo model")
    waiting, looked, held = threading.Event(), threading.Event(), threading.Event()
    original, real_calls = st.spinner, speeds.speed_calls

    def watched_calls(model, store_):
        out = real_calls(model, store_)
        if waiting.is_set():
            looked.set()
        return out

    def spinner(text, *a, **kw):
        if text == timing_view.WAITING:
            waiting.set()
        return original(text, *a, **kw)

    def held_calibration():
        with calibration.calibration_lock(LOCAL_MODEL):
            held.set()
            looked.wait(120)
            s = store()
            for written, seconds in ((1, 0.4), (24, 0.9)):
                s.call_speeds.add(LOCAL_MODEL, CallTime(300 if written == 1 else 20, written, seconds,
                                                        calibration=True, at=1.0e9 + seconds))

    monkeypatch.setattr(st, "spinner", spinner)
    monkeypatch.setattr(speeds, "speed_calls", watched_calls)
    measuring = threading.Thread(target=held_calibration)
    measuring.start()
    assert held.wait(60)
    at.run()
    measuring.join(60)
    assert waiting.is_set(), "the page did not say it was waiting"
    assert not at.exception
    assert "from a short calibration on this machine" in captions(at), captions(at)
    assert "Wall time not known yet" not in captions(at)
    assert not any(b.key == "timing_calibrate" for b in at.button)


def _progress_line(measuring: bool, seconds: float | None) -> None:
    """A running run's line under its progress bar (studio/progress.py), for a run whose
    simulation is timing the model (`measuring`) or expects `seconds`."""
    import types

    from rt_core.models import speeds
    from rt_core.run.pipeline.timing import Expected
    from rt_core.store.speeds import CallTime
    from studio import progress

    speed = speeds.fit([CallTime(300, 20, 1.0), CallTime(300, 120, 4.0)])
    sim = types.SimpleNamespace(measuring=measuring, expected=Expected("local/gemma-3-270m", seconds, speed))
    progress._expected_line(sim)


def test_a_first_run_says_it_times_the_model_then_states_its_expected_time():
    """A first run on this machine times the embedded model before its first stage
    (run/pipeline/simulation.py, `_measure_if_unknown`): its progress says so, and then
    shows the time it is expected to take."""
    from streamlit.testing.v1 import AppTest

    from studio import progress

    at = AppTest.from_function(_progress_line, args=(True, None)).run()
    assert captions(at) == progress.MEASURING
    at = AppTest.from_function(_progress_line, args=(False, 83.0)).run()
    assert captions(at) == "Expected wall time about 83 s (from 2 calls measured on this machine)."
    at = AppTest.from_function(_progress_line, args=(False, None)).run()
    assert not at.caption  # not known, not being measured: nothing to say
