"""A reload brings back the neighbourhood this browser was building.

The selection lives in `st.session_state`, which a reload (a new session) starts empty. The
store keeps each browser's newest selection under its owner hash (rt_core/store/
neighbourhoods.py), written after every page whenever it changed, and read once when a new
session of the same browser (the same owner cookie) has none of its own: a share link's or
a run address's neighbourhood wins over the kept one.
"""
from __future__ import annotations

import logging

import streamlit as st

from . import identity, resources, state

log = logging.getLogger(__name__)
_KEPT = "_hood_kept"  # the selection the store holds for this browser, as last read or written


def _now() -> tuple[tuple[str, ...], tuple[str, ...]]:
    ss = st.session_state
    return tuple(ss["hood_r"]), tuple(ss["hood_p"])


def restore() -> None:
    """Once per session, before any page: an empty neighbourhood takes the kept one (its
    researchers and papers that still exist), with a word that it came back."""
    ss = st.session_state
    if _KEPT in ss:
        return
    store = resources.get_store()
    try:
        researchers, papers = store.neighbourhoods.kept(identity.owner_hash())
    except Exception:  # an unreachable store: this session starts empty, as before
        log.debug("could not read the kept neighbourhood", exc_info=True)
        researchers, papers = [], []
    if (researchers or papers) and not any(_now()):
        state.set_hood([i for i in researchers if store.corpus.researcher_exists(i)],
                       [i for i in papers if store.corpus.paper_exists(i)])
        n_r, n_p = map(len, _now())
        gone = len(researchers) + len(papers) - n_r - n_p
        if n_r or n_p:
            st.toast(f"Your neighbourhood is back: {n_r} researchers and {n_p} papers"
                     + (f" ({gone} no longer in the store left out)." if gone else ", as you left them."),
                     icon="🧭")
    ss[_KEPT] = (tuple(researchers), tuple(papers))


def keep() -> None:
    """After a page: store the selection if it changed since it was last kept or read."""
    ss = st.session_state
    if _KEPT not in ss or ss[_KEPT] == _now():
        return
    try:
        resources.get_store().neighbourhoods.keep(identity.owner_hash(), *map(list, _now()))
    except Exception:  # as above: the page itself still works
        log.debug("could not keep the neighbourhood", exc_info=True)
        return
    ss[_KEPT] = _now()
