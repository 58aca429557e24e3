"""The Run page's budget block: the cap fields and the estimate of the run before Start.

The cap travels in the RunConfig that `studio.request.build_request` builds (so a resumed
run keeps it); the estimate is `rt_core.run.pipeline.budget.estimate` of that same config, so what
the page promises is what the run checks.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import RTError
from rt_core.run.pipeline import budget
from rt_core.settings import schema

from . import render, request, run_fields, timing_view

# Session keys of the two caps (0: no cap), and of their fields (the schema's). The caps
# are plain keys, copied from the fields when they change: Streamlit drops a widget's key
# on a page that does not draw it, and the cap must still be there when History resumes a run.
TOKENS, COST = run_fields.CAPS["max_tokens"], run_fields.CAPS["max_cost"]
FIELD = {TOKENS: schema.option("max_tokens").key, COST: schema.option("max_cost").key}


def _copy(key: str) -> None:
    st.session_state[key] = st.session_state[FIELD[key]]


def show(store) -> None:
    """The two cap fields and, below them, the estimate of a run with the page's settings."""
    ss = st.session_state
    ss.setdefault(TOKENS, 0)
    ss.setdefault(COST, 0.0)
    ss[FIELD[TOKENS]], ss[FIELD[COST]] = ss[TOKENS], ss[COST]
    c1, c2 = st.columns(2)
    run_fields.number("max_tokens", c1, on_change=_copy, args=(TOKENS,))
    run_fields.number("max_cost", c2, format="%.4f", on_change=_copy, args=(COST,))
    if not (ss.get("hood_r") or ss.get("hood_p")):
        return
    try:
        config = request.build_request().config
        est = budget.estimate(config, store)
    except RTError as exc:
        st.caption(render.md_escape(f"No estimate yet: {exc}"))
        return
    st.caption(render.md_escape(est.summary()))
    timing_view.run_page(config, store)
    if config.max_tokens is not None and request.demo_tokens_left() is not None:
        st.caption(f"Shared demo: this run may spend at most {config.max_tokens:,} tokens.")


def demo_share_spent(store) -> bool:
    """In a shared demo: is what this session has left too little for the run's first stage
    that calls the model? The runner refuses a stage it cannot pay for, so such a run would
    stop before its first call: Start is refused up front instead."""
    left = request.demo_tokens_left()
    if left is None:
        return False
    if left == 0:
        return True
    try:
        config = request.build_request().config
    except RTError:  # nothing to run yet: the Start check says why
        return False
    first = next((c for c in budget.estimate(config, store).stages.values() if c.calls), None)
    return first is not None and left < first.tokens
