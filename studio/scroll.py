"""Bring a part of the page into view once, after the user's own action put it below the fold.

The Run page's Start button sits under all the settings, and the progress it starts is drawn
below it: a presenter pressed Start and saw nothing happen. Streamlit has no call to scroll,
so a small component of ours (st.components.v2, as the cookies are kept: studio/identity.py)
scrolls the keyed container into view. It is given a container key and a nonce, nothing
else: no HTML is drawn, and no model, paper or typed text reaches the script.
"""
from __future__ import annotations

import re

import streamlit as st

_KEY = re.compile(r"[a-z0-9_]+")

_JS = """
export default function ({ data }) {
  let tries = 0;
  const go = () => {
    // st.container(key=...) draws the class st-key-<key>; it may come a frame later.
    const box = document.querySelector(".st-key-" + data.key);
    if (box) { box.scrollIntoView({ block: "start" }); return; }
    if (++tries < 120) requestAnimationFrame(go);
  };
  go();
}
"""


@st.cache_resource
def _component():
    return st.components.v2.component("rt_scroll_into_view", js=_JS)


def into_view(key: str, nonce: str) -> None:
    """Scroll the container `key` into view once; `nonce` (such as a run id) makes each request
    a new element, so a second Start scrolls again."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a container key of ours: {key!r}")
    _component()(key=f"scroll_{key}_{re.sub(r'[^A-Za-z0-9_]', '_', nonce)[:64]}", data={"key": key})
