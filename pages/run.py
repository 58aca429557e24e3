"""Run: choose a model and settings, start a simulation, watch it live."""
from __future__ import annotations

import contextlib

import streamlit as st

from rt_core.access import Action
from rt_core.config import LOCAL_MODEL
from rt_core.errors import RTError
from rt_core.models import keys, registry
from rt_core.run.pipeline import jobs, warmup
from rt_core.types import MODES
from studio import (
    advanced_settings,
    bridge_hint_view,
    identity,
    loop_settings,
    polling,
    progress,
    render,
    request,
    resources,
    router_view,
    run_fields,
    scroll,
    state,
)
from studio import budget as budget_view
from studio.frame import ensure_frame
from studio.persist import ACROSS_PAGES

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)
store = resources.get_store()
ss = st.session_state

st.title("Run")
watched = state.linked_run()
if watched and watched not in ss["jobs"] and not (seen := state.may(Action.VIEW, watched, linked=True)):
    st.warning(render.md_escape(seen.reason), icon="🔗")  # the same words for a hidden run as for none
    watched = ""
if watched and watched not in ss["jobs"] and state.job_for(watched) is not None:
    # A shared link to a run going in this app: its live progress alone, read-only (the
    # settings below would read as that run's; they are this visitor's own).
    st.caption("You are watching a run started elsewhere: read-only. Link: " +
               render.md_escape(state.share_run_url(watched, "run")))
    st.page_link(state.PAGES["neighbourhood"], label="Build a neighbourhood of your own", icon="🧭")
    st.subheader("Progress")
    ss.setdefault(f"_final_{watched}", state.job_for(watched).done)
    st.fragment(progress.show, run_every=polling.every(state.job_for(watched).done))(store, watched, read_only=True)
    st.stop()
n_r, n_p = len(ss["hood_r"]), len(ss["hood_p"])
if n_r or n_p:
    st.caption(f"Neighbourhood: {n_r} researchers and {n_p} papers.")
else:
    st.info("Your neighbourhood is empty: add researchers and papers (or load a case study) "
            "on the Neighbourhood page first.", icon="🧭")
st.page_link(state.PAGES["neighbourhood"], label="Edit the neighbourhood", icon="🧭")


def _on_provider() -> None:
    d = request.provider_defaults(ss["provider"])
    ss["model"] = d["model"]
    ss["base_url"] = d["base_url"]
    ss["api_key"] = ""  # a key typed for one provider is never sent to another


# -- model settings ---------------------------------------------------------------------
demo = keys.demo()
ss.update(request.demo_settings())  # a shared demo shows the operator's settings, locked
with st.container(border=True):
    st.subheader("Model")
    if demo is not None:
        st.info("Shared demo: everyone uses the model set by the operator, with the operator's key. " +
                render.md_escape(request.demo_left(store).words()), icon="🎪")
    names = request.provider_names()
    if ss["provider"] not in names:
        ss["provider"] = names[0]
    c1, c2 = st.columns(2)
    with c1:
        st.selectbox("Provider", names, key="provider",
                     persist_state=ACROSS_PAGES, on_change=_on_provider, disabled=demo is not None,
                     help="Presets fill in a model name and base URL; you can edit both.")
        run_fields.text("model", disabled=demo is not None)
    model = ss["model"].strip()
    in_process = registry.in_process(model)  # the embedded base model, or the scripted one
    with c2:
        run_fields.text("base_url", disabled=demo is not None)
        run_fields.slider("temperature")
    if in_process and not registry.follows_instructions(model):
        st.info(f"**{render.md_escape(LOCAL_MODEL)}** is a tiny offline demo model (Gemma 3 270M, a base "
                "model) that runs on this computer without a key. Expect rough ideas; a real "
                "provider such as OpenAI, Anthropic or a local Ollama server is one setting away: "
                "pick it under Provider.", icon="💡")
    elif in_process:
        st.info("The scripted demo model returns canned, well-formed answers: for tests and "
                "demos of the interface, not for research.", icon="🧪")
    else:
        if demo is None:
            run_fields.text("model_key")
        # The caption and Start apply the same rule (rt_core.models.keys): whatever Start would
        # refuse for want of a key, the caption already says.
        key = request.key_source(model)
        problem = keys.problem(model, key, ss["base_url"])
        if key.source == request.BLOCKED:
            st.warning("The server's API key is only sent to the provider's own endpoint (or to "
                       "addresses the operator allows), not to this base URL. Type a key for this "
                       "server above; if it needs none, type any text, such as none.", icon="🔒")
        elif problem is not None:
            st.warning(render.md_escape(render.app_hint(problem) or problem), icon="🔑")
        elif key.source:
            st.caption(f"Using the API key from: {key.source}.")  # our own words, never typed text
        else:
            st.caption("No key is needed for this model and address.")
    e1, e2 = st.columns(2)
    with e1:
        options = list(request.EMBEDDERS)
        if ss["embedder"] not in options:
            options.append(ss["embedder"])
        run_fields.select("embedder", options, disabled=demo is not None)
    with e2:
        if not registry.in_process(ss["embedder"]) and demo is None:
            run_fields.text("embedder_key")

router_view.show()  # the router file's deployments and their calls (RT_ROUTER_CONFIG)

