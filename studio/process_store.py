"""The one store of this server process, as no particular browser sees it.

It lives apart from studio.resources because two callers need it at different depths:
`resources.get_store` hands pages the store *as this browser sees it*, which needs to know who
the browser is (studio.identity), while studio.identity itself needs the store to know who the
browser is (the store's kind decides personal or shared; operator sessions live in it). With the
raw store below both, neither has to import the other.
"""
from __future__ import annotations

import streamlit as st

from rt_core import community
from rt_core import config as rt_config
from rt_core.store import Store, open_store


@st.cache_resource(show_spinner="Opening the store and loading the starter community...")
def _store_at(path: str) -> Store:
    store = open_store(path)
    community.ensure_loaded(store)
    store.runs.mark_interrupted()  # runs a previous server process left 'running'
    return store


def process_store() -> Store:
    """The process's store, keyed by path (so tests can point elsewhere), unscoped: for the
    server's own questions (its kind, operator sessions), never for a page's reads."""
    return _store_at(str(rt_config.db_path()))
