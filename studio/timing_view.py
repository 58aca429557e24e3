"""Wall time in the app: expected before Start, and expected beside taken afterwards.

The figures come from rt_core.run.pipeline.timing (the plan and the speeds measured on
this machine); this module only words them for the pages. The embedded model has no
speed until it has made a call here: the page offers a short calibration (two small
calls) rather than loading the model by itself whenever the Run page is drawn, and a run
started without it times the model before its first stage (run/pipeline/simulation.py).
"""
from __future__ import annotations

import streamlit as st

from rt_core.models import calibration
from rt_core.run.pipeline import timing

from . import render


def expected_caption(expected: timing.Expected, what: str = "") -> None:
    """The expected wall time under an estimate ('This steer: expected wall time ...' when
    `what` names the work), in timing.Expected's words wherever it is said."""
    st.caption(render.md_escape(f"{what}: {expected.text()}." if what else expected.sentence()))


WAITING = "Waiting for the speed measurement under way..."


def calibration_offer(model: str, store, key: str) -> None:
    """For an embedded model with no speed: a button that measures it with a few short calls
    (models/calibration.py: `calibrate`). Once measured, the button goes and the caller draws its
    estimate below it in the same script run. Not `st.rerun()`: a rerun right after a
    calibration swallowed a click on Start made while it was under way (seen in the browser)."""
    if not calibration.calibratable(model):
        return
    if calibration.calibrating(model):  # begun by an earlier script run (a click made meanwhile)
        with st.spinner(WAITING):
            speed = calibration.speed_for(model, store)  # waits for it
    else:
        speed = calibration.speed_for(model, store)
    if speed is not None:
        return
    slot = st.empty()
    if not slot.button("Measure this machine's speed (a few short calls to the embedded model)", key=key):
        return
    with st.spinner("Timing a few short calls..."):
        calibration.speed_for(model, store, calibrate=True)
    slot.empty()


def run_page(config, store) -> None:
    """The Run page's line: the expected wall time of a run with these settings."""
    calibration_offer(config.model, store, "timing_calibrate")
    expected_caption(timing.for_config(config, store))


def credit_caption(run, est, store) -> None:
    """Under credit's estimate: its expected wall time (the variants side by side)."""
    expected_caption(timing.for_credit(run.config, est.calls, est.variants,
                                       len({r.reviewer_id for r in run.reviews}), store))


def revision_caption(plan, store) -> None:
    """Under a revision's estimate: the wall time of its new rounds only (the rest is cached)."""
    expected_caption(timing.for_config(plan.config, store, counted=set(plan.stages)))


def wall_time(store, run_id: str) -> str:
    """'Wall time: estimated about 1 min 20 s, took about 1 min 31 s', or '' when nothing was
    measured: the one wording of a finished run's time (rt_core.run.pipeline.timing.took_text),
    on the Run page, on Results and (its words alone) in History's column and CSV."""
    text = timing.took_text(*store.runs.wall_times([run_id]).get(run_id, (None, None)))
    return f"Wall time: {text}" if text else ""


def results_line(store, run) -> None:
    """The finished run's wall time on the Results page."""
    line = wall_time(store, run.id)
    if line:
        st.caption(render.md_escape(line))


def history_column(store, run_ids) -> list[str]:
    """History's 'wall time' column, one entry per run id ('' when nothing was measured)."""
    ids = list(run_ids)
    times = store.runs.wall_times(ids)
    return [timing.took_text(*times.get(i, (None, None))) for i in ids]
