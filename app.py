"""ResearchTown Studio: the Streamlit entry point (pages live in pages/).

Kept thin on purpose: page config, shared state, navigation. Heavy objects
(the store) are cached per process in studio_ui; litellm is only imported
when a model is called (or when RT_SCRIPTED=demo registers the demo model).
"""
import streamlit as st

from rt_core.scripted import maybe_install_from_env

import studio_ui as ui

st.set_page_config(page_title="ResearchTown Studio", page_icon="🏘️", layout="wide")
maybe_install_from_env()
ui.get_store()
ui.init_state()

nav = st.navigation([
    st.Page(ui.PAGES["neighbourhood"], title="Neighbourhood", icon=":material/hub:", default=True),
    st.Page(ui.PAGES["run"], title="Run", icon=":material/play_arrow:"),
    st.Page(ui.PAGES["results"], title="Results", icon=":material/description:"),
    st.Page(ui.PAGES["history"], title="History", icon=":material/history:"),
    st.Page(ui.PAGES["settings"], title="Settings & About", icon=":material/settings:"),
])
try:
    nav.run()
finally:  # after the page, so the summary reflects what the page just changed
    ui.nav_sidebar()
