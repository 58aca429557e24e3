"""The community graph on Results: the run's neighbourhood with a star for its proposal,
dashed lines to its reviewers. The graph is assembled in rt_core (rt_core/graph.py:
run_graph), the same way the Candidates view's is; this only draws it."""
from __future__ import annotations

import streamlit as st

from rt_core.graph import run_graph
from rt_core.types import Run

from . import charts, provenance_view, resources


def section(run: Run, store) -> None:
    """The graph's header (the anchor provenance chips link to), the chart, and which of the
    sources the run drew on are not in it."""
    st.header("Community graph with the new paper", anchor=provenance_view.GRAPH_ANCHOR)
    g = run_graph(store.corpus, run)
    st.caption("The star is the generated paper; dashed lines lead to its reviewers, solid lines "
               "to its authors. Nodes are sized by their number of links.")
    st.plotly_chart(charts.graph_figure(g, resources.field_names(store), highlight=provenance_view.highlighted(run)),
                    key=f"graph_{run.id}", config=charts.PLOT_CONFIG)
    provenance_view.note_absent(run, g.nodes, store)
