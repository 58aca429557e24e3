"""Run: choose a model and settings, start a simulation, watch it live."""
from __future__ import annotations

import streamlit as st

from rt_core import keys
from rt_core.config import LOCAL_MODEL
from rt_core.errors import ConfigError
from rt_core.models import registry
from rt_core.run import jobs, plan, warmup
from rt_core.types import MODES
from studio import budget as budget_view
from studio import render, request, resources, state

store = resources.get_store()
ss = st.session_state
warmup.warm_up()  # the model client imports while the user sets up (rt_core.run.warmup)
STATUS_ICON = {"started": "⏳", "done": "✅", "failed": "❌", "cached": "♻️"}

st.title("Run")
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
        left = request.demo_tokens_left() or 0
        st.info(f"Shared demo: everyone uses the model set by the operator, with the operator's key. "
                f"This session may still spend about {left:,} tokens.", icon="🎪")
    names = request.provider_names()
    if ss["provider"] not in names:
        ss["provider"] = names[0]
    c1, c2 = st.columns(2)
    with c1:
        st.selectbox("Provider", names, key="provider", on_change=_on_provider, disabled=demo is not None,
                     help="Presets fill in a model name and base URL; you can edit both.")
        st.text_input("Model", key="model", disabled=demo is not None,
                      help="A litellm model string, e.g. gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                           "ollama/llama3.1, or openai/<name> with a base URL.")
    model = ss["model"].strip()
    in_process = registry.in_process(model)  # the embedded base model, or the scripted one
    with c2:
        st.text_input("Base URL (optional)", key="base_url", disabled=demo is not None,
                      help="For Ollama or any OpenAI-compatible server. The server's own API keys "
                           "are never sent to a base URL typed here: type a key for it.")
        st.slider("Temperature", 0.0, 1.5, step=0.1, key="temperature")
    if in_process and registry.prompt_style(model) == "stem":
        st.info(f"**{render.md_escape(LOCAL_MODEL)}** is a tiny offline demo model (Gemma 3 270M, a base "
                "model) that runs on this computer without a key. Expect rough ideas; a real "
                "provider such as OpenAI, Anthropic or a local Ollama server is one setting away: "
                "pick it under Provider.", icon="💡")
    elif in_process:
        st.info("The scripted demo model returns canned, well-formed answers: for tests and "
                "demos of the interface, not for research.", icon="🧪")
    else:
        if demo is None:
            st.text_input("API key", type="password", key="api_key",
                          help="Kept only in this browser session's memory; never saved or exported.")
        # The caption and Start apply the same rule (rt_core.keys): whatever Start would
        # refuse for want of a key, the caption already says.
        key = request.key_source(model)
        problem: ConfigError | None = None
        if key.value or ss["base_url"].strip():
            try:
                keys.check(model, ss["base_url"], key.value, key.server)
            except ConfigError as exc:
                problem = exc
        elif registry.key_env(model):  # what check says too, without importing litellm here
            problem = ConfigError("no key", app_hint="No API key for this provider yet: type one "
                                  "above, or ask whoever runs this app to set "
                                  f"{registry.key_env(model)}.")
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
        st.selectbox("Embedder (reviewer choice and similarity)", options, key="embedder",
                     disabled=demo is not None,
                     help="The bundled MiniLM runs offline; hosted ones need their provider's key.")
    with e2:
        if not registry.in_process(ss["embedder"]) and demo is None:
            st.text_input("Embedder API key (if different)", type="password", key="embedder_key")

# -- simulation settings ------------------------------------------------------------------
with st.container(border=True):
    st.subheader("Simulation")
    c1, c2 = st.columns(2)
    with c1:
        st.radio("Aggregation mode", list(MODES), key="mode", horizontal=False,
                 captions=[m.help for m in MODES.values()])
    with c2:
        st.radio("Reviewers", ["Most relevant researchers", request.NAMED_REVIEWERS],
                 key="reviewer_choice", horizontal=True)
        if ss["reviewer_choice"] == request.NAMED_REVIEWERS:
            hood = set(ss["hood_r"])
            candidates = [i for i in store.corpus.all_researcher_ids() if i not in hood]
            ss["reviewer_ids"] = [i for i in ss["reviewer_ids"] if i in candidates]
            rnames = store.corpus.researcher_names(candidates)
            st.multiselect("Named reviewers (not in the neighbourhood)", candidates, key="reviewer_ids",
                           format_func=lambda i, rnames=rnames: rnames.get(i, i))
        else:
            st.number_input("Number of reviewers", 0, 10, step=1, key="num_reviewers",
                            help="Chosen by how close their work is to the proposal.")
        st.checkbox("Profile cut-off year", key="use_cutoff",
                    help="Profiles read only papers up to this year (to mask the future).")
        if ss["use_cutoff"]:
            st.number_input("Read papers up to year", 1900, 2100, step=1, key="cutoff_year")
        titles = resources.paper_choices(store)
        if ss["reference_id"] and ss["reference_id"] not in titles:
            ss["reference_id"] = ""
        st.selectbox("Reference paper (optional)", [""] + list(titles), key="reference_id",
                     format_func=lambda i, titles=titles: render.short(titles[i], 100) if i else "(none)",
                     help="Compare the proposal with a real paper (node masking). If it is also in "
                          "the neighbourhood, the writers do not see it.")


# -- budget: the cap and the estimate of this run (studio.budget) -----------------------
with st.container(border=True):
    st.subheader("Budget")
    budget_view.show(store)


# -- start ----------------------------------------------------------------------------
def _start() -> None:
    try:
        job = jobs.start(request.build_request(), store)
    except Exception as exc:  # RTError as message + hint; anything else still shown
        ss["_start_error"] = exc
        ss.pop("current_run", None)  # the last run's panel would read as this attempt's outcome
        state.clear_run_address()
        return
    ss["jobs"][job.run_id] = job
    ss["session_runs"].append(job.run_id)
    ss["current_run"] = job.run_id
    ss["results_run"] = job.run_id


b1, b2 = st.columns([1, 3])
with b1:
    running = [j for j in ss["jobs"].values() if not j.done]
    spent = budget_view.demo_share_spent(store)
    why_not = ("Another run of this session is still going." if running else
               "The neighbourhood is empty: add researchers or papers first." if not (n_r or n_p)
               else "What this session has left of the demo's token share is too little for this run's "
               "first step." if spent else None)
    st.button("Start", key="run_start", type="primary", on_click=_start, disabled=bool(why_not),
              help=why_not)
with b2:
    if why_not and not running:
        st.caption(f"Start is off: {why_not[0].lower()}{why_not[1:]}")
err = ss.pop("_start_error", None)
if err is not None:
    render.show_error(err)


# -- live progress ------------------------------------------------------------------------
def _failed_where(run, by_stage: dict) -> tuple[str, str]:
    """(group, agent) where a failed run stopped: the stage its run-level error names (the
    runner records the failing stage's group), else the last agent that failed."""
    group_of = {s.name: s.group for s in plan.plan_for(run.config)}
    for e in reversed(run.errors):
        if e.agent == "run":
            return group_of.get(e.stage) or e.stage, ""
    for stage, agents in reversed(list(by_stage.items())):
        for agent, ev in agents.items():
            if ev.status == "failed":
                return stage, agent
    return (run.errors[-1].stage, run.errors[-1].agent) if run.errors else ("", "")


def _progress(run_id: str, read_only: bool = False) -> None:
    """Live progress of a run of this process; read_only: a shared view (no controls)."""
    job = state.job_for(run_id)
    if job is None:
        return
    events = job.snapshot()
    run = job.run
    done = job.done
    # One bar per group of the run's own plan (rt_core.run.plan), the plan the runner executes.
    bar_titles = dict(plan.progress_groups(run.config))
    groups = list(bar_titles)
    by_stage: dict[str, dict[str, object]] = {}
    totals: dict[str, int] = {}
    authors = set(run.config.researcher_ids)
    queue_event = None
    for e in events:
        if e.stage == "queue":
            queue_event = e
            continue
        stage = e.stage
        if stage == "read" and e.agent not in authors:
            # Reviewers' profiles are read during reviewing: counting them under Reading
            # would pull its finished bar back (6 of 6, then 6 of 9).
            by_stage.setdefault("review", {})[f"profile:{e.agent}"] = e
            continue
        by_stage.setdefault(stage, {})[e.agent] = e
        totals[stage] = max(totals.get(stage, 0), e.total)
    agent_ids = {a.removeprefix("profile:") for s in by_stage.values() for a in s}
    names = store.corpus.researcher_names(agent_ids)

    fractions = []
    for stage in groups:
        agents = by_stage.get(stage, {})
        total = max(len(agents), totals.get(stage, 0))
        finished = sum(1 for e in agents.values() if e.status != "started")
        fractions.append(finished / total if total else 0.0)
    # Bars never go backwards: a stage that learns of more work keeps what it showed.
    seen = ss.setdefault(f"_bars_{run_id}", {})
    fractions = [max(f, seen.get(stage, 0.0)) for stage, f in zip(groups, fractions, strict=True)]
    seen.update(zip(groups, fractions, strict=True))
    current = next((s for s in reversed(groups) if s in by_stage), groups[0])
    failed = done and (job.error is not None or bool(job.unexpected) or run.status == "failed")
    finished_ok = done and not failed and run.status == "done"
    overall = 1.0 if finished_ok else min(0.99, sum(fractions) / max(1, len(groups)))
    overall = max(overall, seen.get("_overall", 0.0))
    seen["_overall"] = overall

    waiting = (not done and queue_event is not None and queue_event.status == "waiting"
               and not by_stage)
    if waiting:
        st.info(f"Waiting for the embedded model, which serves one run at a time: "
                f"{render.md_escape(queue_event.partial)}.", icon="⏳")
    if waiting:
        label, box = "Queued for the embedded model", "running"
    elif not done:
        label, box = f"Running · {bar_titles.get(current, current)}", "running"
    elif failed:
        where, who = _failed_where(run, by_stage)
        at = f" while {bar_titles.get(where, render.stage_title(where)) if where else 'starting'}"
        by = f" ({names.get(who, who)})" if who else ""
        label, box = f"Run {run_id} failed{at}{by}", "error"
    elif run.status == "cancelled":
        label, box = f"Run {run_id} cancelled: finished work is kept", "error"
    else:
        label, box = f"Run {run_id} finished", "complete"
    stopped = f"stopped at {int(overall * 100)}%" if done and not finished_ok else f"{int(overall * 100)}%"
    st.progress(overall, text=f"{stopped} · {len(events)} progress events")
    where = _failed_where(run, by_stage)[0] if failed else ""
    with st.status(label, state=box, expanded=not done or failed):
        for stage, frac in zip(groups, fractions, strict=True):
            agents = by_stage.get(stage, {})
            st.markdown(f"**{bar_titles[stage]}**" + (" · ❌ failed here" if stage == where else ""))
            st.progress(frac, text=f"{int(frac * 100)}%")
            for agent, e in agents.items():
                rid = agent.removeprefix("profile:")
                who = names.get(rid, rid) + (" (reading their papers)" if rid != agent else "")
                tail = f": {render.short(e.partial, 160)}" if e.partial else ""
                render.show_text(f"{STATUS_ICON.get(e.status, '•')} {who}{tail}")
    u = run.usage
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Model calls", u.calls)
    m2.metric("Cache hits", u.cache_hits)
    m3.metric("Tokens", f"{u.prompt_tokens + u.completion_tokens:,}",
              help=f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion")
    m4.metric("Cost", f"${u.cost:.4f}")

    if read_only:
        _watching(run_id, run, done)
        return
    if not done and request.demo_tokens_left() is not None and \
            u.prompt_tokens + u.completion_tokens >= (request.demo_tokens_left() or 0):
        job.cancel()  # the session's demo budget is spent: stop after the current calls
    if done and run.status != "running":
        request.count_demo_tokens(run)
    if not done:
        if job.simulation.ctx.cancel.is_set():
            st.info("Cancelling after the current model calls; finished work is kept.")
        elif st.button("Cancel", key=f"cancel_{run_id}"):
            job.cancel()
            st.info("Cancelling after the current model calls; finished work is kept.")
        return

    if job.error is not None:
        render.show_error(job.error)
    if job.unexpected:
        st.error(f"The run stopped unexpectedly: {render.md_escape(job.unexpected)}")
    for e in run.errors:
        st.error(render.stage_error(e, names), icon="⚠️")
        if e.hint:
            st.caption("💡 " + render.md_escape(e.hint))
    for note in run.notes:
        st.info(render.md_escape(note), icon="✂️")
    if run.status == "done":
        st.success(f"Done in {sum(run.timings.values()):.1f} s. The proposal, reviews and scores "
                   "are on the Results page.", icon="✅")
    if (run.proposal is not None or run.status == "done") and st.button(
            "Open results", key=f"open_results_{run_id}", type="primary"):
            ss["results_run"] = run_id
            st.switch_page(state.PAGES["results"])
    if not ss.get(f"_final_{run_id}"):
        # The job ended while the fragment was polling: one full rerun stops the polling
        # and re-enables the Start button.
        ss[f"_final_{run_id}"] = True
        st.rerun()


def _watching(run_id: str, run, done: bool) -> None:
    """The end of a shared view: a link to the results once there are any, no controls."""
    if done and (run.proposal is not None or run.status == "done"):
        st.page_link(state.PAGES["results"], label="See the results", icon="📄",
                     query_params={state.RUN_PARAM: run_id})
    if done and not ss.get(f"_final_{run_id}"):
        ss[f"_final_{run_id}"] = True
        st.rerun()  # stop polling


# Which run this page follows: this session's current one, else the run the address
# names (a refresh keeps `?run=`; a shared link opens it read-only).
current = ss.get("current_run")
linked = state.linked_run()
if linked and linked != current and linked in ss["jobs"]:
    current = ss["current_run"] = linked
if current and current in ss["jobs"]:
    st.subheader("Progress")
    job = ss["jobs"][current]
    state.show_run_in_address(current)
    ss.setdefault(f"_final_{current}", job.done)
    st.fragment(_progress, run_every=None if job.done else 1.0)(current)
elif linked and state.job_for(linked) is not None:
    job = state.job_for(linked)
    st.subheader("Progress")
    st.caption("You are watching a run started elsewhere: read-only. Link: " +
               render.md_escape(state.share_run_url(linked, "run")))
    ss.setdefault(f"_final_{linked}", job.done)
    st.fragment(_progress, run_every=None if job.done else 1.0)(linked, read_only=True)
elif linked:
    st.caption("That run is not going in this app any more; its stored state is on the Results page.")
    st.page_link(state.PAGES["results"], label="Open it in Results", icon="📄",
                 query_params={state.RUN_PARAM: linked})
elif not err:
    st.caption("Press Start: progress appears here while the agents read, write and review.")
