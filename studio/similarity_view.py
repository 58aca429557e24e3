"""How a run's proposal compares with real papers and reviews, on Results: the similarity to
its reference paper with the LLM judge's scores, the comparisons made afterwards with other
papers and the form for a new one, and the comparison of its reviews with a real review.

Each function takes what it shows: the run, the store, the run's background job (a
comparison waits until the run is done) and the `allowed` actions Results asked
rt_core.access for. Reference texts and the judge's rationale come from papers and models,
so they are shown as text."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from rt_core.access import Action
from rt_core.fiveq import QUESTION_KEYS, QUESTIONS
from rt_core.models.client import ModelSettings
from rt_core.models.registry import follows_instructions
from rt_core.run.evidence.evaluate import compare_reviews, evaluate_against, judge_run
from rt_core.types import Run, Similarity

from . import chance, charts, render, request, resources

JUDGE_LABELS = {"topic": "Topic", "method": "Method", "factual": "Facts", "claim": "Claims",
                "application_context": "Application", "overall": "Overall"}


def _idle(job) -> bool:
    """Whether the run has no background job still writing it."""
    return job is None or job.done


def review_comparison(run: Run, store, job, allowed: dict) -> None:
    """A pasted real review against the generated ones: per point recall and the score gap."""
    if not run.reviews or not _idle(job):
        return
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
            c1.metric("Strengths recall", _figure(rs.get("strengths")))
            c2.metric("Weaknesses recall", _figure(rs.get("weaknesses")))
            c3.metric("Delta S (score difference)", _figure(rs.get("delta_s")))


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _judge(run: Run, store, job, allowed: dict, model: str) -> None:
    """Consistency, novelty and feasibility scores from an LLM judge (1-10), or the button
    that asks the model chosen on the Run page (`model`) for them."""
    import plotly.graph_objects as go  # noqa: PLC0415  (slow; only when a run has a reference)

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
    local = not follows_instructions(model.strip())  # a base model cannot judge
    st.caption("Ask the model chosen on the Run page to score how consistent the proposal is with "
               "the reference (topic, method, facts, claims, application), and the novelty and "
               "feasibility of each." + (" The embedded demo model cannot do this: pick a hosted "
                                         "or Ollama model on the Run page." if local else ""))
    if st.button("Ask the LLM judge", key=f"judge_go_{run.id}",
                 disabled=local or not allowed[Action.COMPARE] or not _idle(job)):
        settings = ModelSettings.for_request(request.build_request())
        render.act("The judge is reading both proposals...", lambda: judge_run(run, settings, store))


def show_similarity(run: Run, store, sim: Similarity, paper_id: str, key: str,
                    band_and_why: Callable, what: str) -> None:
    """One similarity (the run's own or a comparison's): its reference, evaluator, mean,
    the chance band beside it, the per-question bars and both texts side by side. The band
    is asked for through `band_and_why` under a spinner: it embeds unrelated papers."""
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


def _compare_form(run: Run, store) -> None:
    """Choose a paper (and optionally paste its five answers) and compare the proposal with it."""
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


def section(run: Run, store, job, allowed: dict, model: str) -> None:
    """The similarity to the run's reference paper with the judge, then every comparison with
    another paper, newest open, and the form for a new one. `model` is the one chosen on the
    Run page: the judge is asked with it."""
    st.header("Similarity to the run's reference paper")
    if run.similarity:
        show_similarity(run, store, run.similarity, run.config.reference_paper_id, run.id,
                        lambda: chance.for_run(store, run), "This run's")
        _judge(run, store, job, allowed, model)
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
            show_similarity(run, store, cmp.similarity, cmp.paper_id, f"{run.id}_{cmp.id}",
                            lambda cmp=cmp: chance.for_comparison(store, run, cmp), "This comparison's")
    if run.proposal is not None and _idle(job) and allowed[Action.COMPARE]:
        _compare_form(run, store)
