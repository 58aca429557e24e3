"""The figures a run leads with, by what its model's review scores are worth.

An instruction model's mean review score says something about the proposal. A base
model's does not: the embedded Gemma 3 270M writes a digit a grammar forces after
"Overall score from 1 (reject) to 10 (top 2%):", and an off-topic run scored 8.0 against
6.3 for the full one (issue 26). Whether a model's scores carry signal is declared on its
prompt style (rt_core/models/registry.py `scores_carry_signal`), never guessed here. For a
model whose scores do not, Results and History lead with what the run measured (answers
written, review sections the model wrote itself, field coverage, novelty distance,
fluency: whichever the run recorded) and give the score one short line saying what it is
worth.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import streamlit as st

from rt_core import access, fiveq
from rt_core.models.registry import style_traits
from rt_core.types import Run

from . import identity

SCORE_WORTH = ("Mean review score {score} (reviewers' scores {each}): on a base model these are "
               "close to noise, so compare runs by the measures above, not by the score.")
HISTORY_NOTE = ("Scores of runs on a base model ({models}) are close to noise: their Results lead "
                "with what was measured instead.")


@dataclass(frozen=True)
class Figure:
    label: str
    value: str
    help: str


def scores_tell(model: str, prompt_style: str = "auto") -> bool:
    """Whether this model's review scores say something (its style's declared trait)."""
    return style_traits((model or "").strip(), prompt_style).scores_carry_signal


def _winner_signals(run: Run) -> dict[str, float]:
    """The measured signals of the candidate that became the run's proposal, if ranked."""
    order = run.tournament.order if run.tournament else []
    best = next((c for c in run.candidates if order and c.id == order[0]), None)
    return dict(best.signals) if best else {}


def _novelty(run: Run, signals: dict[str, float]) -> float | None:
    """1 - mean similarity of the nearest paper per facet: how far from prior work."""
    if "novelty" in signals:
        return signals["novelty"]
    tops = [f.nearest[0].similarity for f in (run.novelty.facets if run.novelty else []) if f.nearest]
    return 1.0 - sum(tops) / len(tops) if tops else None


def measured(run: Run) -> list[Figure]:
    """What the run measured, most telling first; only figures it recorded."""
    out: list[Figure] = []
    if run.proposal is not None:
        done = len(fiveq.QUESTIONS) - len(run.proposal.missing)
        out.append(Figure("Questions answered", f"{done} of {len(fiveq.QUESTIONS)}",
                          "Answers the model wrote; a missing one is flagged below, never filled in."))
    if run.reviews:
        total = 2 * len(run.reviews)
        own = total - sum(len(r.checked) for r in run.reviews)
        # A short label: a metric column on a laptop screen cut the longer one mid-word.
        out.append(Figure("Sections written", f"{own} of {total}",
                          "Review sections (strengths, weaknesses) the model wrote itself. The rest "
                          "said nothing checkable and hold labelled automatic checks instead."))
    signals = _winner_signals(run)
    if "field_coverage" in signals:
        out.append(Figure("Field coverage", f"{signals['field_coverage']:.0%}",
                          "Share of the chosen fields whose specific words the proposal uses."))
    novelty = _novelty(run, signals)
    if novelty is not None:
        out.append(Figure("Novelty distance", f"{novelty:.2f}",
                          "1 minus the similarity of the nearest paper found (0: a copy)."))
    if "fluency" in signals:
        out.append(Figure("Fluency", f"{signals['fluency']:.2f}",
                          "The model's mean log-probability per token of its answers (closer to 0: "
                          "more fluent)."))
    return out


def score_worth(run: Run) -> str:
    """The one line a base-model run's score gets."""
    m = run.meta_review
    score = f"{m.score:.1f}" if m and m.score is not None else "none"
    each = ", ".join(str(r.score) for r in run.reviews if r.score is not None) or "none"
    return SCORE_WORTH.format(score=score, each=each)


def _metrics(figures: list[Figure], limit: int) -> None:
    for col, f in zip(st.columns(max(1, min(limit, len(figures)))), figures[:limit], strict=False):
        col.metric(f.label, f.value, help=f.help)


def results_header(run: Run) -> None:
    """The Results page's headline figures."""
    if scores_tell(run.config.model, run.config.prompt_style):
        h1, h2, h3, h4 = st.columns(4)
        h1.metric("Status", run.status)
        h2.metric("Mean review score", f"{run.meta_review.score:.1f}" if run.meta_review and
                  run.meta_review.score is not None else "—")
        h3.metric("Similarity to reference", f"{run.similarity.mean:.3f}" if run.similarity else "—")
        hits = f"cache hits {run.usage.cache_hits}, " if access.shows_cache_hits(identity.viewer()) else ""
        h4.metric("Model calls", run.usage.calls, help=f"{hits}tokens "
                  f"{run.usage.prompt_tokens + run.usage.completion_tokens:,}, cost ${run.usage.cost:.4f}")
        return
    figures = [Figure("Status", run.status, ""), *measured(run)]
    if run.similarity:
        figures.append(Figure("Similarity to reference", f"{run.similarity.mean:.3f}", ""))
    _metrics(figures, 5)
    st.caption(score_worth(run))


def compare_metrics(run: Run) -> None:
    """History's side-by-side figures for one run."""
    if scores_tell(run.config.model, run.config.prompt_style):
        m1, m2 = st.columns(2)
        m1.metric("Mean score", f"{run.meta_review.score:.1f}" if run.meta_review and
                  run.meta_review.score is not None else "—")
        m2.metric("Similarity", f"{run.similarity.mean:.3f}" if run.similarity else "—")
        return
    _metrics(measured(run), 3)
    st.caption(score_worth(run))


def history_note(models: Iterable[str]) -> None:
    """Under History's table: which listed runs' scores are noise."""
    base = sorted({m for m in models if m and not scores_tell(m)})
    if base:
        st.caption(HISTORY_NOTE.format(models=", ".join(base)))
