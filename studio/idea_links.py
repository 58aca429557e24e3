"""Links between a run and the ideas of the bank, drawn where a page asks: an idea opened on
the Ideas page by its address (`/ideas?idea=RUN_ID:VERSION`), and "Continued from idea X" on
Results. What may be named is decided in rt_core (rt_core/ideas/lineage.py); this only draws."""
from __future__ import annotations

import streamlit as st

from rt_core.ideas import bank as ideas_bank
from rt_core.ideas import lineage
from rt_core.types import Run

from . import identity, render, state

IDEA_PARAM = "idea"  # /ideas?idea=RUN_ID:VERSION opens that idea on the Ideas page


def bank_for(store) -> ideas_bank.Bank:
    return ideas_bank.for_store(store, per_owner=identity.shared())


def open_idea(idea_id: str, label: str, key: str) -> None:
    """A link that opens one idea on the Ideas page."""
    with st.container(key=key):
        st.page_link(state.PAGES["ideas"], label=render.md_escape(label), icon="💡",
                     query_params={IDEA_PARAM: idea_id})


def linked_idea() -> str:
    """The idea the address names, once per address (a later pick in the list is kept)."""
    ss = st.session_state
    wanted = (st.query_params.get(IDEA_PARAM) or "").strip()
    if not wanted or ss.get("_ideas_linked") == wanted:
        return ""
    ss["_ideas_linked"] = wanted
    return wanted


def continued_from(store, run: Run) -> None:
    """Results: the idea this run was continued from, a link to it, or that its run is gone."""
    got = lineage.origin(bank_for(store), identity.viewer(), run)
    if got is None:
        return
    if got.state == lineage.DELETED:
        st.caption("🔗 " + render.md_escape(got.sentence()))
        return
    open_idea(got.idea_id, got.sentence() + " Open it on the Ideas page.", "results-from-idea")