# -- simulation settings ------------------------------------------------------------------
with st.container(border=True):
    st.subheader("Simulation")
    c1, c2 = st.columns(2)
    with c1:
        st.radio("Aggregation mode", list(MODES), key="mode", persist_state=ACROSS_PAGES, horizontal=False,
                 captions=[m.help for m in MODES.values()])
    with c2:
        st.radio("Reviewers", ["Most relevant researchers", request.NAMED_REVIEWERS],
                 key="reviewer_choice", persist_state=ACROSS_PAGES, horizontal=True)
        if ss["reviewer_choice"] == request.NAMED_REVIEWERS:
            hood = set(ss["hood_r"])
            candidates = [i for i in store.corpus.all_researcher_ids() if i not in hood]
            ss["reviewer_ids"] = [i for i in ss["reviewer_ids"] if i in candidates]
            rnames = store.corpus.researcher_names(candidates)
            st.multiselect("Named reviewers (not in the neighbourhood)", candidates, key="reviewer_ids",
                           persist_state=ACROSS_PAGES,
                           format_func=lambda i, rnames=rnames: rnames.get(i, i))
        else:
            run_fields.number("num_reviewers")
        st.checkbox("Profile cut-off year", key="use_cutoff", persist_state=ACROSS_PAGES,
                    help="Profiles read only papers up to this year (to mask the future).")
        if ss["use_cutoff"]:
            run_fields.number("cutoff_year")
        titles = resources.paper_choices(store)
        if ss["reference_id"] and ss["reference_id"] not in titles:
            ss["reference_id"] = ""
        st.selectbox("Reference paper (optional)", [""] + list(titles), key="reference_id", persist_state=ACROSS_PAGES,
                     format_func=lambda i, titles=titles: render.short(titles[i], 100) if i else "(none)",
                     help="Compare the proposal with a real paper (node masking). If it is also in "
                          "the neighbourhood, the writers do not see it.")


# -- the brainstorm loop: candidates, novelty, revision (studio.loop_settings) ----------
with st.container(border=True):
    st.subheader("Brainstorm loop")
    loop_settings.show()
advanced_settings.show()  # the evaluator, the timeout, calls at once


# -- budget: the cap and the estimate of this run (studio.budget) -----------------------
with st.container(border=True):
    st.subheader("Budget")
    budget_view.show(store)
# Just above Start: whether an offline (facets) writer has a bridge, else whom to add for one
# (drawn at the top, it pushed the settings down until a browser test's provider list opened
# off the screen). Always one container, empty for a model that writes its own prose, so the
# elements below keep their places when the provider changes and none is drawn twice
# meanwhile (a browser test found two "Model" fields while the page redrew without the hint).
with st.container(key="bridge_hint_slot"):
    if n_r or n_p:
        bridge_hint_view.show(store, (request.demo_settings().get("model") or ss["model"]).strip())
# What a run with these settings loads, while the user sets up (rt_core.run.pipeline.warmup);
# settings not usable yet (the budget above says why) are warmed at a later draw.
with contextlib.suppress(RTError):
    warmup.warm_up(*warmup.for_settings(request.build_request().config))


# -- start ----------------------------------------------------------------------------
def _start() -> None:
    try:
        job = jobs.start(request.build_request(), store, owner_hash=identity.owner_hash())
    except Exception as exc:  # RTError as message + hint; anything else still shown
        ss["_start_error"] = exc
        ss.pop("current_run", None)  # the last run's panel would read as this attempt's outcome
        state.clear_run_address()
        return
    ss["jobs"][job.run_id] = job
    ss["session_runs"].append(job.run_id)
    ss["current_run"] = job.run_id
    ss["results_run"] = job.run_id
    ss["_scroll_to_progress"] = job.run_id  # Start is at the bottom: its progress comes into view


b1, b2 = st.columns([1, 3])
with b1:
    running = [j for j in ss["jobs"].values() if not j.done]
    spent = budget_view.demo_refusal(store)  # in a shared demo: today's allowance, in words
    fix = run_fields.problems()  # a field out of range says which, beside it
    why_not = ("Another run of this session is still going." if running else
               f"A setting above is out of range: {fix[0]}." if fix else
               "The neighbourhood is empty: add researchers or papers first." if not (n_r or n_p)
               else spent or None)
    st.button("Start", key="run_start", type="primary", on_click=_start, disabled=bool(why_not),
              help=why_not)
with b2:
    if why_not and not running:
        st.caption(f"Start is off: {why_not[0].lower()}{why_not[1:]}")
err = ss.pop("_start_error", None)
if err is not None:
    render.show_error(err)


# -- progress -------------------------------------------------------------------------------
# Which run this page follows: this session's current one, else the run the address names
# (a refresh keeps `?run=`; a shared link to a live run is drawn at the top, read-only).
current = ss.get("current_run")
linked = state.new_linked_run()
if linked and linked != current and linked in ss["jobs"]:
    current = ss["current_run"] = linked
if current and current in ss["jobs"]:
    job = ss["jobs"][current]
    state.show_run_in_address(current)
    ss.setdefault(f"_final_{current}", job.done)
    with st.container(key="run_progress"):
        st.subheader("Progress")
        st.fragment(progress.show, run_every=polling.every(job.done))(store, current)
    if ss.pop("_scroll_to_progress", None) == current:
        scroll.into_view("run_progress", current)
elif linked and state.may(Action.VIEW, linked, linked=True):
    st.caption("That run is not going in this app any more; its stored state is on the Results page.")
    st.page_link(state.PAGES["results"], label="Open it in Results", icon="📄",
                 query_params={state.RUN_PARAM: linked})
elif not err:
    st.caption("Press Start: progress appears here while the agents read, write and review.")
