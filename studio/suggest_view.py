"""The Suggest panel of the Neighbourhood page: a topic (and optionally someone to reach out
from and a field to stay away from) in, researchers and papers from other fields out, each
with the parts of its score drawn as one bar and a button that adds it to the neighbourhood
(the page's interdisciplinarity meter reads the same selection, so it follows).

The result is kept in the session as plain data, so pressing Add (a rerun) keeps the list.
Names, titles and reasons come from the store or a paper source: shown as text.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from rt_core.errors import RTError
from rt_core.suggest import Suggested, suggest
from rt_core.suggest.bridges import Bridge
from rt_core.types import Paper

from . import charts, render, request, state

RESULT = "sg_result"
PARTS = {"topic": ("close to the topic", "#4c78a8"), "distance": ("far between fields", "#f58518"),
         "bridges": ("bridges", "#54a24b")}


def panel(store, fnames: dict[str, str]) -> None:
    """The whole panel: the form, then the last result (if any)."""
    ss = st.session_state
    st.subheader("Suggest people from other fields")
    st.caption("Name a topic; get researchers and papers from different fields who could meet "
               "on it, ranked by closeness to the topic, distance between their fields and what "
               "already links them.")
    c1, c2, c3 = st.columns([3, 2, 2])
    topic = c1.text_input("Topic", key="sg_topic", placeholder="e.g. language models for galaxy surveys")
    seeds = _seed_options(store)
    seed = c2.selectbox("Reach out from", options=["", *seeds], key="sg_seed",
                        format_func=lambda i: seeds.get(i, "(nobody in particular)"),
                        help="Someone or a paper of your neighbourhood: suggestions come from "
                             "fields far from theirs, and their links to it are shown.")
    far = c3.selectbox("Stay away from", options=["", *fnames], key="sg_far",
                       format_func=lambda f: fnames.get(f, f) if f else "(no field)")
    online = st.checkbox("Also ask online (OpenAlex and Semantic Scholar)", key="sg_online",
                         help="Reaches fields the store lacks; needs internet; answers are cached.")
    if st.button("Suggest", key="sg_go", type="primary"):
        ss[RESULT] = _ask(store, topic, seed, far, online)
    render.show_flashes("suggest")
    result = ss.get(RESULT)
    if result:
        _show(store, result)


def _seed_options(store) -> dict[str, str]:
    """The neighbourhood's researchers and papers, as seeds to reach out from."""
    ss = st.session_state
    rs = [i for i in ss.get("hood_r", []) if store.corpus.researcher_exists(i)]
    ps = [i for i in ss.get("hood_p", []) if store.corpus.paper_exists(i)]
    out = {i: "👤 " + n for i, n in store.corpus.researcher_names(rs).items()}
    out.update({i: "📄 " + render.short(t, 70) for i, t in store.corpus.paper_titles(ps).items()})
    return out


def _ask(store, topic: str, seed: str, far: str, online: bool) -> dict | None:
    """The suggestions as plain data, or None after showing the one message that says why."""
    source = None
    if online:
        from rt_core.suggest.online import OnlineCandidates  # noqa: PLC0415  (only when asked)

        source = OnlineCandidates(store.http_cache, secrets=request.SECRETS)
    try:
        with st.spinner("Looking for people and papers near the topic…"):
            return suggest(store, topic, seed or None, far or None, 6, online=source).to_dict()
    except RTError as exc:
        render.show_error(exc)
        return None
    finally:
        if source is not None:
            source.close()


def _show(store, result: dict) -> None:
    for note in result.get("notes") or []:
        st.caption(render.md_escape(note))
    people = [_item(d) for d in result["researchers"]]
    papers = [_item(d) for d in result["papers"]]
    if not people and not papers:
        st.info("No researcher or paper outside the avoided field is close to this topic.")
        return
    for title, items, kind in (("Researchers", people, "researcher"), ("Papers", papers, "paper")):
        if not items:
            continue
        st.markdown(f"**{title}**")
        st.plotly_chart(parts_figure(items), key=f"sg_chart_{kind}", config=charts.PLOT_CONFIG)
        for i, s in enumerate(items, 1):
            _row(store, i, s)


def _item(d: dict) -> Suggested:
    data = dict(d)
    data["bridges"] = [Bridge(**b) for b in d.get("bridges") or []]
    return Suggested(**data)


def parts_figure(items: list[Suggested]) -> go.Figure:
    """One stacked bar per suggestion: the weighted parts that add up to its score."""
    labels = [render.plot_escape(f"{i}. {s.label}", 48) for i, s in enumerate(items, 1)]
    fig = go.Figure()
    for part, (name, colour) in PARTS.items():
        fig.add_bar(y=labels, x=[s.weighted.get(part, 0.0) for s in items], name=name,
                    orientation="h", marker_color=colour,
                    hovertemplate="%{y}: " + name + " %{x:.2f}<extra></extra>")
    fig.update_layout(barmode="stack", height=80 + 26 * len(items), margin=dict(l=8, r=8, t=30, b=8),
                      xaxis=dict(range=[0, 1]), yaxis=dict(autorange="reversed"),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, traceorder="normal"))
    return fig


def _row(store, i: int, s: Suggested) -> None:
    chosen = s.id in st.session_state.get("hood_r" if s.kind == "researcher" else "hood_p", [])
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    with c1:
        render.show_text(f"{i}. {s.label}")
        where = ", ".join(s.field_names) or "no field recorded"
        extra = f" · {s.detail}" if s.detail else ""
        online = f" · online ({s.source})" if s.source != "store" else ""
        st.caption(render.md_escape(f"{where}{extra}{online} · score {s.score:.2f}: {s.reason}"))
    with c2:
        if chosen:
            st.button("Added", key=f"sg_add_{s.kind}_{s.id}", disabled=True)
        else:
            st.button("Add", key=f"sg_add_{s.kind}_{s.id}", type="primary", on_click=_add,
                      args=(store, s))


def _add(store, s: Suggested) -> None:
    """Into the neighbourhood; an online suggestion is imported into the store first."""
    if s.source == "store":
        state.add_to_hood(s.kind, [s.id])
        return
    try:
        papers, people = _fetch(store, s)
        bundle = store.corpus.import_bundle(papers, people, origin=s.source)
    except RTError as exc:
        render.flash("error", render.md_escape(f"{exc} {render.app_hint(exc)}"), "suggest")
        return
    state.add_to_hood("paper", bundle.paper_ids if s.kind == "paper" else [])
    state.add_to_hood("researcher", bundle.researcher_ids)
    render.flash("success", f"Imported {render.md_escape(s.label)} and added to your "
                 "neighbourhood.", "suggest")
    for text in bundle.notices():  # kept as stored, or theirs until published (rt_core.access)
        render.flash("info", render.md_escape(text), "suggest")


def _fetch(store, s: Suggested) -> tuple[list[Paper], list]:
    if s.kind == "paper":
        return [Paper.from_dict(s.record)], []
    from rt_core.sources import clients  # noqa: PLC0415  (only for an online author)

    with clients.openalex(store.http_cache) as oa:
        researcher, papers = oa.author_with_works(s.import_id, limit=20)
    return papers, [researcher]
