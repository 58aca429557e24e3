"""The one set-up every page needs when it is opened straight by its address.

The cause: a folder named `pages/` beside app.py makes a freshly started Streamlit server
run in its legacy multipage mode until the first `st.navigation` call of the process. Until
then a typed `/results?run=ID` runs pages/results.py on its own, without app.py: no page
config, no session schema (`state.init_state`), no navigation, so the page's first
`st.session_state[...]` raises KeyError. Doing app.py's set-up again inside each page would
still leave the legacy sidebar; instead the page hands over to app.py at once.
"""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure_frame() -> None:
    """Called first by every page file. When the page runs alone (the legacy mode), switch
    the process to st.navigation (exactly what app.py's own `st.navigation` call does) and
    rerun: app.py then runs, sets the session up and opens this same page (the page's hash
    is its address in both modes), with the address's `?run=` and other parameters kept.
    Only for a session app.py has not set up yet (its schema's first key is missing): that is
    a first request, which carries no click a rerun would drop. (AppTest resets the flag on
    every run; its sessions were set up by their first run, so their pages run on as before.)"""
    if not PagesManager.uses_pages_directory or "hood_r" in st.session_state:
        return
    PagesManager.uses_pages_directory = False
    st.rerun()
