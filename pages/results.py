"""Results: the proposal, reviews, similarity to a reference, the graph and downloads."""
from __future__ import annotations

import streamlit as st

from rt_core import access_store, agents
from rt_core.access import Action, shows_cache_hits
from rt_core.errors import RTError
from rt_core.export import run as export
from rt_core.run.people.reviewers import reason_for, uncovered_fields
from rt_core.run.pipeline.progress import RESUMABLE_STATUSES
from rt_core.types import Run
from studio import (
    candidates_view,
    charts,
    credit_view,
    idea_links,
    idea_map_view,
    identity,
    novelty_view,
    proposal_view,
    provenance_view,
    render,
    resources,
    rounds_view,
    run_graph_view,
    score_headline,
    similarity_view,
    state,
    steer_view,
    study,
    timing_view,
)
from studio.frame import ensure_frame

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)
store = resources.get_store()
ss = st.session_state

st.title("Results")

# -- which run --------------------------------------------------------------------------
# Only runs this browser asked for: its own, ones opened from History, and the one its
# address names (`?run=ID`, a refresh or a shared link), each as far as rt_core.access lets
# this browser see it. A fresh visitor never lands on whichever run happened to be last.
viewer = identity.viewer()
rows = {r["id"]: r for r in access_store.listed(store, viewer, limit=500)}
opened = ss.setdefault("opened_runs", [])
explicit = ss.pop("results_run", None)  # History's "Open in Results", the Run page's button
if explicit and explicit not in opened:
    opened.append(explicit)
linked = state.new_linked_run()
viewed = ss.setdefault("viewed_runs", [])  # reached by a link: read-only unless it is this browser's
seen = state.may(Action.VIEW, linked, linked=True) if linked else None
if seen and linked not in viewed:
    viewed.append(linked)
wanted = explicit or linked
options = [i for i in dict.fromkeys([*reversed(ss["session_runs"]), *reversed(opened), *reversed(viewed)])
           if state.may(Action.VIEW, i, linked=i in viewed)]  # deleted, or now in an open study
if linked and not seen:
    st.warning(render.md_escape(seen.reason), icon="🔗")  # the same words for a hidden run as for none
if not options:
    st.info("No run open yet. Start one on the Run page, or open any stored run from "
            "History; its proposal, reviews and scores appear here.", icon="📄")
    study.hidden_runs_note(store, viewer)
    c1, c2, _ = st.columns([1, 1, 3])
    with c1:
        st.page_link(state.PAGES["run"], label="Go to Run", icon="▶️")
    with c2:
        st.page_link(state.PAGES["history"], label="Open History", icon="🗂️")
    st.stop()

ss["results_pick"] = state.run_pick(wanted, ss.get("results_pick"), ss.get("_results_last"), options)


def _label(run_id: str) -> str:
    row = rows.get(run_id)
    mark = "this session · " if run_id in ss["session_runs"] else ""
    if row is None:
        return f"{mark}{run_id}"
    return mark + render.run_label(row)


labels = {i: _label(i) for i in options}  # format_func must not touch session state
run_id = st.selectbox("Run", options, key="results_pick", format_func=lambda i, labels=labels: labels.get(i, i),
                      help="Runs of this session and runs you opened; every stored run is in History.")
ss["_results_last"] = run_id
state.show_run_in_address(run_id)
try:
    run: Run = state.get_run(store, run_id)
except RTError as exc:
    render.show_error(exc)
    st.stop()
job = state.job_for(run_id)
# Each control asks rt_core.access for its own action; a link's view only looks.
allowed = {a: bool(state.may(a, run_id, linked=run_id in viewed)) for a in
           (Action.REVISE, Action.COMPARE, Action.CREDIT, Action.CREATE_STUDY)}
read_only = not allowed[Action.REVISE]
if read_only:
    st.caption("A shared view of this run: read-only. Link: " +
               render.md_escape(state.share_run_url(run_id)))
if job is not None and not job.done:
    st.info("This run is still in progress; what is finished so far is shown. The Run page has "
            "live progress.", icon="⏳")
    c1, c2, _ = st.columns([1, 1, 3])
    if c1.button("Refresh", key="results_refresh"):
        st.rerun()
    with c2:
        st.page_link(state.PAGES["run"], label="Watch it live", icon="⏳",
                     query_params={state.RUN_PARAM: run_id})

names = store.corpus.researcher_names([*run.config.researcher_ids, *(r.reviewer_id for r in run.reviews),
                                      *agents.people(e.agent for e in run.errors)])

# -- header ---------------------------------------------------------------------------------
score_headline.results_header(run)  # a base model's scores are noise: what was measured leads
st.caption(render.md_escape(f"Run {run.id} · {run.created_at} · model {run.config.model} · mode "
                        f"{run.config.mode} · {len(run.config.researcher_ids)} researchers, "
                        f"{len(run.config.paper_ids)} papers"))
timing_view.results_line(store, run)
idea_links.continued_from(store, run)  # a run continued from an idea of the bank links back to it
if run.status in RESUMABLE_STATUSES and (job is None or job.done) and state.may(Action.RESUME, run.id):
    st.warning(f"This run is {run.status}: what finished is shown. Resuming re-runs it with the "
               "same settings; finished model calls come from the cache.", icon="⏯️")
    if st.button("Resume this run", key=f"results_resume_{run.id}"):
        try:
            state.resume_run(store, run.id)
        except RTError as exc:
            render.show_error(exc)
        else:
            st.switch_page(state.PAGES["run"])
