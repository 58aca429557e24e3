"""The Run page's "More settings": the evaluator's endpoint, the timeout, how many calls
run at once, and undated papers under a cut-off. Options a first run rarely needs, drawn
folded, from the same schema as every other field (studio.run_fields)."""
from __future__ import annotations

import streamlit as st

from rt_core.models import keys

from . import run_fields


def show() -> None:
    with st.expander("More settings: evaluator, timeout, calls at once"):
        c1, c2 = st.columns(2)
        with c1:
            run_fields.text("evaluator_model", disabled=keys.demo() is not None)
            if st.session_state["evaluator_model"].strip():
                run_fields.text("evaluator_base_url")
                if keys.demo() is None:
                    run_fields.text("evaluator_key")
        with c2:
            run_fields.number("timeout")
            run_fields.number("concurrency")
            run_fields.checkbox("keep_undated", disabled=not st.session_state["use_cutoff"])
