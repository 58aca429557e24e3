"""The Run page's "Brainstorm loop" settings: several candidates and their tournament,
the novelty check, and revision rounds.

One place reads them from the session and hands them to the RunConfig
(`config_fields`), so the request builder and the page never name them twice. The app's
default is four candidates, as a brainstorm wants several ideas; the library's default
(RunConfig.candidates = 1) keeps a plain run a plain run. An operator can change the
app's defaults (RT_APP_CANDIDATES, RT_APP_ROUNDS, RT_APP_NOVELTY=0/1): a live demo on a slow
model may want one candidate and no revision; the test suite starts its apps that way so
that tests about other things keep a run's calls countable.
"""
from __future__ import annotations

import os

import streamlit as st

from rt_core.types import RunConfig

from .persist import ACROSS_PAGES

MAX_CANDIDATES = 12
MAX_ROUNDS = 3



def _env_int(name: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(os.environ.get(name, default))))
    except ValueError:
        return default


# Session defaults (studio.state.PERSISTENT takes them in).
DEFAULTS = {
    "loop_candidates": _env_int("RT_APP_CANDIDATES", 4, 1, MAX_CANDIDATES),
    "loop_judge_model": "",
    "loop_novelty": bool(_env_int("RT_APP_NOVELTY", 1, 0, 1)),
    "loop_online": False,
    "loop_rounds": _env_int("RT_APP_ROUNDS", 1, 0, MAX_ROUNDS),
}


def show() -> None:
    """The widgets; keyed, so their values live in the session across pages."""
    c1, c2 = st.columns(2)
    with c1:
        st.number_input("Candidate proposals", 1, MAX_CANDIDATES, step=1, key="loop_candidates",
                        persist_state=ACROSS_PAGES,
                        help="Each candidate leads with a different author, pair of fields or "
                             "concept pairing; they are then ranked. 1 = a single proposal.")
        st.text_input("Judge model (optional)", key="loop_judge_model", persist_state=ACROSS_PAGES,
                      help="The model that compares candidates two at a time. Empty: the run's "
                           "model, when it can follow instructions; the embedded base model "
                           "cannot judge, so its candidates are ranked by measured signals.")
    with c2:
        st.checkbox("Check novelty against prior work", key="loop_novelty", persist_state=ACROSS_PAGES,
                    help="Match each candidate's problem (Q1) and method (Q5) with the nearest papers.")
        st.checkbox("Search online literature too", key="loop_online", persist_state=ACROSS_PAGES,
                    disabled=not st.session_state["loop_novelty"],
                    help="Semantic Scholar, then OpenAlex, then arXiv. Off: the store is the literature.")
        st.number_input("Revision rounds after review", 0, MAX_ROUNDS, step=1, key="loop_rounds",
                        persist_state=ACROSS_PAGES,
                        help="The authors revise from the reviews; the same reviewers review again. "
                             "Stops early when the mean score does not improve.")


def config_fields() -> dict:
    """The RunConfig fields these settings decide."""
    ss = st.session_state
    return {
        "candidates": int(ss["loop_candidates"]),
        "judge_model": ss["loop_judge_model"].strip(),
        "check_novelty": bool(ss["loop_novelty"]),
        "literature": "online" if ss["loop_novelty"] and ss["loop_online"] else "store",
        "revision_rounds": int(ss["loop_rounds"]),
    }


def restore(config: RunConfig) -> None:
    """A refreshed page shows the loop settings the run was started with."""
    ss = st.session_state
    ss["loop_candidates"] = config.candidates
    ss["loop_judge_model"] = config.judge_model
    ss["loop_novelty"] = config.check_novelty
    ss["loop_online"] = config.literature == "online"
    ss["loop_rounds"] = config.revision_rounds
