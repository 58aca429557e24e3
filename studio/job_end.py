"""The end of a background job, drawn the same way on every page that polls one (the Run page's
progress, a revision on Results, a replay). What the end means is rt_core's
(rt_core/run/pipeline/job_end.py); this module only draws it and stops the polling.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from rt_core.run.pipeline.job_end import End, ending

from . import render, state


def draw(job, body: Callable[[], None] | None = None, *, rerun_flag: str, took: str = "") -> End | None:
    """How `job` ended (None, drawing nothing, while it runs): its error in the app's words
    (or the unexpected one), the page's own part of the end (`body`: a run's stage errors, a
    replay's scores), the success line, the way on to the results, then one full rerun: the
    job ended while a fragment polled it, and the rerun stops the polling and gives the page
    back its buttons. `took` is a finished run's wall-time words (studio.timing_view.wall_time),
    the same words Results and History use."""
    end = ending(job, took)
    if end is None:
        return None
    if end.error is not None:
        render.show_error(end.error)
    if end.unexpected:
        st.error(render.md_escape(end.unexpected))
    if body is not None:
        body()
    if end.announce:
        st.success(render.md_escape(end.message), icon="✅")
    if end.results_run and st.button("Open results", key=f"open_results_{end.results_run}",
                                     type="primary"):
        st.session_state["results_run"] = end.results_run
        st.switch_page(state.PAGES["results"])
    rerun_once(rerun_flag)
    return end


def rerun_once(flag: str) -> None:
    """One full rerun per ended job (`flag` names it in the session)."""
    ss = st.session_state
    if not ss.get(flag):
        ss[flag] = True
        st.rerun()
