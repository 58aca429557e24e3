"""The map of ideas (rt_core/ideamap.py) on Results and History: one dot per candidate and
version, a diamond per nearest prior paper, coloured by field mix and sized by novelty
distance; hover shows the Q1, a click (or the picker under the map) opens it.

Drawn only when asked (a toggle): embedding the points is cheap once cached, but the first
time loads the embedder, and most visits to Results never look at the map.

Every text on the figure came from a model or a paper, so it goes through render.plot_escape
(plotly draws a little HTML in hover labels). The slide image: kaleido is not installed, so
the server cannot render a PNG; the map's camera button saves one in the browser at slide
size, and the HTML download keeps the map whole and interactive, offline.
"""
from __future__ import annotations

import importlib.util
import textwrap

import streamlit as st

from rt_core import ideamap
from rt_core.fiveq import QUESTIONS
from rt_core.models.embed import Embedder
from rt_core.run.pipeline.progress import UNDER_WAY_STATUSES
from rt_core.types import Run

from . import charts, novelty_view, render, resources, state

HISTORY_RUNS = 30  # the newest listed runs the History map reads at most
PRIOR_COLOUR = "#6E6E6E"
PRIOR_LABELS = 12  # prior papers get a short title beside them up to this many
UNKNOWN_COLOUR = "#9A9A9A"
# Mixes of several fields: dark, mutually distinct hues (ColorBrewer Dark2), apart from the
# field colours a single-field mix takes.
MIX_COLOURS = ["#1B9E77", "#D95F02", "#7570B3", "#E7298A", "#66A61E", "#E6AB02", "#A6761D", "#444444"]
# The map's legend under the plot, titled, two entries to a row (a mix's name is long: in one
# row the entries ran into each other and off the edge), in type a slide can read. Not above
# the plot: plotly's tool buttons sit there, over the legend's text.
MAP_LEGEND = {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.03, "yanchor": "top",
              "font": {"size": 13}, "title": {"text": "Fields drawn on:", "side": "top"},
              "itemsizing": "constant", "entrywidth": 0.5, "entrywidthmode": "fraction"}
SLIDE = {"format": "png", "width": 1600, "height": 900, "scale": 1}
HAS_KALEIDO = importlib.util.find_spec("kaleido") is not None


def section(run: Run, store) -> None:
    """The map of one run on Results, behind a toggle."""
    st.header("Map of ideas")
    if not st.toggle("Show the map of ideas", key=f"ideamap_on_{run.id}",
                     help="Every candidate and version of this run, and the prior work nearest to "
                          "them, placed by meaning."):
        return
    show(store, [run], run.id, current=run)


def history_section(store, run_ids: list[str]) -> None:
    """The map of every listed run (the newest HISTORY_RUNS), on request."""
    st.subheader("Map of every run's ideas")
    if not st.toggle(f"Show the ideas of the listed runs on one map (newest {HISTORY_RUNS})",
                     key="ideamap_history_on"):
        return
    runs = []
    for rid in run_ids[:HISTORY_RUNS]:
        try:
            runs.append(store.runs.load(rid))
        except Exception:  # deleted meanwhile: the map shows the rest
            continue
    show(store, runs, "history")


def show(store, runs: list[Run], key: str, current: Run | None = None) -> None:
    with st.spinner("Placing the ideas by meaning..."):
        m = ideamap.build(store, runs, Embedder(store=store))
    if not m.ideas:
        _empty(runs)
        return
    if len(m.points) == 1:
        only = m.points[0]
        st.info("Only one idea, and its novelty check found no prior paper to set it beside: a map "
                "needs two points. Its problem (Q1):", icon="📍")
        render.show_text(only.q1)
        return
    names = resources.field_names(store)
    fig = figure(m, names, many_runs=len(runs) > 1)
    with st.container(key=f"ideamap_box_{key}"):
        st.caption(_legend_words(m))
        event = st.plotly_chart(fig, key=f"ideamap_{key}", on_select="rerun", selection_mode="points",
                                config=charts.PLOT_CONFIG | {"toImageButtonOptions": SLIDE | {
                                    "filename": f"idea-map-{key}"}})
        _export(fig, key)
    _open(m, event, key, current, store)


