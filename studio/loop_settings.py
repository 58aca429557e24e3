"""The Run page's "Brainstorm loop" settings: several candidates and their tournament
(with the judge's own endpoint), the novelty check, and revision rounds.

The fields come from the settings schema (studio.run_fields); the request builder reads
them back through `run_fields.values`, so neither names them twice. The app's default is
four candidates, as a brainstorm wants several ideas; the library's default
(RunConfig.candidates = 1) keeps a plain run a plain run. An operator can change the
app's defaults (RT_APP_CANDIDATES, RT_APP_ROUNDS, RT_APP_NOVELTY=0/1): a live demo on a slow
model may want one candidate and no revision; the test suite starts its apps that way so
that tests about other things keep a run's calls countable.
"""
from __future__ import annotations

import os

import streamlit as st

from rt_core.models import keys
from rt_core.settings import schema

from . import run_fields


def _env_int(name: str, option: str, default: int) -> int:
    """An operator's default for a number option, kept within the option's bounds."""
    o = schema.option(option)
    try:
        return max(int(o.low or 0), min(int(o.high or 0), int(os.environ.get(name, default))))
    except ValueError:
        return default


# Session defaults (studio.state.PERSISTENT takes them in, over run_fields.defaults()).
DEFAULTS = {
    "loop_candidates": _env_int("RT_APP_CANDIDATES", "candidates", 4),
    "loop_novelty": os.environ.get("RT_APP_NOVELTY", "1").strip() != "0",
    "loop_rounds": _env_int("RT_APP_ROUNDS", "revision_rounds", 1),
}


def show() -> None:
    """The widgets; keyed, so their values live in the session across pages."""
    c1, c2 = st.columns(2)
    with c1:
        run_fields.number("candidates")
        run_fields.text("judge_model")
        if st.session_state["loop_judge_model"].strip():  # the judge's own address and key
            run_fields.text("judge_base_url")
            if keys.demo() is None:  # in a shared demo nobody types a key
                run_fields.text("judge_key")
    with c2:
        run_fields.checkbox("check_novelty")
        run_fields.checkbox("literature", disabled=not st.session_state["loop_novelty"])
        run_fields.number("revision_rounds")
