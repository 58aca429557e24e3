"""The Results page's revision rounds: how the scores moved, what changed, and why.

A run with revision rounds keeps every round (rt_core/run/revision/rounds.py). This view shows
the score trajectory per reviewer (the same reviewers score every round, so their
lines compare), why the rounds stopped, and for each round the answers the authors
rewrote: which weakness each one answers (a reviewer's own words, an automatic check,
or none named) and a word-level diff. Model text is shown as text: the diff goes
through st.code, never HTML.

Below them, a finished run with reviews and fewer than the most rounds can be revised
afterwards (rt_core/run/revision/more.py): the estimate of the new calls first, then a
button that resumes the run in a background job (rt_core/run/pipeline/jobs.py, so a refresh
finds it again), its progress, and then this view with the new rounds. A read-only
view (a shared link) never shows the button.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from rt_core import agents
from rt_core.errors import RTError
from rt_core.fiveq import BY_KEY
from rt_core.run.pipeline import budget
from rt_core.run.revision import more as revise_more
from rt_core.run.revision import rounds as revise
from rt_core.run.revision.diff import diff_lines, proposal_diff
from rt_core.run.revision.report import stop_words
from rt_core.types import Round, Run

from . import fields, polling, render, resources, state, timing_view
from . import request as studio_request
from .charts import LEGEND, PLOT_CONFIG
from .render import plot_escape

_REVIEWER_COLOURS = ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#72B7B2", "#EECA3B", "#9D755D"]
MEAN_COLOUR = "#E45756"


def trajectory_figure(rounds: list[Round], names: dict[str, str]):
    """One line per reviewer (score by round) and the mean, dashed."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    xs = [r.number for r in rounds]
    ids = list(dict.fromkeys(rv.reviewer_id for r in rounds for rv in r.reviews))
    fig = go.Figure()
    for i, rid in enumerate(ids):
        ys = [next((rv.score for rv in r.reviews if rv.reviewer_id == rid), None) for r in rounds]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=plot_escape(names.get(rid, rid), 40),
                                 line={"color": _REVIEWER_COLOURS[i % len(_REVIEWER_COLOURS)]},
                                 hovertemplate="round %{x}: %{y}<extra></extra>"))
    means = [r.meta_review.score if r.meta_review else None for r in rounds]
    fig.add_trace(go.Scatter(x=xs, y=means, mode="lines+markers", name="mean",
                             line={"color": MEAN_COLOUR, "dash": "dash", "width": 3},
                             hovertemplate="round %{x}: mean %{y:.2f}<extra></extra>"))
    fig.update_layout(height=320, showlegend=True, legend=LEGEND | {"y": -0.2},
                      xaxis={"title": "round (0 = first proposal)", "tickmode": "array", "tickvals": xs},
                      yaxis={"title": "score (1-10)", "range": [0, 10.5]},
                      margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig


def _why(source: str, answers: str) -> str:
    if not answers:
        return "answers no weakness the reviews contain (none was named, or the quote was not found)"
    what = "an automatic check" if source == "check" else "the reviewers' weakness"
    return f"answers {what}: {answers}"


def _round(before: Round, rnd: Round) -> None:
    why = {c.question: c for c in rnd.changes}
    diffs = proposal_diff(before.proposal, rnd.proposal)
    mean = rnd.meta_review.score if rnd.meta_review else None
    st.markdown(f"**Round {rnd.number}** · mean score " + ("not reviewed yet" if mean is None else f"{mean:.2f}")
                + f" · {len(diffs)} answer{'s' * (len(diffs) != 1)} rewritten")
    for d in diffs:
        q = BY_KEY[d.question]
        c = why.get(d.question)
        st.caption(render.md_escape(f"Q{q.number}. {q.title} — " + _why(c.source if c else "",
                                                                         c.answers if c else "")))
        st.code(diff_lines(d), language=None, wrap_lines=True)


def reviewed_rounds(job) -> int:
    """A revision job's rounds whose meta-review is in: read from the run's rounds (a typed
    field, Round.meta_review), never from an agent's name (a reviewer may be called anything)."""
    return sum(1 for r in job.simulation.run.rounds[1:] if r.meta_review is not None)


def _shown_round(run: Run) -> int:
    """Which round the run's proposal is (rt_core.run.revision.rounds keeps the best-scored one)."""
    answers = run.proposal.answers() if run.proposal else {}
    same = [r.number for r in run.rounds if r.proposal.answers() == answers]
    return same[-1] if same else run.rounds[-1].number


def show(run: Run, names: dict[str, str]) -> None:
    """The rounds of a revised run; nothing for a run without rounds."""
    if not run.rounds:
        return
    st.header("Revision rounds")
    shown = _shown_round(run)
    st.caption("Round 0 is the first proposal. In each round the authors revised it from the "
               "reviews and the same reviewers reviewed it again. The proposal above is round "
               f"{shown}'s, the one with the best mean score (the earlier on a tie).")
    st.plotly_chart(trajectory_figure(run.rounds, names), key=f"rounds_{run.id}", config=PLOT_CONFIG)
    stops = [r for r in run.rounds if r.stopped]
    if stops:
        st.info(render.md_escape(stop_words(stops[-1])), icon=":material/stop_circle:")
    for before, rnd in zip(run.rounds, run.rounds[1:], strict=False):
        _round(before, rnd)


# -- revising a finished run afterwards ---------------------------------------------------------
def _progress(run_id: str) -> None:
    """The revision's progress (polled while its job runs); one full rerun at its end, so
    the rounds above show the new ones."""
    job = state.job_for(run_id)
    if job is None:
        return
    events = [e for e in job.snapshot() if e.stage == revise.GROUP and e.status != "started"]
    rounds = job.simulation.config.revision_rounds
    done = reviewed_rounds(job)
    st.progress(min(1.0, done / max(1, rounds)), text=f"{done} of {rounds} revision round"
                f"{'s' * (rounds > 1)} reviewed (earlier rounds come from the cache)")
    names = agents.names_for(resources.get_store().corpus, [e.agent for e in events[-3:]])
    for e in events[-3:]:
        render.show_text(f"{agents.label(e.agent, names)}: {e.status}" +
                         (f": {render.short(e.partial, 160)}" if e.partial else ""))
    if job.done:
        if job.error is not None:
            render.show_error(job.error)
        if job.unexpected:
            st.error(f"The revision stopped unexpectedly: {render.md_escape(job.unexpected)}")
        ss = st.session_state
        flag = f"_revised_{run_id}_{id(job)}"
        if not ss.get(flag):
            ss[flag] = True
            st.rerun()


def revise_control(run: Run, store, read_only: bool) -> None:
    """'Revise this run': how many more rounds, the estimate, the button, the progress."""
    if read_only:
        return
    job = state.job_for(run.id)
    if job is not None and not job.done:
        if run.id in st.session_state["jobs"]:
            st.subheader("Revising this run")
            st.fragment(_progress, run_every=polling.every(False))(run.id)
        return
    if job is not None and getattr(job, "kind", "") == "revise" and run.id in st.session_state["jobs"]:
        _progress(run.id)  # how this session's last revision ended (its errors stay visible)
    if run.status != "done" or not run.reviews or revise_more.rounds_left(run) <= 0:
        return
    st.subheader("Revise this run")
    left = revise_more.rounds_left(run)
    st.caption(f"The authors answer the reviews and the same reviewers review again. This run "
               f"has {revise_more.rounds_done(run)} revision round"
               f"{'s' * (revise_more.rounds_done(run) != 1)}; up to {left} more can be asked for.")
    extra = fields.bounded_number("More revision rounds", f"revise_more_n_{run.id}", 1, left, 1)
    if extra is None:  # the field says why; no estimate or button for a number that cannot run
        return
    try:
        plan = revise_more.plan(run, int(extra), store)
    except RTError as exc:
        st.info(render.md_escape(f"{exc}. {render.app_hint(exc)}"), icon="ℹ️")
        return
    caps = studio_request.typed_caps()
    cap = budget.cap_text(dataclasses.replace(run.config, **caps))  # as revise_more applies it
    st.caption(render.md_escape(plan.summary() + (f" Budget for the new calls: {cap}." if cap else "")))
    timing_view.revision_caption(plan, store)
    if not st.button("Revise this run", key=f"revise_more_go_{run.id}"):
        return
    try:
        state.revise_run(store, run.id, int(extra), studio_request.request_for, **caps)
    except RTError as exc:
        render.show_error(exc)
        return
    st.rerun()
