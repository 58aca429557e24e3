"""Settings & About: where data lives, caches, versions, the method."""
from __future__ import annotations

import platform
import sys

import streamlit as st

import rt_core
from rt_core import config as rt_config
from rt_core.settings import schema
from studio import identity, render, resources
from studio.frame import ensure_frame

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)
store = resources.get_store()

st.title("Settings & About")
identity.sign_out_control()  # shown to a signed-in operator only

st.subheader("Where your data lives")
st.caption("One SQLite file holds the papers, researchers, runs and caches. Set RT_DATA_DIR "
           "(or RT_DB) before starting the app to put it elsewhere.")
st.code(str(store.path), language=None)
counts = store.counts()
cols = st.columns(4)
for i, (label, key) in enumerate([("Papers", "papers"), ("Researchers", "researchers"),
                                  ("Fields", "fields"), ("Runs", "runs")]):
    cols[i].metric(label, counts.get(key, 0))
st.caption("API keys are never stored: a key typed on the Run page lives only in this browser "
           "session's memory, and runs and exports record the model name, never the key.")

st.subheader("Caches")
st.caption("Model replies, embeddings, paper look-ups and researcher profiles are cached, so "
           "re-running or reopening costs nothing. Clearing makes the next run call the model again.")
sizes = store.cache_sizes()
cache_names = {"llm_cache": "Model replies", "embedding_cache": "Embeddings",
               "http_cache": "Paper source look-ups", "profiles": "Researcher profiles"}
c = st.columns(4)
for i, (k, label) in enumerate(cache_names.items()):
    c[i].metric(label, sizes.get(k, 0))
which = st.multiselect("Caches to clear", list(cache_names), key="settings_clear_which",
                       format_func=lambda k: cache_names[k])
if st.button("Clear selected caches", key="settings_clear", disabled=not which):
    store.clear_caches(which)
    render.flash("success", "Cleared: " + ", ".join(cache_names[k] for k in which) + ".", "settings")
    st.rerun()
render.show_flashes("settings")

st.subheader("Run options")
st.caption("What the Run page offers, with the command-line flag that sets the same thing for "
           "`python -m rt_core run` and `ideate` (one list, rt_core/settings/schema.py). Keys are "
           "typed here and named by an environment variable there.")
st.table({"option": [o.label for o in schema.OPTIONS],
          "command line": [o.cli_flag + (" VAR" if o.kind is schema.KEY else "") for o in schema.OPTIONS],
          "range or choices": [", ".join(o.choices) if o.choices else
                               f"{schema.num_text(o.low)} to {schema.num_text(o.high)}"
                               if o.number and o.low is not None and o.high is not None else ""
                               for o in schema.OPTIONS]})

st.subheader("Versions")
st.table({"component": ["ResearchTown Studio core (rt_core)", "Streamlit", "Python", "Platform"],
          "version": [rt_core.__version__, st.__version__, sys.version.split()[0],
                      platform.platform()]})
st.caption(f"Default model: {render.md_escape(rt_config.LOCAL_MODEL)} · default embedder: "
           f"{render.md_escape(rt_config.LOCAL_EMBEDDER)}")

st.subheader("The method")
st.markdown(
    "ResearchTown treats a research community as a graph with two kinds of nodes: researchers, "
    "who act (each is a language-model agent speaking from a profile distilled from their own "
    "publications), and papers, which hold text. A simulation runs like two rounds of message "
    "passing over that graph. First every chosen researcher *reads* their own work and becomes a "
    "persona. Then each author agent reads the chosen papers and *writes* a draft in the "
    "five-question format (the problem, why it matters, why it is hard, why it is still open, "
    "and the approach), and an aggregator merges the drafts into one proposal. Finally "
    "researchers who did not write it, picked for how close their work is, *review* it with "
    "strengths, weaknesses and a score, and a meta-review sums up. Hiding a real paper and "
    "asking the community to write it again gives a measurable check: how similar is the "
    "generated proposal to the one that was actually written? The ablation modes (self, agent, "
    "data, global) switch parts of the neighbourhood off to show what each contributes.")
st.markdown("Paper: Yu et al., *ResearchTown: Simulator of Human Research Community* "
            "(ICML 2025), [arXiv 2412.17767](https://arxiv.org/abs/2412.17767).")
