"""The Run page's live progress of one run: a bar per group of the run's own plan, each
agent's status, calls and cost, and where a failed run stopped.

It reads the run's job (this session's, or a live one of this process that another
session started: `studio.state.job_for`), so a refreshed page or a shared link draws
the same progress. A read-only view (a shared link) has no controls.
"""
from __future__ import annotations

import streamlit as st

from rt_core import access
from rt_core.run.pipeline import progress

from . import identity, job_end, render, state, timing_view

STATUS_ICON = {"started": "⏳", "done": "✅", "failed": "❌", "cached": "♻️"}
# The status box's look for each state of the fold (rt_core/run/pipeline/progress.py).
BOX = {progress.QUEUED: "running", progress.RUNNING: "running", progress.SPENT: "error",
       progress.FAILED: "error", progress.CANCELLED: "error", progress.FINISHED: "complete"}
CACHE_HITS_HIDDEN = ("On a shared server the caches serve every visitor, so a hit could tell you "
                     "about somebody else's run: the count is shown to the operator only.")


MEASURING = ("Timing a few short calls to the embedded model for this run's wall-time estimate "
             "(once on this machine)...")


def _expected_line(sim) -> None:
    """While a run goes: the wall time it is expected to take, or that the model is being timed
    for that estimate first (a first run on this machine: run/pipeline/simulation.py)."""
    expected = getattr(sim, "expected", None)
    if getattr(sim, "measuring", False):
        st.caption(MEASURING)
    elif expected is not None and expected.seconds is not None:
        st.caption(render.md_escape(expected.sentence()))


def show(store, run_id: str, read_only: bool = False) -> None:
    """Live progress of a run of this process; read_only: a shared view (no controls). What
    it shows is decided by rt_core's fold; this draws it, and keeps in the session what each
    bar showed last (the fold's `shown`), so no bar goes backwards on the next poll."""
    ss = st.session_state
    job = state.job_for(run_id)
    if job is None:
        return
    run, done = job.run, job.done
    memory = f"_bars_{run_id}"
    p = progress.for_job(job, ss.get(memory))
    ss[memory] = dict(p.shown)
    names = store.corpus.researcher_names(p.people)

    if p.waiting:
        st.info(render.md_escape(p.waiting), icon="⏳")
    st.progress(p.overall, text=p.meter)
    if not done:
        _expected_line(job.simulation)
    # Not `with st.status(...)`: leaving that block marks the status complete, which drew a
    # check mark beside "Running"; a plain container inside keeps the state we set.
    hits = access.shows_cache_hits(identity.viewer())
    with st.status(p.label(names), state=BOX[p.state], expanded=p.open).container():
        for bar in p.bars:
            st.markdown(f"**{bar.title}**" + (" · ❌ failed here" if bar.failed_here else ""))
            st.progress(bar.fraction, text=f"{int(bar.fraction * 100)}%")
            for line in bar.lines:
                tail = f": {render.short(line.partial, 160)}" if line.partial else ""
                render.show_text(f"{STATUS_ICON.get(line.shown_status(hits), '•')} {line.who(names)}{tail}")
    u = run.usage
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Model calls", u.calls)
    if hits:
        m2.metric("Cache hits", u.cache_hits)
    else:  # a hit may come from a run this visitor may not see (rt_core.access says why)
        m2.metric("Cache hits", "not shown", help=CACHE_HITS_HIDDEN)
    m3.metric("Tokens", f"{u.prompt_tokens + u.completion_tokens:,}",
              help=f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion")
    m4.metric("Cost", f"${u.cost:.4f}")

    if read_only:
        _watching(run_id, job)
        return
    if not done:
        if job.simulation.cancel.is_set():
            st.info("Cancelling after the current model calls; finished work is kept.")
        elif st.button("Cancel", key=f"cancel_{run_id}"):
            job.cancel()
            st.info("Cancelling after the current model calls; finished work is kept.")
        return

    def stage_errors() -> None:
        for e in run.errors:
            st.error(render.stage_error(e, names), icon="⚠️")
            if render.app_hint(e):
                st.caption("💡 " + render.md_escape(render.app_hint(e)))
        for note in run.notes:
            st.info(render.md_escape(note), icon="✂️")

    job_end.draw(job, stage_errors, rerun_flag=f"_final_{run_id}",
                 took=timing_view.wall_time(store, run_id))


def _watching(run_id: str, job) -> None:
    """The end of a shared view: a link to the results once there are any, no controls."""
    end = job_end.ending(job)
    if end is None:
        return
    if end.results_run:
        st.page_link(state.PAGES["results"], label="See the results", icon="📄",
                     query_params={state.RUN_PARAM: run_id})
    job_end.rerun_once(f"_final_{run_id}")  # stop polling