def _empty(runs: list[Run]) -> None:
    running = any(r.status in UNDER_WAY_STATUSES for r in runs)
    st.info(("No idea written yet: candidates appear here as the run writes them."
             if running else
             "Nothing to map: no candidate or proposal was written. A brainstorm run (Run page, "
             "Candidates 2 or more, with the novelty check on) puts every candidate here beside "
             "the prior work nearest to it."), icon="🗺️")


def _legend_words(m: ideamap.IdeaMap) -> str:
    spread = f"{m.explained:.0%}" if m.explained else "all"
    return (f"{len(m.ideas)} ideas (dots, coloured by the fields they draw on, larger when further "
            f"from any prior paper) and {len(m.priors)} nearest prior papers (grey diamonds). "
            f"Close points mean close meaning; the two axes hold {spread} of the spread. Hover "
            "for the problem (Q1); click a point to open it.")


# -- the figure ---------------------------------------------------------------------------------

def hover_text(text: str, width: int = 60, limit: int = 320) -> str:
    """Model or paper text for a hover label: escaped first (no HTML of its own survives),
    then wrapped with line breaks of ours."""
    lines = textwrap.wrap(" ".join(str(text or "").split())[:limit], width) or [""]
    return "<br>".join(render.plot_escape(line, limit) for line in lines)


def marker_size(novelty: float | None) -> float:
    """Novelty distance 0 (a prior paper says the same) to 1 (nothing close found): 12 to 36 px."""
    return 16.0 if novelty is None else 12.0 + 24.0 * max(0.0, min(1.0, novelty))


def mix_palette(mixes: list[dict[str, float]], names: dict[str, str]) -> dict[str, str]:
    """One fill colour per distinct field mix on the map, by the mix's name. A mix of one field
    has that field's colour (as on the community graph); each mix of several fields has a
    colour of its own from MIX_COLOURS, one no single field on the map uses. Filling a mix
    with its main field's colour painted every idea of a neighbourhood led by one field alike
    (the mixes told apart only by a thin ring); blending the fields' hues would not do either:
    blue and orange make a grey that reads as no field at all."""
    by_name = {mix_name(m, names): mix_order(m) for m in mixes}
    out = {n: (charts.field_colour(f[0], names) if f else UNKNOWN_COLOUR)
           for n, f in by_name.items() if len(f) <= 1}
    spare = [c for c in MIX_COLOURS if c not in out.values()] or MIX_COLOURS
    for i, n in enumerate(sorted(n for n in by_name if n not in out)):
        out[n] = spare[i % len(spare)]
    return out


def mix_order(mix: dict[str, float]) -> list[str]:
    """The named fields of a mix, the largest share first."""
    named = set(ideamap.mix_fields(mix))
    return sorted(named, key=lambda f: (-mix.get(f, 0.0), f))


def mix_name(mix: dict[str, float], names: dict[str, str]) -> str:
    fields = mix_order(mix)
    return " + ".join(names.get(f, f) for f in fields) if fields else "fields unknown"


def _idea_hover(p: ideamap.Point, many_runs: bool) -> str:
    where = f"run {p.run_id} · " if many_runs else ""
    far = "novelty not checked" if p.novelty is None else f"novelty distance {p.novelty:.2f}"
    return (f"<b>{render.plot_escape(where + p.label)}</b><br>{hover_text(p.q1)}<br>"
            f"<i>{render.plot_escape(far)}</i>")


def _prior_hover(p: ideamap.Point) -> str:
    year = f" ({p.year})" if p.year else ""
    return f"<b>Prior work</b><br>{hover_text(p.q1 + year)}<br><i>nearest to {len(p.near_to)} idea(s)</i>"


