"""The router file in the app: loaded at startup (a bad file stops the app with one
message), and on the Run page, the fleet's deployments and the calls each has served.

A deployment is shown by its model name, id, model and address, never its key
(rt_core.models.router.Deployment holds none). Counts are this app process's own: each
app server behind a proxy counts the calls it made.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import ConfigError
from rt_core.models import router
from studio import render


def install() -> None:
    """Load RT_ROUTER_CONFIG once per process; a broken file stops every page with its
    message and hint instead of a traceback."""
    try:
        router.install()
    except ConfigError as exc:
        render.show_error(exc)
        st.stop()


def rows(fleet: router.Fleet) -> list[dict]:
    """One row per deployment: what may be shown, and its counts."""
    served, cooling = fleet.served(), fleet.cooling()
    return [{"Model name": d.model_name, "Deployment": d.id, "Serves": d.model,
             "Address": d.api_base or "(the provider's own endpoint)",
             "Calls served": served.get(d.id, 0),
             "State": "cooling down" if d.id in cooling else "ready"} for d in fleet.deployments]


def show() -> None:
    """The Run page's block: nothing when no router file is set."""
    fleet = router.active()
    if fleet is None:
        return
    with st.container(border=True):
        st.subheader("Model endpoints")
        names = ", ".join(sorted(fleet.names))
        st.caption(f"These model names go through litellm's Router, spread over the "
                   f"deployments below: {render.md_escape(names)}. Each deployment uses its own "
                   "key from the router file; counts are this app server's since it started.")
        st.dataframe(rows(fleet), hide_index=True, width="stretch")
