"""The Run page's live progress of one run: a bar per group of the run's own plan, each
agent's status, calls and cost, and where a failed run stopped.

It reads the run's job (this session's, or a live one of this process that another
session started: `studio.state.job_for`), so a refreshed page or a shared link draws
the same progress. A read-only view (a shared link) has no controls.
"""
from __future__ import annotations

import streamlit as st

from rt_core import access, agents
from rt_core.errors import AllowanceSpent
from rt_core.run.pipeline import plan

from . import identity, render, state, timing_view

STATUS_ICON = {"started": "⏳", "done": "✅", "failed": "❌", "cached": "♻️"}
CACHE_HITS_HIDDEN = ("On a shared server the caches serve every visitor, so a hit could tell you "
                     "about somebody else's run: the count is shown to the operator only.")


def _status(status: str, hits: bool) -> str:
    """An agent answered from the cache alone reads as done where hits are not shown."""
    return "done" if status == "cached" and not hits else status


def _failed_where(run, by_stage: dict) -> tuple[str, str]:
    """(group, agent) where a failed run stopped: the stage its run-level error names (the
    runner records the failing stage's group), else the last agent that failed."""
    group_of = {s.name: s.group for s in plan.plan_for(run.config)}
    for e in reversed(run.errors):
        if e.agent == "run":
            return group_of.get(e.stage) or e.stage, ""
    for stage, seen in reversed(list(by_stage.items())):
        for agent, ev in seen.items():
            if ev.status == "failed":
                return stage, agent
    return (run.errors[-1].stage, run.errors[-1].agent) if run.errors else ("", "")


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
    """Live progress of a run of this process; read_only: a shared view (no controls)."""
    ss = st.session_state
    job = state.job_for(run_id)
    if job is None:
        return
    events = job.snapshot()
    run = job.run
    done = job.done
    # One bar per group of the run's own plan (rt_core.run.pipeline.plan), the plan the runner executes.
    bar_titles = dict(plan.progress_groups(run.config))
    groups = list(bar_titles)
    by_stage: dict[str, dict[str, object]] = {}
    totals: dict[str, int] = {}
    authors = set(run.config.researcher_ids)
    queue_event = None
    for e in events:
        if e.stage == "queue":
            queue_event = e
            continue
        stage = e.stage
        if stage == "read" and e.agent not in authors:
            # Reviewers' profiles are read during reviewing: counting them under Reading
            # would pull its finished bar back (6 of 6, then 6 of 9).
            by_stage.setdefault("review", {})[f"profile:{e.agent}"] = e
            continue
        by_stage.setdefault(stage, {})[e.agent] = e
        totals[stage] = max(totals.get(stage, 0), e.total)
    names = store.corpus.researcher_names(agents.people(
        [*(a for s in by_stage.values() for a in s), *(e.agent for e in run.errors)]))

    fractions = []
    for stage in groups:
        in_stage = by_stage.get(stage, {})
        total = max(len(in_stage), totals.get(stage, 0))
        finished = sum(1 for e in in_stage.values() if e.status != "started")
        fractions.append(finished / total if total else 0.0)
    # Bars never go backwards: a stage that learns of more work keeps what it showed.
    seen = ss.setdefault(f"_bars_{run_id}", {})
    fractions = [max(f, seen.get(stage, 0.0)) for stage, f in zip(groups, fractions, strict=True)]
    seen.update(zip(groups, fractions, strict=True))
    current = next((s for s in reversed(groups) if s in by_stage), groups[0])
    failed = done and (job.error is not None or bool(job.unexpected) or run.status == "failed")
    finished_ok = done and not failed and run.status == "done"
    overall = 1.0 if finished_ok else min(0.99, sum(fractions) / max(1, len(groups)))
    overall = max(overall, seen.get("_overall", 0.0))
    seen["_overall"] = overall

    waiting = (not done and queue_event is not None and queue_event.status == "waiting"
               and not by_stage)
    if waiting:
        st.info(f"Waiting for the embedded model, which serves one run at a time: "
                f"{render.md_escape(queue_event.partial)}.", icon="⏳")
    if waiting:
        label, box = "Queued for the embedded model", "running"
    elif not done:
        label, box = f"Running · {bar_titles.get(current, current)}", "running"
    elif failed and run.errors and run.errors[-1].kind == AllowanceSpent.__name__:
        label, box = (f"Run {run_id} stopped: the shared demo's tokens for today are used up; "
                      "finished work is kept"), "error"
    elif failed:
        where, who = _failed_where(run, by_stage)
        at = f" while {bar_titles.get(where, render.stage_title(where)) if where else 'starting'}"
        by = f" ({agents.label(who, names)})" if who else ""
        label, box = f"Run {run_id} failed{at}{by}", "error"
    elif run.status == "cancelled":
        label, box = f"Run {run_id} cancelled: finished work is kept", "error"
    else:
        label, box = f"Run {run_id} finished", "complete"
    stopped = f"stopped at {int(overall * 100)}%" if done and not finished_ok else f"{int(overall * 100)}%"
    st.progress(overall, text=f"{stopped} · {len(events)} progress events")
    if not done:
        _expected_line(job.simulation)
    where = _failed_where(run, by_stage)[0] if failed else ""
    # Not `with st.status(...)`: leaving that block marks the status complete, which drew a
    # check mark beside "Running"; a plain container inside keeps the state we set.
    hits = access.shows_cache_hits(identity.viewer())
    with st.status(label, state=box, expanded=not done or failed).container():
        for stage, frac in zip(groups, fractions, strict=True):
            listed = by_stage.get(stage, {})
            st.markdown(f"**{bar_titles[stage]}**" + (" · ❌ failed here" if stage == where else ""))
            st.progress(frac, text=f"{int(frac * 100)}%")
            for agent, e in listed.items():
                who = agents.label(agent, names) + (" (reading their papers)"
                                                    if agent.startswith(agents.PROFILE) else "")
                tail = f": {render.short(e.partial, 160)}" if e.partial else ""
                render.show_text(f"{STATUS_ICON.get(_status(e.status, hits), '•')} {who}{tail}")
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
        _watching(run_id, run, done)
        return
    if not done:
        if job.simulation.cancel.is_set():
            st.info("Cancelling after the current model calls; finished work is kept.")
        elif st.button("Cancel", key=f"cancel_{run_id}"):
            job.cancel()
            st.info("Cancelling after the current model calls; finished work is kept.")
        return

    if job.error is not None:
        render.show_error(job.error)
    if job.unexpected:
        st.error(f"The run stopped unexpectedly: {render.md_escape(job.unexpected)}")
    for e in run.errors:
        st.error(render.stage_error(e, names), icon="⚠️")
        if render.app_hint(e):
            st.caption("💡 " + render.md_escape(render.app_hint(e)))
    for note in run.notes:
        st.info(render.md_escape(note), icon="✂️")
    if run.status == "done":
        took = timing_view.wall_time(store, run_id)  # History's and Results' words
        st.success(render.md_escape(f"Done. {took}." if took else "Done.") +
                   " The proposal, reviews and scores are on the Results page.", icon="✅")
    if (run.proposal is not None or run.status == "done") and st.button(
            "Open results", key=f"open_results_{run_id}", type="primary"):
            ss["results_run"] = run_id
            st.switch_page(state.PAGES["results"])
    if not ss.get(f"_final_{run_id}"):
        # The job ended while the fragment was polling: one full rerun stops the polling
        # and re-enables the Start button.
        ss[f"_final_{run_id}"] = True
        st.rerun()


def _watching(run_id: str, run, done: bool) -> None:
    """The end of a shared view: a link to the results once there are any, no controls."""
    ss = st.session_state
    if done and (run.proposal is not None or run.status == "done"):
        st.page_link(state.PAGES["results"], label="See the results", icon="📄",
                     query_params={state.RUN_PARAM: run_id})
    if done and not ss.get(f"_final_{run_id}"):
        ss[f"_final_{run_id}"] = True
        st.rerun()  # stop polling
