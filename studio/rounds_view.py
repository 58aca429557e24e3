"""The Results page's revision rounds: how the scores moved, what changed, and why.

A run with revision rounds keeps every round (rt_core/run/revise.py). This view shows
the score trajectory per reviewer (the same reviewers score every round, so their
lines compare), why the rounds stopped, and for each round the answers the authors
rewrote: which weakness each one answers (a reviewer's own words, an automatic check,
or none named) and a word-level diff. Model text is shown as text: the diff goes
through st.code, never HTML.
"""
from __future__ import annotations

import streamlit as st

from rt_core.fiveq import BY_KEY
from rt_core.run.diff import diff_lines, proposal_diff
from rt_core.types import Round, Run

from . import render
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


def _shown_round(run: Run) -> int:
    """Which round the run's proposal is (rt_core.run.revise keeps the best-scored one)."""
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
        st.info(render.md_escape(stops[-1].stopped), icon=":material/stop_circle:")
    for before, rnd in zip(run.rounds, run.rounds[1:], strict=False):
        _round(before, rnd)
