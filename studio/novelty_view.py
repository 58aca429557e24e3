"""A proposal's novelty check on the Results page: per facet the verdict, the nearest
papers as links, and the model's explanation, all from a `Novelty` record.

`show(novelty, key)` takes the record and a key prefix so the Candidates view can call it
once per candidate card. Titles, explanations and notes come from papers and models, so
they are shown as text: titles as Markdown links with every special character escaped
(render.md_escape) and only http(s) addresses linked; explanations with st.text.
"""
from __future__ import annotations

from urllib.parse import quote, urlsplit

import streamlit as st

from rt_core.ideas import closest as closest_idea
from rt_core.run.novelty import is_close
from rt_core.run.novelty.explain import FACET_NAMES
from rt_core.types import FacetNovelty, Novelty, Run

from . import idea_links, identity, render

SOURCE_NAMES = {"store": "this store", "semantic_scholar": "Semantic Scholar",
                "openalex": "OpenAlex", "arxiv": "arXiv"}


def safe_link(url: str) -> str:
    """An http(s) address with the characters that could end a Markdown link escaped;
    '' for anything else (javascript:, data:, relative paths...)."""
    url = (url or "").strip()
    if urlsplit(url).scheme not in ("http", "https"):
        return ""
    return quote(url, safe=":/?#[]@!$&'*+,;=%~-._")  # percent-encodes ( ) < > spaces


def paper_line(rank: int, title: str, year: int | None, url: str, similarity: float,
               source: str) -> str:
    """One nearest paper as safe Markdown: a link when its address is http(s)."""
    name = render.md_escape(title + (f" ({year})" if year else ""))
    link = safe_link(url)
    shown = f"[{name}]({link})" if link else name
    where = render.md_escape(SOURCE_NAMES.get(source, source))
    return f"{rank}\\. {shown} · similarity {similarity:.2f} · {where}"


def _facet(f: FacetNovelty) -> None:
    name = FACET_NAMES.get(f.facet, f.facet).capitalize()
    verdict = render.md_escape(f.verdict)
    label = f"**{name} (Q{f.facet[1:]})**: {verdict}"
    (st.warning if is_close(f) else st.success)(label, icon="📚" if is_close(f) else "✅")
    lines = [paper_line(i, p.title, p.year, p.url, p.similarity, p.source)
             for i, p in enumerate(f.nearest, 1)]
    if lines:
        st.markdown("  \n".join(lines))
    if f.explanation:
        st.caption("The model's reading ([P1] is the first paper above, and so on):")
        render.show_text(f.explanation)


def show(novelty: Novelty | None, key: str, earlier: closest_idea.Closest | None = None) -> None:
    """The check's verdicts and nearest papers, then the closest earlier idea when given
    (`earlier_idea`); nothing when no check ran. `key` prefixes the view's container key, so
    it can appear once per candidate on one page (and a browser test can find each one:
    class st-key-<key>-novelty)."""
    if novelty is None:
        return
    with st.container(key=f"{key}-novelty"):
        where = ", ".join(SOURCE_NAMES.get(s, s) for s in novelty.sources)
        close_from = f"A paper counts as close prior work from similarity {novelty.threshold:.2f}."
        if novelty.online:
            st.caption(render.md_escape(f"Searched {where}. {close_from}"))
        else:
            st.caption(render.md_escape("Offline: the papers in this store are the literature; "
                                        f"nothing online was searched. {close_from}"))
        if novelty.warning:  # said once, where it is seen
            st.warning(render.md_escape(novelty.warning), icon="🌐")
        for f in novelty.facets:
            _facet(f)
        if novelty.notes:
            with st.expander(f"Notes on the search ({len(novelty.notes)})", expanded=False):
                for note in novelty.notes:
                    st.caption(render.md_escape(note))
        show_earlier(earlier, key)


def earlier_idea(store, run: Run, version: str = "proposal") -> closest_idea.Closest | None:
    """The closest earlier idea of the same person this browser may see (rt_core decides:
    rt_core/ideas/closest.py), for the section and the run's export."""
    if run.novelty is None:
        return None
    return closest_idea.for_run(idea_links.bank_for(store), identity.viewer(), run, version)


def earlier_ideas_of_candidates(store, run: Run) -> dict[str, closest_idea.Closest]:
    """Each candidate's closest earlier idea this browser may see (one read of the bank for all
    cards; rt_core/ideas/closest.py decides), for the Candidates view."""
    ids = [c.id for c in run.candidates]
    if not ids:
        return {}
    return closest_idea.for_versions(idea_links.bank_for(store), identity.viewer(), run, ids)


def show_earlier(found: closest_idea.Closest | None, key: str) -> None:
    """Beside the closest paper: the closest earlier idea, its similarity and a link that opens
    it on the Ideas page (`/ideas?idea=ID`), or that there is none. Its Q1 is model text: shown
    escaped."""
    if found is None:
        return
    with st.container(key=f"{key}-earlier-idea"):
        (st.warning if found.repeats else st.info)(render.md_escape(found.sentence()), icon="💡")
        if found.found:
            idea_links.open_idea(found.idea_id, f"Open idea {found.idea_id} on the Ideas page", f"{key}-earlier-link")

