"""Plotly figures: the community graph, the score bars and similarity bars with a chance band.

Labels that came from papers or models go through render.plot_escape (plotly
renders a little HTML in labels).
"""
from __future__ import annotations

from . import graphview
from .render import plot_escape

# Field colours: twelve hues that differ in hue or lightness (the starter store has eleven
# fields), none of them grey, so a node never blends into the edges (every edge is a
# neutral grey; its dash tells the kind).
_FIELD_COLOURS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2",
                  "#FF9DA6", "#9D755D", "#5E3C99", "#8B1A1A", "#B5BD00"]
EDGE_COLOUR = "#B3B3B3"
_EDGE_STYLE = {"author": ("authorship", "solid"), "cite": ("citation", "dot"),
               "review": ("review", "dash")}
_PROPOSAL_COLOUR = "#111111"
HIGHLIGHT_RING = "#D62728"  # a red ring: what the chosen candidate leads with
BAND_COLOUR = "#C8C8C8"
_SYMBOLS = {"researcher": "circle", "paper": "square", "proposal": "star"}
# Below the plot: the toolbar sits at the top right and used to cover a legend there.
LEGEND = {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.02, "yanchor": "top",
          "font": {"size": 11}}
PLOT_CONFIG = {"displaylogo": False}


def field_colour(field_id: str, field_names: dict[str, str]) -> str:
    """One colour per field on every graph: the field's place in the store's field list
    (not in the graph at hand, which changed NLP's colour between pages)."""
    order = list(field_names)
    if field_id in order:
        return _FIELD_COLOURS[order.index(field_id) % len(_FIELD_COLOURS)]
    h = sum(map(ord, field_id))  # fields the store does not list: still stable
    return _FIELD_COLOURS[h % len(_FIELD_COLOURS)]


def _group(data: dict) -> str:
    fields = data.get("fields") or []
    return fields[0] if fields else ("generated" if data.get("kind") == "proposal" else "other")


def _edge_traces(g, pos) -> list:
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    traces = []
    for kind, (name, dash) in _EDGE_STYLE.items():
        xs: list[float | None] = []
        ys: list[float | None] = []
        for u, v, data in g.edges(data=True):
            if data.get("kind") == kind:
                xs += [pos[u][0], pos[v][0], None]
                ys += [pos[u][1], pos[v][1], None]
        if xs:
            traces.append(go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                                     line={"color": EDGE_COLOUR, "width": 1.2, "dash": dash}))
    return traces


def _label_order(g, deg: dict[str, int]) -> list[str]:
    """The proposal first, then the most connected nodes, researchers before papers."""
    rank = {"proposal": 0, "researcher": 1, "paper": 2}

    def key(n):
        kind = g.nodes[n].get("kind")
        return (kind != "proposal", -deg[n], rank.get(kind, 3), str(n))
    return sorted(g.nodes, key=key)