def figure(m: ideamap.IdeaMap, names: dict[str, str], many_runs: bool = False, height: int = 560):
    import plotly.graph_objects as go  # noqa: PLC0415  (slow)

    fig = go.Figure()
    where = {p.id: p for p in m.points}
    xs: list[float | None] = []
    ys: list[float | None] = []
    for prior in m.priors:  # faint lines from each paper to the ideas it is nearest to
        for idea_id in prior.near_to:
            xs += [prior.x, where[idea_id].x, None]
            ys += [prior.y, where[idea_id].y, None]
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": "#D0D0D0", "width": 1, "dash": "dot"}))
    groups: dict[str, list[ideamap.Point]] = {}
    for p in m.ideas:
        groups.setdefault(mix_name(p.fields, names), []).append(p)
    label_ideas = len(m.ideas) <= 30
    colours = mix_palette([p.fields for p in m.ideas], names)
    for name, pts in sorted(groups.items()):
        fig.add_trace(go.Scatter(
            x=[p.x for p in pts], y=[p.y for p in pts], name=render.plot_escape(name),
            mode="markers+text" if label_ideas else "markers",
            text=[render.plot_escape(p.label.split(" (")[0]) for p in pts], textposition="top center",
            marker={"size": [marker_size(p.novelty) for p in pts], "opacity": 0.95, "color": colours[name],
                    "line": {"width": 1.5, "color": "#FFFFFF"}},
            customdata=[p.id for p in pts], hovertext=[_idea_hover(p, many_runs) for p in pts],
            hoverinfo="text", **_no_fading(0.95, "#444444")))
    if m.priors:
        pr = m.priors
        fig.add_trace(go.Scatter(
            x=[p.x for p in pr], y=[p.y for p in pr], name="nearest prior work",
            mode="markers+text" if len(pr) <= PRIOR_LABELS else "markers",
            text=[render.plot_escape(render.short(p.label, 26)) for p in pr],
            textposition=_label_sides(pr),
            textfont={"size": 10, "color": PRIOR_COLOUR},
            marker={"size": 11, "symbol": "diamond", "color": PRIOR_COLOUR, "opacity": 0.75,
                    "line": {"width": 1, "color": "#FFFFFF"}},
            customdata=[p.id for p in pr], hovertext=[_prior_hover(p) for p in pr], hoverinfo="text",
            **_no_fading(0.75, PRIOR_COLOUR)))
    axis = {"showticklabels": False, "zeroline": False, "showgrid": True, "gridcolor": "#EEEEEE"}
    fig.update_xaxes(range=_padded([p.x for p in m.points], 0.18))  # room for the labels
    fig.update_yaxes(range=_padded([p.y for p in m.points], 0.12))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10}, legend=MAP_LEGEND,
                      hovermode="closest", plot_bgcolor="rgba(0,0,0,0)", clickmode="event+select",
                      xaxis=axis, yaxis=axis)  # the axes have no units: only distances mean anything
    return fig


def _no_fading(opacity: float, text_colour: str) -> dict:
    """Selected and unselected points drawn alike. A click selects its point (that is how the
    page hears it), and plotly then faded every other point to a fifth and kept it so in the
    camera button's PNG: a slide of a map washed out around one dot. The click opens its
    point under the map, which says what was chosen."""
    same = {"marker": {"opacity": opacity}, "textfont": {"color": text_colour}}
    return {"selected": same, "unselected": same}


def _padded(values: list[float], share: float) -> list[float]:
    low, high = min(values), max(values)
    pad = (high - low) * share or 1.0
    return [low - pad, high + pad]


