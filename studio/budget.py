"""The Run page's budget block: the cap fields and the estimate of the run before Start.

The cap travels in the RunConfig that `studio.request.build_request` builds (so a resumed
run keeps it); the estimate is `rt_core.run.pipeline.budget.estimate` of that same config, so what
the page promises is what the run checks. In a shared demo the block also says what this
visitor and the server have left of today's allowance, and `demo_refusal` gives the words
of a Start it would refuse; both are rt_core.allowance's answers, only shown here.
"""
from __future__ import annotations

import streamlit as st

from rt_core import allowance
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
    left = request.demo_left(store)
    if left is not None:
        st.caption(render.md_escape(f"Shared demo: {left.words()}"))


def demo_refusal(store) -> str:
    """In a shared demo: why Start is refused, in words a visitor can act on (what is left for
    them and for the server, and when it renews), or '' when it is not. The first step that
    calls the model must fit in what is left (rt_core.allowance.refusal, the same check the
    run makes when it starts, and before every call after)."""
    left = request.demo_left(store)
    if left is None:
        return ""
    need = 0
    if left.tokens > 0:
        try:
            config = request.build_request().config
            need = allowance.first_step(budget.estimate(config, store))
        except RTError:  # nothing to run yet: the Start check says why
            return ""
    refused = allowance.refusal(left, need)
    if refused is None:
        return ""
    said = f"{refused}. {render.app_hint(refused)}"
    return said[0].upper() + said[1:]