def graph_figure(g, field_names: dict[str, str] | None = None, height: int = 540,
                 highlight: frozenset[str] = frozenset()):
    """A plotly figure of a community graph: nodes sized by degree and coloured by field,
    the names and short titles written next to the nodes that have room for them. Nodes in
    `highlight` (what a candidate leads with) are ringed and always labelled, the rest faded."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    field_names = field_names or {}
    pos = graphview.spread_layout(g)
    deg = graphview.degrees(g)
    kinds = {n: g.nodes[n].get("kind", "paper") for n in g.nodes}
    sizes = {n: graphview.marker_size(kinds[n], deg[n]) for n in g.nodes}
    fig = go.Figure(_edge_traces(g, pos))
    groups: dict[tuple[str, str], list[str]] = {}
    for n, data in g.nodes(data=True):
        groups.setdefault((_group(data), kinds[n]), []).append(n)
    for (fld, kind), nodes in sorted(groups.items()):
        colour = _PROPOSAL_COLOUR if kind == "proposal" else field_colour(fld, field_names)
        fname = plot_escape(field_names.get(fld, fld))
        hover = [f"{plot_escape(g.nodes[n].get('label') or n)}<br>{kind} · {fname} · "
                 f"{deg[n]} link{'s' if deg[n] != 1 else ''}" for n in nodes]
        style = [graphview.emphasis(n, highlight) for n in nodes]
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers",
            name="generated paper" if kind == "proposal" else f"{fname} ({kind}s)", legendgroup=fld,
            marker={"size": [sizes[n] for n in nodes], "symbol": _SYMBOLS.get(kind, "circle"),
                    "color": colour, "opacity": [s.opacity for s in style],
                    "line": {"width": [s.ring for s in style],
                             "color": [HIGHLIGHT_RING if s.ring > 1 else "#ffffff" for s in style]}},
            hovertext=hover, hoverinfo="text"))
    xr, yr = graphview.axis_ranges(pos)
    texts = {n: graphview.short_label(g.nodes[n].get("label") or n, kinds[n]) for n in g.nodes}
    canvas = graphview.Canvas(xr, yr, graphview.PLOT_WIDTH_PX, height - 120)
    placed = graphview.place_labels(pos, sizes, texts, _label_order(g, deg), canvas,
                                    always=frozenset(n for n in g if kinds[n] == "proposal" or n in highlight))
    if placed:
        fig.add_trace(go.Scatter(
            # Invisible markers of the nodes' sizes: plotly offsets a label by its marker.
            x=[pos[n][0] for n in placed], y=[pos[n][1] for n in placed], mode="markers+text",
            marker={"size": [sizes[n] for n in placed], "opacity": 0},
            text=[plot_escape(texts[n]) for n in placed], textposition=list(placed.values()),
            textfont={"size": graphview.FONT_SIZE, "color": "#222222"}, name="labels",
            showlegend=False, hoverinfo="skip"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"visible": False, "range": xr}, yaxis={"visible": False, "range": yr},
                      legend=LEGEND, hovermode="closest", plot_bgcolor="rgba(0,0,0,0)")
    return fig


def score_bars(labels: list[str], scores: list[int | None], mean: float | None):
    """Each reviewer's score (a missing one drawn as 0 and labelled 'missing'), and the mean."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    fig = go.Figure(go.Bar(x=[plot_escape(label, 40) for label in labels],
                           y=[s if s is not None else 0 for s in scores], marker_color="#4C78A8",
                           text=[str(s) if s is not None else "missing" for s in scores],
                           textposition="outside", cliponaxis=False,
                           hovertemplate="%{x}: %{y}<extra></extra>"))
    if mean is not None:
        fig.add_hline(y=mean, line_dash="dash", line_color="#E45756",
                      annotation_text=f"mean {mean:.1f}")
    fig.update_layout(height=300, yaxis={"range": [0, 11.5], "title": "score (1-10)"},
                      margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig


def bars_with_band(x: list[str], y: list[float], band=None, *, y_title: str,
                   colour: str | list[str] = "#4C78A8", bar_name: str = "mean similarity",
                   medians: list[float | None] | None = None, height: int = 340):
    """Similarity bars with the chance band (a ChanceBand: how similar unrelated papers are)
    drawn behind them as a shaded layer with its own legend entry, and room above the top
    bar for its value. `medians`: a chance median per bar, drawn as a mark on the bar."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    labels = [plot_escape(v, 40) for v in x]
    fig = go.Figure(go.Bar(x=labels, y=y, name=bar_name, marker_color=colour,
                           text=[f"{v:.3f}" for v in y], textposition="outside", cliponaxis=False,
                           hovertemplate="%{x}: %{y:.3f}<extra></extra>"))
    if medians and any(m is not None for m in medians):
        fig.add_trace(go.Scatter(x=labels, y=medians, mode="markers", name="chance median (per question)",
                                 marker={"symbol": "line-ew-open", "size": 28, "color": "#333333",
                                         "line": {"width": 2}},
                                 hovertemplate="%{x}: chance median %{y:.3f}<extra></extra>"))
    top = max([*y, *(m for m in medians or [] if m is not None), 0.0])
    if band is not None:
        top = max(top, band.high)
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, y0=band.low, y1=band.high,
                      fillcolor=BAND_COLOUR, opacity=0.45, line_width=0, layer="below",
                      showlegend=True, name=f"chance band (90% of unrelated papers, n = {band.n})")
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=band.median, y1=band.median,
                      line={"color": "#555555", "dash": "dash", "width": 1.5}, layer="below",
                      showlegend=True, name=f"chance median {band.median:.3f}")
    plot_px = height - 110  # the legend sits below the category labels, ~35 px down
    fig.update_layout(height=height, showlegend=True, legend=LEGEND | {"y": -35 / plot_px},
                      xaxis={"automargin": True},
                      yaxis={"title": y_title, "range": [0, round(top * 1.25 + 0.02, 3)],
                             "automargin": True},
                      margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig


def win_matrix(ids: list[str], wins: dict[str, dict[str, int]], compared: set[frozenset[str]] | None = None,
               height: int | None = None):
    """The tournament's wins as a heatmap: row a, column b holds how often a beat b, ids best
    first, so a good ranking reads as a dark upper right. The diagonal and, when `compared`
    is given, pairs never put side by side (an adaptive tournament skips some) stay empty,
    so 'not compared' never reads as 'lost'."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    def cell(a: str, b: str) -> int | None:
        if a == b or (compared is not None and frozenset((a, b)) not in compared):
            return None
        return wins.get(a, {}).get(b, 0)

    labels = [plot_escape(i, 24) for i in ids]
    z = [[cell(a, b) for b in ids] for a in ids]
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, colorscale="Blues", zmin=0,
                               text=[["" if v is None else str(v) for v in row] for row in z],
                               texttemplate="%{text}", colorbar={"title": "wins"},
                               hovertemplate="%{y} beat %{x}: %{z} time(s)<extra></extra>"))
    fig.update_layout(height=height or 160 + 42 * len(ids), margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      xaxis={"title": "beaten", "side": "top"},
                      yaxis={"title": "winner", "autorange": "reversed"})
    return fig