def _label_sides(points: list[ideamap.Point]) -> list[str]:
    """Each paper's title below its diamond, or above when a neighbour already put its
    own below (and below again when both sides are taken nearby), left to right."""
    xs, ys = [p.x for p in points], [p.y for p in points]
    near_x = (max(xs) - min(xs)) * 0.25 or 1.0  # a 26-character title is about a quarter of the map wide
    near_y = (max(ys) - min(ys)) * 0.10 or 1.0
    sides = [""] * len(points)
    for i in sorted(range(len(points)), key=xs.__getitem__):
        taken = {sides[j] for j in range(len(points)) if sides[j] and abs(xs[j] - xs[i]) < near_x
                 and abs(ys[j] - ys[i]) < near_y}
        sides[i] = "top center" if "bottom center" in taken and "top center" not in taken else "bottom center"
    return sides


# -- export and opening ---------------------------------------------------------------------------

def _export(fig, key: str) -> None:
    c1, c2 = st.columns([1, 3], vertical_alignment="center")
    if HAS_KALEIDO:
        c1.download_button("Download PNG", lambda: fig.to_image(format="png", **SLIDE),
                           file_name=f"idea-map-{key}.png", mime="image/png", key=f"ideamap_png_{key}",
                           on_click="ignore")
    else:
        c1.download_button("Download HTML", lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                           file_name=f"idea-map-{key}.html", mime="text/html", key=f"ideamap_html_{key}",
                           on_click="ignore")
    c2.caption("For a slide: the camera icon at the map's top right saves a 1600×900 PNG. "
               + ("" if HAS_KALEIDO else "The HTML file keeps the map interactive and works offline "
                  "(this server has no image renderer, kaleido, to make a PNG itself)."))


def _clicked(event) -> str:
    points = (getattr(event, "selection", None) or {}).get("points") or []
    ids = [p.get("customdata") for p in points if isinstance(p.get("customdata"), str)]
    return ids[0] if ids else ""


def _open(m: ideamap.IdeaMap, event, key: str, current: Run | None, store) -> None:
    pick_key, seen_key = f"ideamap_pick_{key}", f"_ideamap_click_{key}"
    ids = [p.id for p in m.points]
    clicked = _clicked(event)
    if clicked and clicked != st.session_state.get(seen_key) and clicked in ids:
        st.session_state[pick_key] = clicked  # a new click opens that point
    st.session_state[seen_key] = clicked
    labels = {p.id: (f"{p.run_id} · {p.label}" if current is None and p.kind == ideamap.IDEA else
                     p.label if p.kind == ideamap.IDEA else f"prior work: {render.short(p.label, 80)}")
              for p in m.points}
    chosen = st.selectbox("Open a point of the map", ids, key=pick_key, index=None,
                          format_func=lambda i, labels=labels: labels.get(i, i),
                          placeholder="Click a point, or choose one here")
    point = m.find(chosen) if chosen else None
    if point is not None:
        _opened(point, current, store)


def _opened(p: ideamap.Point, current: Run | None, store) -> None:
    with st.container(border=True):
        if p.kind == ideamap.PRIOR:
            name = render.md_escape(p.q1 + (f" ({p.year})" if p.year else ""))
            link = novelty_view.safe_link(p.url)
            st.markdown(f"[{name}]({link})" if link else name)
            st.caption(f"Prior work nearest to {len(p.near_to)} idea(s) on the map.")
            return
        far = "not checked" if p.novelty is None else f"{p.novelty:.2f}"
        st.markdown(render.md_escape(f"{p.label} · run {p.run_id} · novelty distance {far}"))
        for q in QUESTIONS:
            st.markdown(f"**Q{q.number}. {q.title}**")
            render.show_text(p.answers.get(q.key) or "(missing)")
        elsewhere = current is None or current.id != p.run_id  # History's map: another run's idea
        if elsewhere and st.button("Open this run in Results", key=f"ideamap_go_{p.id}"):
            st.session_state["results_run"] = p.run_id
            st.switch_page(state.PAGES["results"], query_params={state.RUN_PARAM: p.run_id})
