"""The Run page's word, before Start, on whether the offline writer will have a bridge.

Only for a model that writes from the papers' facets (the embedded base model: its declared
style's `writes_from_facets`, never its name): such a run carries a method of one field to a
problem of another only where the method can run on the other side's data, else its
proposal is a long shot. The page says which bridge the chosen papers give, or names up to
three researchers of the store who would give one, each with an "Add" button that puts the
researcher (and nothing else) into the neighbourhood, as the Neighbourhood page's Add does.
rt_core decides all of it (run/facets/hints.py); this view only draws it.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import RTError
from rt_core.models import registry
from rt_core.models.embed import Embedder
from rt_core.run.facets.hints import BridgeState, Hint, bridge_hints, bridge_state

from . import render, state


@st.cache_data(show_spinner=False, ttl=600, max_entries=64)
def _found(_store, path: str, seen_by: str, sizes: tuple[int, int], researcher_ids: tuple[str, ...],
           paper_ids: tuple[str, ...], mode: str) -> tuple[BridgeState, list[Hint]]:
    """Cached by the store (its path, whose view, its sizes) and the neighbourhood: a rerun
    of the page that changed neither computes nothing. The underscored store is not hashed.
    Facets are found with the bundled MiniLM whatever embedder the run will use: a hint
    never calls a paid embedding service, and the run reads the facets kept here."""
    embedder = Embedder(store=_store)
    now = bridge_state(_store, researcher_ids, paper_ids, mode, embedder)
    return now, ([] if now.bridged else bridge_hints(_store, researcher_ids, paper_ids, 3, mode, embedder))


def _add(researcher_id: str) -> None:
    state.add_to_hood("researcher", [researcher_id])


def show(store, model: str) -> None:
    """The bridge in one line, or the hints; nothing for a model that writes its own prose."""
    ss = st.session_state
    if not registry.style_traits(model).writes_from_facets or not (ss["hood_r"] or ss["hood_p"]):
        return
    counts = store.counts()
    try:
        now, hints = _found(store, str(store.path), store.corpus.scope.owner_hash,
                            (counts["papers"], counts["researchers"]), tuple(ss["hood_r"]),
                            tuple(ss["hood_p"]), ss["mode"])
    except RTError as exc:  # an id the store no longer has: said once, Start says the rest
        st.caption(f"No bridge check: {render.md_escape(exc)}")
        return
    if now.bridged:
        st.caption(f"Offline bridge: {render.md_escape(now.sentence)}")
        return
    if now.bridge == "none":
        why = f"No bridge offline: {now.sentence}, which would make this a long shot."
    else:
        why = f"No bridge offline: {now.sentence} This would make the proposal a long shot."
    with st.container(border=True, key="bridge_hints"):
        st.info(render.md_escape(why), icon="🌉")  # advice, not a fault: warnings are for what went wrong
        if not hints:
            st.caption("No researcher of the store, added alone, would give one.")
        else:
            st.caption("Adding one of these researchers would give the offline writer a bridge:")
        for h in hints:
            c1, c2 = st.columns([5, 1], vertical_alignment="center")
            with c1:
                render.show_text(h.line)
            with c2:
                st.button(f"Add {render.md_escape(h.name)}", key=f"bridge_add_{h.researcher_id}", on_click=_add,
                          args=(h.researcher_id,))
