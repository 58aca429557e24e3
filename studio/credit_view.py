"""What each researcher brought, on the Results page: leave-one-out credit on request.

The estimate of the new calls comes first (the re-writings reuse every cached call),
then a button; the result is stored on the run, so it is shown again without a call.
A bar per researcher (or paper) for how far the proposal moves without them, the change
in mean review score beside it, and one sentence each, as text.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import RTError
from rt_core.run.credit import variants as credit
from rt_core.types import Run

from . import charts, render, timing_view
from . import request as studio_request


def _bars(run: Run, names: dict[str, str]):
    items = run.credit
    x = [names.get(c.id, c.id) for c in items]
    y = [round(1 - (sum(c.moved.values()) / len(c.moved) if c.moved else 1.0), 4) for c in items]
    return charts.bars_with_band(x, y, y_title="how far the proposal moves (1 − similarity)",
                                 bar_name="distance from the full proposal without them")


def _sentence(c) -> str:
    """The credit sentence with the score and reference changes said as changes without
    them, so a minus reads as "worse without this researcher", not as a score."""
    extra = []
    if c.score_change is not None:
        extra.append(f"the mean review score changes by {c.score_change:+.2f}")
    if c.reference_change is not None:
        extra.append(f"the similarity to the reference by {c.reference_change:+.3f}")
    if not extra:
        return c.sentence
    return f"{c.sentence.rstrip('.')}; without them {' and '.join(extra)}."


def _show_result(run: Run, store) -> None:
    kinds = {c.kind for c in run.credit}
    people = [c.id for c in run.credit if c.kind == "author"]
    papers = [c.id for c in run.credit if c.kind == "paper"]
    names = {**store.corpus.researcher_names(people), **store.corpus.paper_titles(papers)}
    st.plotly_chart(_bars(run, names), key=f"credit_bars_{run.id}", config=charts.PLOT_CONFIG)
    for c in run.credit:
        render.show_text(_sentence(c))
    st.caption("Each bar: 1 minus the mean similarity of the five answers written without "
               f"that {'paper' if kinds == {'paper'} else 'researcher'} to the answers written "
               "with everyone, by the same model and reviewed by the same reviewers.")


def show(run: Run, store, read_only: bool = False) -> None:
    st.header("What each researcher brought")
    if run.credit:
        _show_result(run, store)
    by_paper = st.toggle("Leave out papers instead of researchers", key=f"credit_papers_{run.id}")
    try:
        credit.check_comparable(run, by_paper)
    except RTError as exc:
        st.info(render.md_escape(f"{exc}. {render.app_hint(exc)}"), icon="ℹ️")
        return
    est = credit.estimate(run, store, by_paper)
    st.caption(render.md_escape(est.summary()))
    timing_view.credit_caption(run, est, store)
    label = "What each paper brought" if by_paper else "What each researcher brought"
    if read_only or not st.button(label, key=f"credit_go_{run.id}"):
        return
    bar = st.progress(0.0, text="Re-writing without each in turn...")
    total = est.variants + 1
    done = [0]

    def tick() -> None:
        done[0] += 1
        bar.progress(done[0] / total, text=f"{done[0]} of {total} re-writings")

    try:
        credit.leave_one_out(run, store, studio_request.request_for_run(run), papers=by_paper,
                             on_variant=tick)
    except Exception as exc:
        render.show_error(exc)
        return
    st.rerun()
