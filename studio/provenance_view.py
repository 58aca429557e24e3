"""Where each answer came from, on the Results page: its sources as chips under it.

A chip is an author's draft or a paper, with its attribution score (cosine with the
run's embedder) and a mark when the editor cited it. Choosing a chip highlights that
researcher or paper in the community graph further down (`highlighted`); the graph is far
below, so a line right under the chip says what happened there (ringed, with a link down,
or not drawn at all: a paper an author's profile was read from). Names and
titles are escaped (st.pills renders its labels as Markdown), so they show as typed.
"""
from __future__ import annotations

import streamlit as st

from rt_core.types import Run, Source

from . import render

PREFIX = "prov_chip"
GRAPH_ANCHOR = "community-graph-with-the-new-paper"  # the Results page's graph header


def _key(run: Run, part: str) -> str:
    return f"{PREFIX}_{run.id}_{part}"


@st.cache_data(show_spinner=False, max_entries=64)
def _names(_store, run_id: str, people: tuple[str, ...], papers: tuple[str, ...]) -> dict[str, str]:
    return {**_store.corpus.researcher_names(list(people)), **_store.corpus.paper_titles(list(papers))}


def names_for(store, run: Run) -> dict[str, str]:
    from rt_core.export.sources import sources_named  # noqa: PLC0415  (keeps page import light)

    people, papers = sources_named(run)
    return _names(store, run.id, tuple(sorted(people)), tuple(sorted(papers)))


def chip_label(s: Source, names: dict[str, str]) -> str:
    icon = "👤" if s.kind == "author" else "📄"
    name = " ".join((names.get(s.id) or s.id).split())
    name = name if len(name) <= 48 else name[:47] + "…"
    # st.pills renders its labels as Markdown: a title's own * or [ ] are escaped.
    return f"{icon} {render.md_escape(name)} · {s.score:.2f}" + (" · cited" if s.cited else "")


def drawn(run: Run) -> set[str]:
    """The ids the community graph draws: the run's authors, papers and reviewers."""
    return {*run.config.researcher_ids, *run.config.paper_ids, *(r.reviewer_id for r in run.reviews)}


def feedback(run: Run, chosen: str, names: dict[str, str]) -> str:
    """What choosing a chip did, said beside it (the graph is far down the page)."""
    name = render.md_escape(" ".join((names.get(chosen) or chosen).split()))
    if chosen in drawn(run):
        return f"↓ {name} is ringed in the [community graph below](#{GRAPH_ANCHOR})."
    return f"{name} is not drawn in the community graph (a paper an author's profile was read from)."


def _pills(run: Run, label: str, sources: list[Source], key: str, names: dict[str, str]) -> None:
    by_id = {s.id: s for s in sources}
    chosen = st.pills(label, list(by_id), selection_mode="single", key=key,
                      format_func=lambda i: chip_label(by_id[i], names),
                      help="Cosine similarity of this text with each draft's same answer and with each "
                           "paper's title and abstract; 'cited': the editor named the draft. Choose one "
                           "to highlight it in the community graph below.")
    if chosen:
        st.caption(feedback(run, chosen, names))


def chips(run: Run, question_key: str, store) -> None:
    """The sources of one answer, under it (nothing when the run has no provenance)."""
    prov = run.provenance
    sources = (prov.answers.get(question_key) or []) if prov else []
    if sources:
        _pills(run, "Draws on", sources, _key(run, question_key), names_for(store, run))


def review_chips(run: Run, reviewer_id: str, store) -> None:
    prov = run.provenance
    sources = (prov.reviews.get(reviewer_id) or []) if prov else []
    if sources:
        _pills(run, "Draws on the reviewer's own papers", sources, _key(run, f"review_{reviewer_id}"),
               names_for(store, run))


def highlighted(run: Run) -> frozenset[str]:
    """The ids of every chip chosen on this run's page (for the graph's `highlight`)."""
    prefix = _key(run, "")
    return frozenset(v for k, v in st.session_state.items() if str(k).startswith(prefix) and v)


def note_absent(run: Run, graph_nodes, store) -> None:
    """Say which chosen sources the graph does not draw."""
    absent = sorted(highlighted(run) - set(graph_nodes))
    if absent:
        names = names_for(store, run)
        st.caption("Not drawn in the graph (a paper an author's profile was read from): " +
                   render.md_escape("; ".join(names.get(i, i) for i in absent)))
