"""The map of the bank on the Ideas page (rt_core/ideas/bankmap.py): one dot per idea,
coloured by field pair or by run, grey diamonds for the papers of their neighbourhoods; a
click opens the idea. Drawn only when asked (a toggle). Every label came from a model or a
paper, so it goes through render.plot_escape (plotly draws a little HTML in hover labels)."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from rt_core.ideas import bankmap

from . import charts, render

PAPER_COLOUR = "#6E6E6E"


def figure(m: bankmap.BankMap) -> go.Figure:
    fig = go.Figure()
    groups: dict[str, list[bankmap.MapPoint]] = {}
    for p in m.ideas:
        groups.setdefault(p.colour, []).append(p)
    for colour, pts in sorted(groups.items()):
        fig.add_trace(go.Scatter(x=[p.x for p in pts], y=[p.y for p in pts], mode="markers",
                                 name=render.plot_escape(colour, 40), customdata=[p.id for p in pts],
                                 hovertext=[render.plot_escape(f"{p.id}: {p.label}", 200) for p in pts],
                                 hoverinfo="text", marker={"size": 11}))
    papers = [p for p in m.points if p.kind == bankmap.PAPER]
    if papers:
        fig.add_trace(go.Scatter(x=[p.x for p in papers], y=[p.y for p in papers], mode="markers",
                                 name="papers of their neighbourhoods", hoverinfo="text",
                                 hovertext=[render.plot_escape(p.label, 200) for p in papers],
                                 marker={"symbol": "diamond", "size": 8, "color": PAPER_COLOUR}))
    fig.update_layout(height=520, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"showticklabels": False}, yaxis={"showticklabels": False})
    return fig


def section(bank, viewer, pick_key: str) -> None:
    """Behind a toggle; a click on an idea puts it in the picker under the map (`pick_key`)."""
    if not st.toggle("Show the map of the bank", key="ideas_map_on",
                     help="Every idea placed by meaning on axes fitted once, so new ideas never move "
                          "the old ones."):
        return
    c1, c2, c3 = st.columns([2, 2, 1])
    colour_by = c1.radio("Colour by", [bankmap.BY_FIELDS, bankmap.BY_RUN], horizontal=True, key="ideas_map_colour",
                         format_func=lambda c: "field pair" if c == bankmap.BY_FIELDS else "run")
    grouped = c2.checkbox("One idea per group", key="ideas_map_grouped")
    refit = c3.button("Redraw the axes", key="ideas_map_refit", help="Fit the axes again on every idea now: "
                      "the points move once, then stay.")
    with st.spinner("Placing the ideas by meaning..."):
        m = bankmap.build(bank, viewer, colour_by=colour_by, one_per_group=grouped, refit=refit)
    if not m.ideas:
        st.info("No idea to map yet.", icon="🗺️")
        return
    st.caption(f"{len(m.ideas)} ideas; the axes were fitted on {m.fitted_on} ideas and hold "
               f"{m.explained:.0%} of their spread. Click a dot to open the idea.")
    event = st.plotly_chart(figure(m), key="ideas_map", on_select="rerun", selection_mode="points",
                            config=charts.PLOT_CONFIG)
    points = (getattr(event, "selection", None) or {}).get("points") or []
    clicked = next((p.get("customdata") for p in points if isinstance(p.get("customdata"), str)), "")
    if clicked and clicked != st.session_state.get("_ideas_map_click"):
        st.session_state[pick_key] = clicked
    st.session_state["_ideas_map_click"] = clicked
