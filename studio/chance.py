"""The chance band next to every similarity on the Results page (the run's own and each comparison's).

A similarity means little alone (0.22 for an unrelated paper, 0.22 for a related one),
so Results shows it beside the band Replay uses: how similar the same reference is to
unrelated papers' five answers (rt_core.run.replay.chance_band, reused as is). The
band depends on the reference, its answers and the embedder, never on the proposal,
so it is cached by those and computed once per server.
"""
from __future__ import annotations

import json

import streamlit as st

from rt_core.errors import RTError
from rt_core.models.embed import Embedder
from rt_core.run.evidence.evaluate import Reference
from rt_core.run.replay.paper import ChanceBand, chance_band
from rt_core.store.comparisons import Comparison
from rt_core.types import Proposal, Run, Similarity

from . import request


@st.cache_data(show_spinner=False, max_entries=256)
def _band(_store, _embedder: Embedder, _answers: Proposal | None, paper_id: str, embedder: str,
          source: str, answers_key: str) -> ChanceBand | None:
    """Cached by the reference paper, the embedder and the reference's answers: the
    underscored arguments are not hashed, the plain ones stand for them."""
    return chance_band(_store, _embedder, Reference(_store.corpus.get_paper(paper_id), _answers, source))


def _embedder(store, run: Run, sim: Similarity) -> Embedder:
    """The embedder the similarity was computed with (with the key this session has for it)."""
    emb = Embedder.for_request(request.request_for_run(run), store)
    return emb if emb.name == sim.embedder else Embedder(sim.embedder, store=store)


def for_similarity(store, run: Run, sim: Similarity | None, paper_id: str,
                   embedder: Embedder | None = None) -> tuple[ChanceBand | None, str]:
    """The band for one similarity of `run` with paper `paper_id` (the run's own, or a
    comparison's) and, when there is none, why (one sentence)."""
    if sim is None or not paper_id or not store.corpus.paper_exists(paper_id):
        return None, "No chance band: the reference paper is not in the store."
    try:
        embedder = embedder or _embedder(store, run, sim)
    except RTError as exc:
        return None, f"No chance band: {exc}"
    answers = sim.reference if sim.kind == "five-question" else None
    key = json.dumps(answers.to_dict(), sort_keys=True) if answers else ""
    try:
        band = _band(store, embedder, answers, paper_id, embedder.name, sim.reference_source, key)
    except RTError as exc:
        return None, f"No chance band: {exc}"
    if band is None:
        return None, ("No chance band: fewer than three unrelated papers in the store have five "
                      "answers.")
    return band, ""


def for_run(store, run: Run, embedder: Embedder | None = None) -> tuple[ChanceBand | None, str]:
    """The band for the run's own similarity (with the reference it was started with)."""
    return for_similarity(store, run, run.similarity, run.config.reference_paper_id, embedder)


def for_comparison(store, run: Run, comparison: Comparison,
                   embedder: Embedder | None = None) -> tuple[ChanceBand | None, str]:
    """The band for a comparison made afterwards, with that comparison's paper and answers."""
    return for_similarity(store, run, comparison.similarity, comparison.paper_id, embedder)


def describe(band: ChanceBand, value: float, what: str = "This run's") -> str:
    """Where a similarity stands against the band, in one line."""
    where = ("above the band: closer than chance" if value > band.high else
             "below the band" if value < band.low else "inside the band: no closer than chance")
    return (f"Chance band: median {band.median:.3f}, 90% of unrelated papers between "
            f"{band.low:.3f} and {band.high:.3f} (n = {band.n}). {what} {value:.3f} is {where}.")
