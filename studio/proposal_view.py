"""A proposal's five answers on Results, for the run's proposal and each author's draft.

Answers are model text: shown with render.show_text, never as HTML."""
from __future__ import annotations

import streamlit as st

from rt_core.fiveq import QUESTIONS
from rt_core.types import Proposal, Run

from . import provenance_view, render


def show(proposal: Proposal, run: Run, store, chips: bool = False) -> None:
    """The five questions as plain text; a missing answer is flagged, never blank. With
    `chips`, each answer is followed by the sources it drew on: provenance is recorded for
    the run's final proposal, so a draft's answers have none to show."""
    for q in QUESTIONS:
        st.markdown(f"**Q{q.number}. {q.title}**")
        text = getattr(proposal, q.key)
        if not text or q.key in proposal.missing:
            st.warning(f"Missing: the model gave no answer to question {q.number}.", icon="❓")
            if text:
                render.show_text(text)
        else:
            render.show_text(text)
        if chips:
            provenance_view.chips(run, q.key, store)