if run.notes:
    with st.expander(f"What was shortened to fit the model ({len(run.notes)})"):
        for note in run.notes:
            st.caption(render.md_escape(note))
if run.errors:
    with st.expander(f"Problems during the run ({len(run.errors)})", expanded=run.proposal is None):
        for e in run.errors:
            st.error(render.stage_error(e, names))
            if render.app_hint(e):
                st.caption("💡 " + render.md_escape(render.app_hint(e)))


# -- candidates (a brainstorm's ranking; studio/candidates_view.py) ----------------------------
if run.candidates or run.config.candidates > 1:
    candidates_view.show(run, store, not allowed[Action.CREATE_STUDY] or read_only)

# -- proposal -------------------------------------------------------------------------------
st.header("Proposal")
if run.proposal is None:
    st.warning("This run has no proposal (it failed or was cancelled before the writing stage "
               "finished). See the problems above.", icon="❓")
else:
    proposal_view.show(run.proposal, run, store, chips=True)
    if run.novelty is not None:
        st.subheader("Nearest prior work")
        novelty_view.show(run.novelty, "main", novelty_view.earlier_idea(store, run))  # + the closest earlier idea
    if run.proposal.drafts:
        st.markdown("**Drafts by each author**")
        for d in run.proposal.drafts:
            who = names.get(d.author_id, d.author_id) if d.author_id else "a persona-less writer"
            with st.expander(f"Draft by {render.md_escape(who)}"):
                proposal_view.show(d, run, store)

# -- reviews -------------------------------------------------------------------------------
st.header("Reviews")
if not run.reviews:
    st.info("No reviews: the run asked for no reviewers, or it ended before reviewing.", icon="📝")
else:
    fig = charts.score_bars([names.get(r.reviewer_id, r.reviewer_id) for r in run.reviews],
                            [r.score for r in run.reviews],
                            run.meta_review.score if run.meta_review else None)
    st.plotly_chart(fig, key=f"scores_{run.id}")
    if uncovered_fields(store, run):
        st.caption(render.md_escape("No reviewer from " + ", ".join(uncovered_fields(store, run)) + ": every "
                                    "researcher there is an author or a close co-author, or the seats ran out."))
    for r in run.reviews:
        who = names.get(r.reviewer_id, r.reviewer_id)
        score = r.score if r.score is not None else "missing"
        with st.expander(f"Review by {render.md_escape(who)} · score {score}"):
            if reason_for(run, r.reviewer_id):
                st.caption("Why this reviewer: " + render.md_escape(reason_for(run, r.reviewer_id)))
            st.markdown("**Strengths**")
            render.show_text(r.strengths or "(missing)")
            st.markdown("**Weaknesses**")
            render.show_text(r.weaknesses or "(missing)")
            provenance_view.review_chips(run, r.reviewer_id, store)
    if run.meta_review:
        m = run.meta_review
        st.subheader("Meta-review")
        st.caption("A summary of all reviews; the final score is the mean of the reviewers' scores.")
        c1, c2 = st.columns(2)
        with c1:
            st.markdown("**Strengths**")
            render.show_text(m.strengths or "(missing)")
        with c2:
            st.markdown("**Weaknesses**")
            render.show_text(m.weaknesses or "(missing)")

similarity_view.review_comparison(run, store, job, allowed)  # a real review against the generated ones

rounds_view.show(run, names)  # revision rounds: score trajectory and per-question diffs
rounds_view.revise_control(run, store, read_only)  # more rounds for a finished run
steer_view.show(run, store, bool(state.may(Action.STEER, run_id, linked=run_id in viewed)), names)
idea_map_view.section(run, store)  # every candidate and version by meaning (studio/idea_map_view.py)

similarity_view.section(run, store, job, allowed, ss["model"])  # studio/similarity_view.py
run_graph_view.section(run, store)  # assembled by rt_core.graph.run_graph
credit_view.show(run, store, not allowed[Action.CREDIT])

# -- downloads ----------------------------------------------------------------------------
if not state.may(Action.EXPORT, run.id, linked=run_id in viewed):
    st.stop()
st.header("Export")
labels_for_export = export.Names.for_runs(store, [run])
idea = novelty_view.earlier_idea(store, run)  # the closest earlier idea, as on the page
d1, d2, d3, _ = st.columns([1, 1, 1, 1])
with d1:
    st.download_button("Download Markdown", export.run_markdown(run, labels_for_export, shows_cache_hits(viewer), idea),
                       file_name=f"researchtown-{run.id}.md", mime="text/markdown",
                       key=f"dl_md_{run.id}", on_click="ignore")
with d2:
    st.download_button("Download JSON", export.run_json(run, labels_for_export, shows_cache_hits(viewer), idea),
                       file_name=f"researchtown-{run.id}.json", mime="application/json",
                       key=f"dl_json_{run.id}", on_click="ignore")
with d3:
    st.download_button("Download reviews (CSV)", export.reviews_csv(run, labels_for_export),
                       file_name=f"researchtown-{run.id}-reviews.csv", mime="text/csv",
                       key=f"dl_csv_{run.id}", on_click="ignore", disabled=not run.reviews)
st.caption("Exports hold the model name and settings, never an API key.")
