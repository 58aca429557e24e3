"""Where each answer came from, on the Results page: its sources as chips under it.

A chip is an author's draft or a paper, with its attribution score (cosine with the
run's embedder) and a mark when the editor cited it. Choosing a chip highlights that
researcher or paper in the community graph further down (`highlighted`); a paper that is
not drawn there (one the author's profile was read from) is said to be absent. Names and
titles are escaped (st.pills renders its labels as Markdown), so they show as typed.
"""
from __future__ import annotations

import streamlit as st

from rt_core.types import Run, Source

from . import render

PREFIX = "prov_chip"


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


def _pills(label: str, sources: list[Source], key: str, names: dict[str, str]) -> None:
    by_id = {s.id: s for s in sources}
    st.pills(label, list(by_id), selection_mode="single", key=key,
             format_func=lambda i: chip_label(by_id[i], names),
             help="Cosine similarity of this text with each draft's same answer and with each "
                  "paper's title and abstract; 'cited': the editor named the draft. Choose one "
                  "to highlight it in the community graph below.")


def chips(run: Run, question_key: str, store) -> None:
    """The sources of one answer, under it (nothing when the run has no provenance)."""
    prov = run.provenance
    sources = (prov.answers.get(question_key) or []) if prov else []
    if sources:
        _pills("Draws on", sources, _key(run, question_key), names_for(store, run))


def review_chips(run: Run, reviewer_id: str, store) -> None:
    prov = run.provenance
    sources = (prov.reviews.get(reviewer_id) or []) if prov else []
    if sources:
        _pills("Draws on the reviewer's own papers", sources, _key(run, f"review_{reviewer_id}"),
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
