"""ResearchTown Studio: the Streamlit entry frame (pages live in pages/).

Kept thin on purpose: page config, shared state, navigation (pages grouped in sections). Heavy objects (the
store) are cached per process in studio.resources; litellm is only imported when
a model is called (or when RT_SCRIPTED=demo registers the demo model).
"""
import streamlit as st

from rt_core.models.scripted import maybe_install_from_env
from studio import identity, kept_hood, rater_session, render, resources, router_view, state

st.set_page_config(page_title="ResearchTown Studio", page_icon="🏘️", layout="wide")
maybe_install_from_env()
router_view.install()  # RT_ROUTER_CONFIG: a fleet of model endpoints behind litellm's Router
resources.get_store()
state.init_state()
identity.observe()  # personal or shared for this request (a proxied one turns it shared first)

joining = state.joining_study()  # a join link lands on the rating page
if joining:  # ...and on nothing else: no sidebar, no other page, nothing that names an arm
    rater_session.remember()  # a reload (the root typed over the link) stays a rater's view
    st.navigation([st.Page(state.PAGES["study_rate"], title="Rate proposals")], position="hidden").run()
    st.stop()
if st.session_state.pop("_forget_rater", False):
    rater_session.remember(False)
identity.settle()  # operator link, owner cookie: who this browser is (rt_core.access decides the rest)
kept_hood.restore()  # a reload brings back the neighbourhood this browser was building
state.adopt_linked_run()  # a refreshed page of a live run this browser may control


def page(key: str, **kw) -> st.Page:
    """One line per page: its file, its typed address (state.URL_PATHS), title and icon.
    The default page is served at the root instead; a hidden twin answers its address."""
    path = "home" if kw.get("default") else state.URL_PATHS[key]
    return st.Page(state.PAGES[key], url_path=path, **kw)


nav = st.navigation({
    "Build": [page("neighbourhood", title="Neighbourhood", icon=":material/hub:", default=True)],
    "Run": [page("run", title="Run", icon=":material/play_arrow:"),
            page("results", title="Results", icon=":material/description:"),
            page("history", title="History", icon=":material/history:"),
            page("ideas", title="Ideas", icon=":material/lightbulb:")],
    "Evaluate": [page("replay", title="Replay a paper", icon=":material/replay:")],
    "Study": [page("study_create", title="Create a study", icon=":material/groups:"),
              page("study_rate", title="Rate proposals", icon=":material/rate_review:"),
              page("study_results", title="Study results", icon=":material/leaderboard:")],
    "About": [page("settings", title="Settings", icon=":material/settings:")],
    "": [page("neighbourhood", title="Neighbourhood", visibility="hidden")],
})
# The app's name on every page (the browser tab alone was not enough).
st.markdown("#### 🏘️ ResearchTown Studio")
identity.show_notices()  # a wrong operator link, an old owner link: said once, at the top
try:
    nav.run()
finally:  # after the page, so the summary reflects what the page just changed
    kept_hood.keep()
    render.nav_sidebar()
