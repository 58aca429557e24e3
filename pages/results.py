"""Results: the proposal, reviews, similarity to a reference, the graph and downloads."""
from __future__ import annotations

import streamlit as st

from rt_core import access_store, agents
from rt_core.access import Action, shows_cache_hits
from rt_core.errors import RTError
from rt_core.export import run as export
from rt_core.fiveq import QUESTION_KEYS, QUESTIONS
from rt_core.graph import add_proposal, build_graph
from rt_core.models.client import ModelSettings
from rt_core.models.registry import follows_instructions
from rt_core.run.evidence.evaluate import compare_reviews, evaluate_against, judge_run
from rt_core.run.people.reviewers import reason_for, uncovered_fields
from rt_core.types import Proposal, Run, Similarity
from studio import (
    candidates_view,
    chance,
    charts,
    credit_view,
    idea_map_view,
    identity,
    novelty_view,
    provenance_view,
    render,
    request,
    resources,
    rounds_view,
    score_headline,
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
novelty_view.continued_from(store, run)  # a run continued from an idea of the bank links back to it
if run.status in state.RESUMABLE and (job is None or job.done) and state.may(Action.RESUME, run.id):
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


def show_proposal(p: Proposal, prefix: str) -> None:
    """The five questions as plain text; a missing answer is flagged, never blank."""
    for q in QUESTIONS:
        st.markdown(f"**Q{q.number}. {q.title}**")
        text = getattr(p, q.key)
        if not text or q.key in p.missing:
            st.warning(f"Missing: the model gave no answer to question {q.number}.", icon="❓")
            if text:
                render.show_text(text)
        else:
            render.show_text(text)
        if prefix == "main":
            provenance_view.chips(run, q.key, store)


# -- candidates (a brainstorm's ranking; studio/candidates_view.py) ----------------------------
if run.candidates or run.config.candidates > 1:
    candidates_view.show(run, store, not allowed[Action.CREATE_STUDY] or read_only)

# -- proposal -------------------------------------------------------------------------------
st.header("Proposal")
if run.proposal is None:
    st.warning("This run has no proposal (it failed or was cancelled before the writing stage "
               "finished). See the problems above.", icon="❓")
else:
    show_proposal(run.proposal, "main")
    if run.novelty is not None:
        st.subheader("Nearest prior work")
        novelty_view.show(run.novelty, "main", novelty_view.earlier_idea(store, run))  # + the closest earlier idea
    if run.proposal.drafts:
        st.markdown("**Drafts by each author**")
        for j, d in enumerate(run.proposal.drafts):
            who = names.get(d.author_id, d.author_id) if d.author_id else "a persona-less writer"
            with st.expander(f"Draft by {render.md_escape(who)}"):
                show_proposal(d, f"draft{j}")

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

if run.reviews and (job is None or job.done):
    with st.expander("Compare with a real review", expanded=bool(run.review_similarity)):
        st.caption("Paste a real review of the reference paper with 'Strengths:', 'Weaknesses:' "
                   "and 'Score:' parts. For each of its points, the closest point of the "
                   "generated reviews counts (a recall); Delta S is the score difference.")
        real = st.text_area("Real review", key=f"real_review_{run.id}", height=160)
        if st.button("Compare reviews", key=f"review_sim_go_{run.id}",
                     disabled=not real.strip() or not allowed[Action.COMPARE]):
            render.act("Embedding both reviews' points...", lambda: compare_reviews(run, real, store))
        rs = run.review_similarity
        if rs:
            c1, c2, c3 = st.columns(3)
            fmt = lambda v: "-" if v is None else f"{v:.3f}"
            c1.metric("Strengths recall", fmt(rs.get("strengths")))
            c2.metric("Weaknesses recall", fmt(rs.get("weaknesses")))
            c3.metric("Delta S (score difference)", fmt(rs.get("delta_s")))

rounds_view.show(run, names)  # revision rounds: score trajectory and per-question diffs
rounds_view.revise_control(run, store, read_only)  # more rounds for a finished run
steer_view.show(run, store, bool(state.may(Action.STEER, run_id, linked=run_id in viewed)), names)
idea_map_view.section(run, store)  # every candidate and version by meaning (studio/idea_map_view.py)

# -- similarity -------------------------------------------------------------------------------
JUDGE_LABELS = {"topic": "Topic", "method": "Method", "factual": "Facts", "claim": "Claims",
                "application_context": "Application", "overall": "Overall"}


def _judge_section() -> None:
    """Consistency, novelty and feasibility scores from an LLM judge (1-10)."""
    import plotly.graph_objects as go

    st.subheader("LLM judge")
    if run.judge:
        j = run.judge
        keys = [k for k in JUDGE_LABELS if j.get(k) is not None]
        fig = go.Figure(go.Bar(x=[JUDGE_LABELS[k] for k in keys], y=[j[k] for k in keys],
                               marker_color="#B279A2", text=[j[k] for k in keys],
                               textposition="outside"))
        fig.update_layout(height=260, yaxis={"range": [0, 10.5], "title": "consistency (1-10)"},
                          margin={"l": 10, "r": 10, "t": 20, "b": 10})
        st.plotly_chart(fig, key=f"judge_{run.id}")
        c1, c2 = st.columns(2)
        c1.metric("Novelty: reference / generated",
                  f"{j.get('novelty_reference') or '-'} / {j.get('novelty_generated') or '-'}")
        c2.metric("Feasibility: reference / generated",
                  f"{j.get('feasibility_reference') or '-'} / {j.get('feasibility_generated') or '-'}")
        if j.get("rationale"):
            render.show_text(j["rationale"])
        if j.get("evaluator"):
            st.caption(render.md_escape(f"Judge: {j['evaluator']}"))
        return
    local = not follows_instructions(ss["model"].strip())  # a base model cannot judge
    st.caption("Ask the model chosen on the Run page to score how consistent the proposal is with "
               "the reference (topic, method, facts, claims, application), and the novelty and "
               "feasibility of each." + (" The embedded demo model cannot do this: pick a hosted "
                                         "or Ollama model on the Run page." if local else ""))
    if st.button("Ask the LLM judge", key=f"judge_go_{run.id}", disabled=local or not allowed[Action.COMPARE] or
                 (job is not None and not job.done)):
        settings = ModelSettings.for_request(request.build_request())
        render.act("The judge is reading both proposals...", lambda: judge_run(run, settings, store))


def show_similarity(sim: Similarity, paper_id: str, key: str, band_and_why, what: str) -> None:
    """One similarity (the run's own or a comparison's): its reference, evaluator, mean,
    the chance band beside it, the per-question bars and both texts side by side."""
    ref_title = store.corpus.paper_titles([paper_id]).get(paper_id, paper_id)
    st.caption("Reference: " + render.md_escape(ref_title) + " · five answers from " +
               render.md_escape(sim.reference_source or "the reference") + " · evaluator " +
               render.md_escape(sim.evaluator or sim.embedder))
    if sim.kind == "whole-text":
        st.metric("Similarity to the abstract (whole text)", f"{sim.mean:.3f}",
                  help="No five-question reference exists for this paper, so the whole proposal "
                       "was compared with its abstract; not comparable with per-question scores.")
    else:
        st.metric("Mean similarity over Q1-Q5", f"{sim.mean:.3f}",
                  help="Over all five questions: a question the proposal left out counts 0.")
    if sim.missing:
        st.caption("Missing from the proposal (each counts 0 in the mean): " +
                   ", ".join(k.upper() for k in sim.missing))
    with st.spinner("Comparing the reference with unrelated papers..."):
        band, why = band_and_why()
    st.caption(chance.describe(band, sim.mean, what) if band else why)
    qs = [k for k in QUESTION_KEYS if k in sim.per_question]
    fig = charts.bars_with_band(
        [k.upper() for k in qs] + ["mean"], [sim.per_question[k] for k in qs] + [sim.mean], band,
        y_title="cosine similarity", colour=["#54A24B"] * len(qs) + ["#2E6B2A"], bar_name="similarity",
        medians=[band.per_question.get(k) for k in qs] + [band.median] if band else None)
    st.plotly_chart(fig, key=f"sim_{key}", config=charts.PLOT_CONFIG)
    if sim.reference and run.proposal:
        with st.expander("Reference and proposal side by side", expanded=False):
            for q in QUESTIONS:
                value = sim.per_question.get(q.key)
                st.markdown(f"**Q{q.number}. {q.title}** · similarity " +
                            ("missing" if value is None else f"{value:.3f}"))
                c1, c2 = st.columns(2)
                with c1:
                    st.caption("Reference")
                    render.show_text(getattr(sim.reference, q.key) or "(missing)")
                with c2:
                    st.caption("Generated")
                    render.show_text(getattr(run.proposal, q.key) or "(missing)")


st.header("Similarity to the run's reference paper")
if run.similarity:
    show_similarity(run.similarity, run.config.reference_paper_id, run.id,
                    lambda: chance.for_run(store, run), "This run's")
    _judge_section()
else:
    st.caption("This run was started without a reference paper. Comparisons with papers made "
               "afterwards are listed below; they never become the run's reference.")

st.header("Comparisons with other papers")
comparisons = store.comparisons.for_run(run.id)
if not comparisons:
    st.caption("None yet. Each comparison is kept beside the run, with its paper, where that "
               "paper's five answers came from and its evaluator.")
for n, cmp in enumerate(comparisons, 1):
    title = store.corpus.paper_titles([cmp.paper_id]).get(cmp.paper_id, cmp.paper_id)
    with st.expander(f"{n}. {render.short(title, 80)} · {cmp.similarity.mean:.3f} · {cmp.created_at[:16]}",
                     expanded=n == len(comparisons)):
        show_similarity(cmp.similarity, cmp.paper_id, f"{run.id}_{cmp.id}",
                        lambda cmp=cmp: chance.for_comparison(store, run, cmp), "This comparison's")
if run.proposal is not None and (job is None or job.done) and allowed[Action.COMPARE]:
    ptitles = resources.paper_choices(store)
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    with c1:
        ref = st.selectbox("Compare with a paper", list(ptitles), key=f"sim_ref_{run.id}",
                           format_func=lambda i, ptitles=ptitles: render.short(ptitles[i], 100), index=None,
                           placeholder="Choose a paper from the store")
    with c2:
        go_sim = st.button("Compute similarity", key=f"sim_go_{run.id}", disabled=ref is None)
    # Keyed by the paper too: answers pasted for one paper are never sent with another.
    pasted_ref = st.text_area("This paper's own five answers (optional)", key=f"sim_pasted_{run.id}_{ref}",
                              height=100, disabled=ref is None,
                              help="Used before a stored restatement or a shipped summary; without "
                              "any, the proposal is compared with the abstract. Kept with this "
                              "comparison only.")
    if go_sim and ref:
        render.act("Embedding the proposal and the reference's five answers...",
                   lambda: evaluate_against(run, ref, request.request_for_run(run), store,
                                            pasted=pasted_ref))

# -- graph --------------------------------------------------------------------------------
st.header("Community graph with the new paper", anchor=provenance_view.GRAPH_ANCHOR)
rids = [i for i in run.config.researcher_ids if store.corpus.researcher_exists(i)]
pids = [i for i in run.config.paper_ids if store.corpus.paper_exists(i)]
g = build_graph(store.corpus.get_researchers(rids), store.corpus.get_papers(pids))
reviewers = [r.reviewer_id for r in run.reviews]
title = run.proposal.q1 if run.proposal else "Generated proposal (unfinished)"
g = add_proposal(g, title, rids, pids, reviewers)
for rv in reviewers:
    if store.corpus.researcher_exists(rv):
        rec = store.corpus.get_researcher(rv)
        g.nodes[rv]["label"] = rec.name
        g.nodes[rv]["fields"] = list(rec.fields)
st.caption("The star is the generated paper; dashed lines lead to its reviewers, solid lines "
           "to its authors. Nodes are sized by their number of links.")
st.plotly_chart(charts.graph_figure(g, resources.field_names(store), highlight=provenance_view.highlighted(run)),
                key=f"graph_{run.id}", config=charts.PLOT_CONFIG)
provenance_view.note_absent(run, g.nodes, store)
credit_view.show(run, store, not allowed[Action.CREDIT])

# -- downloads ----------------------------------------------------------------------------
if not state.may(Action.EXPORT, run.id, linked=run_id in viewed):
    st.stop()
st.header("Export")
labels_for_export, idea = export.Names.for_runs(store, [run]), novelty_view.earlier_idea(store, run)  # closest earlier
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
