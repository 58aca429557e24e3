"""Process-wide cached objects: the store (with the starter community loaded), presets,
and picker data. Streamlit caches them across sessions; rt_core does the work."""
from __future__ import annotations

import streamlit as st

from rt_core import access, community
from rt_core.store import Store
from studio import identity
from studio.process_store import process_store


def get_store() -> Store:
    """The shared store for this process (keyed by path, so tests can point elsewhere), as
    this browser sees its corpus: the shared papers and researchers and those it added
    itself (rt_core.access.record_scope). Every page reads through it, and a run started
    from a page gets it, so no page or run reaches another visitor's records."""
    return process_store().seen_by(access.record_scope(identity.viewer()))


@st.cache_data(show_spinner=False, ttl=60)
def _paper_choices(_store: Store, path: str, version: int, seen_by: str) -> dict[str, str]:
    # The store itself is not hashed (leading underscore); its path (a PostgreSQL URL
    # without the password), paper count and whose view it is key the cache.
    return _store.corpus.paper_choices()


def paper_choices(store: Store) -> dict[str, str]:
    """id -> title of the papers this browser sees, for pickers (one query, cached briefly)."""
    return _paper_choices(store, str(store.path), store.counts()["papers"], store.corpus.scope.owner_hash)


@st.cache_data(show_spinner=False)
def presets() -> list[dict]:
    return community.presets()


def field_names(store: Store) -> dict[str, str]:
    return {f["id"]: f["name"] for f in store.corpus.list_fields()}
