"""UI pieces shared by the three study pages: join links, the neutral proposal view, charts."""
from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pandas as pd
import streamlit as st

from rt_core import access_store
from rt_core.fiveq import QUESTIONS

from . import render


def _root() -> str:
    """The app's root address on the host the organiser is using."""
    try:
        url = st.context.url or ""
    except Exception:  # no browser (AppTest)
        url = ""
    parts = urlsplit(url) if url else None
    root = f"{parts.scheme}://{parts.netloc}" if parts and parts.netloc else "http://localhost:8501"
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{root}/{base}" if base else root


def join_link(code: str) -> str:
    """The rater link: the app's root with the study code. The root always runs app.py, which
    shows a `study` visitor the rating page and nothing else (state.joining_study)."""
    return f"{_root()}/?{urlencode({'study': code})}"


def organiser_link(token: str) -> str:
    """The organiser link: the results page with the organiser's token, which the page takes
    out of the address bar as soon as it has read it (a projector would show it)."""
    return f"{_root()}/study_results?{urlencode({'organiser': token})}"


def unlock(study_id: str) -> None:
    """This browser session may organise the study (it made it, or showed its token)."""
    ids = st.session_state.setdefault("study_unlocked", [])
    if study_id not in ids:
        ids.append(study_id)


def show_proposal(answers: dict[str, str], heading: str) -> None:
    """One proposal in the neutral format: the five question titles (ours) and the answers
    as plain text (model or paper text is never parsed as Markdown or HTML)."""
    st.markdown(f"#### {heading}")
    for q in QUESTIONS:
        st.markdown(f"**{q.number}. {q.title}**")
        render.show_text(answers.get(q.key, ""))


def interval_chart(df: pd.DataFrame, x: str, low: str, high: str, label: str, title: str,
                   color: str | None = None, key: str = ""):
    """Points with 95% interval bars, one row per label (plotly)."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow import)

    fig = go.Figure()
    groups = [(None, df)] if color is None else list(df.groupby(color, sort=False))
    for name, g in groups:
        fig.add_trace(go.Scatter(
            x=g[x], y=[render.plot_escape(v) for v in g[label]], mode="markers", name=render.plot_escape(name or x),
            error_x={"type": "data", "symmetric": False, "array": (g[high] - g[x]).tolist(),
                     "arrayminus": (g[x] - g[low]).tolist()}))
    fig.update_layout(height=120 + 40 * len(df[label].unique()), title=title,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, yaxis={"autorange": "reversed"},
                      showlegend=color is not None)
    st.plotly_chart(fig, key=key)


def heatmap(matrix: pd.DataFrame, title: str, key: str):
    import plotly.graph_objects as go  # noqa: PLC0415  (slow import)

    labels = [render.plot_escape(v) for v in matrix.columns]
    rows = [render.plot_escape(v) for v in matrix.index]
    text = matrix.map(lambda v: "" if pd.isna(v) else f"{v:.2f}").to_numpy()
    fig = go.Figure(go.Heatmap(z=matrix.to_numpy(float), x=labels, y=rows, zmin=0, zmax=1,
                               colorscale="RdBu", text=text,
                               texttemplate="%{text}", hovertemplate="%{y} beat %{x}: %{z:.2f}<extra></extra>"))
    fig.update_layout(height=140 + 50 * len(rows), title=title, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    st.plotly_chart(fig, key=key)


def bars(labels: list, values: list, title: str, key: str, y_range: tuple[float, float] | None = None,
         colors: list[str] | None = None):
    """A plain bar chart (plotly); None values are drawn as gaps."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow import)

    fig = go.Figure(go.Bar(x=[render.plot_escape(v) for v in labels], y=values, marker_color=colors,
                           text=["–" if v is None or pd.isna(v) else f"{v:.2f}" for v in values],
                           textposition="outside"))
    fig.update_layout(height=260, title=title, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      yaxis={"range": list(y_range)} if y_range else {})
    st.plotly_chart(fig, key=key)


def criterion_panels(df: pd.DataFrame, x: str, low: str, high: str, label: str, title: str, key: str,
                     x_range: tuple[float, float] | None = None, zero: float | None = None,
                     order: list[str] | None = None):
    """Small multiples: one panel per criterion, the same arms on every row (top to bottom in
    `order`, e.g. the pooled ranking) and one scale shared by every panel, so a glance along a
    row compares criteria and a glance down a panel ranks the arms."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow import)
    from plotly.subplots import make_subplots  # noqa: PLC0415  (slow import)

    criteria = list(dict.fromkeys(df["criterion"]))
    arms = [a for a in (order or []) if a in set(df[label])] + sorted(set(df[label]) - set(order or []))
    fig = make_subplots(rows=1, cols=len(criteria), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[render.plot_escape(c) for c in criteria])
    for n, crit in enumerate(criteria, 1):
        g = df[df["criterion"] == crit]
        fig.add_trace(go.Scatter(
            x=g[x], y=[render.plot_escape(v) for v in g[label]], mode="markers", showlegend=False,
            marker={"size": 10, "color": "#1f77b4"}, name=render.plot_escape(crit),
            error_x={"type": "data", "symmetric": False, "array": (g[high] - g[x]).tolist(),
                     "arrayminus": (g[x] - g[low]).tolist(), "thickness": 2}), row=1, col=n)
        if zero is not None:
            fig.add_vline(x=zero, line={"color": "#999", "dash": "dot", "width": 1}, row=1, col=n)
    fig.update_yaxes(categoryorder="array", categoryarray=[render.plot_escape(a) for a in arms][::-1])
    if x_range:
        fig.update_xaxes(range=list(x_range))
    else:
        fig.update_xaxes(matches="x")
    fig.update_layout(height=140 + 45 * len(arms), title=title, margin={"l": 10, "r": 10, "t": 70, "b": 10})
    st.plotly_chart(fig, key=key)


def hidden_runs_note(store, viewer) -> int:
    """Tell an owner that runs of theirs are missing because a study holds them (rt_core.access
    counts them), rather than let History and Results say this browser started none; returns
    how many."""
    n = access_store.hidden_by_studies(store, viewer)
    if n:
        st.info(f"{n} run{'s' if n > 1 else ''} this browser started {'are' if n > 1 else 'is'} in a study "
                f"that is still open, so {'they stay' if n > 1 else 'it stays'} hidden here (from you as from "
                "everyone) until the study closes: its raters must not learn where a proposal came from.", icon="🙈")
    return n
