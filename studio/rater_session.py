"""A browser that joined a study as a rater stays a rater's until the browser closes.

Typing the root address over the join link reloads the page, and a reload is a new Streamlit
session: what `st.session_state` remembered is gone. So the rating page also leaves a session
cookie (no expiry: it ends with the browser session), which app.py reads on every new session
(state.joining_study). It holds no secret and names no study: it only says "show this browser
the rating page alone"; the organiser's token still opens the whole app.
"""
from __future__ import annotations

import streamlit as st

COOKIE = "rt_rater"

_JS = f"""
export default function ({{ data }}) {{
  document.cookie = data.rater ? "{COOKIE}=1; path=/; SameSite=Strict"
                               : "{COOKIE}=; path=/; SameSite=Strict; max-age=0";
}}
"""


@st.cache_resource
def _component():
    return st.components.v2.component("rt_rater_session", js=_JS)


def remember(rater: bool = True) -> None:
    """Leave the cookie in this browser (drawn on the rating page of a rater-only session), or
    take it away (the organiser's token opened the app in this browser)."""
    _component()(key="rater_session_cookie", data={"rater": rater})


def joined_before() -> bool:
    """This browser joined a study as a rater earlier in its session (the cookie is back)."""
    try:
        return st.context.cookies.get(COOKIE) == "1"
    except Exception:  # no browser context
        return False
