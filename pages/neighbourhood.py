"""Neighbourhood: build the community a simulation reads (researchers + papers)."""
from __future__ import annotations

import streamlit as st

from rt_core import community, topic_search
from rt_core.errors import RTError
from rt_core.graph import build_graph, interdisciplinarity
from rt_core.types import Paper
from studio import charts, identity, render, request, resources, state, suggest_view, visitor_records
from studio.frame import ensure_frame

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)

RESULT_LIMIT = 25

store = resources.get_store()
ss = st.session_state
fnames = resources.field_names(store)

st.title("Neighbourhood")
st.caption("Pick researchers and papers from fields that rarely meet. The simulation lets the "
           "researchers read the papers, write a joint proposal and review it.")

if ss.pop("_qp_restored", None) is not None:
    st.success("Restored the neighbourhood and settings from the shared link.", icon="🔗")

# -- presets -------------------------------------------------------------------------
st.subheader("Start from a case study")
preset_list = resources.presets()
if not preset_list:
    st.info("No case studies are bundled with this installation; search and add below.")
else:
    cols = st.columns(min(3, len(preset_list)))
    for i, pr in enumerate(preset_list):
        with cols[i % len(cols)]:
            tip = " ".join(x for x in (pr.get("description"), pr.get("source") and f"({pr['source']})") if x)
            if st.button(render.md_escape(pr["name"]), key=f"preset_{pr['id']}", help=tip or None,
                         width="stretch"):
                state.set_hood(pr["researcher_ids"], pr["paper_ids"])
                st.toast(f"Loaded {render.md_escape(pr['name'])}")
                ss["_preset_msg"] = pr["name"]
    if ss.get("_preset_msg"):
        st.success(f"Loaded case study: {render.md_escape(ss.pop('_preset_msg'))}. "
                   "Review it below, then go to Run.", icon="✅")


def _add(kind: str, item_id: str) -> None:
    state.add_to_hood(kind, [item_id])


def _remove(kind: str, item_id: str) -> None:
    state.remove_from_hood(kind, [item_id])


def _row(kind: str, item_id: str, title: str, caption: str, key_prefix: str,
         compact: bool = False) -> None:
    chosen = item_id in (ss["hood_r"] if kind == "researcher" else ss["hood_p"])
    c1, c2 = st.columns([5, 1] if compact else [4, 1], vertical_alignment="center")
    with c1:
        render.show_text(title)
        st.caption(caption + (visitor_records.OWN if item_id in own else ""))
    with c2:
        if chosen:
            st.button("✕" if compact else "Remove", key=f"{key_prefix}_{item_id}", on_click=_remove,
                      args=(kind, item_id), help="Remove from the neighbourhood")
        else:
            st.button("Add", key=f"{key_prefix}_{item_id}", on_click=_add, args=(kind, item_id),
                      type="primary")


def _hits(items: list, more: str, empty: str, show) -> None:
    """One tab of search results: a count, an empty-state hint, a scrolling list."""
    st.caption(f"Found: {len(items)}{more}")
    if not items:
        st.info(empty, icon="🔎")
    with st.container(height=480, border=False) if len(items) > 5 else st.container():
        for item in items:
            show(item)


def _search(text: str, fields: list[str]) -> tuple[list, list]:
    """Researchers and papers for the search box: by words and meaning when there is text
    (topic_search), else everyone in the chosen fields. The first search after an import
    embeds the new papers (once, kept in the store)."""
    if not text.strip():
        rs = store.corpus.search_researchers("", fields, limit=RESULT_LIMIT)
        ps = store.corpus.search_papers("", fields, limit=RESULT_LIMIT)
        return ([topic_search.ResearcherHit(r, by_name=False) for r in rs],
                [topic_search.PaperHit(p, by_words=True, similarity=None) for p in ps])
    topics = topic_search.for_store(store)
    with st.spinner("Reading new papers so search can match meaning (once per paper)…"):
        topics.prepare(limit=256)
    return (topics.researchers(text, fields, limit=RESULT_LIMIT),
            topics.papers(text, fields, limit=RESULT_LIMIT))


def _why(caption: str, hit) -> str:
    """The row's caption plus, for a search with text, why it matched."""
    reason = ""
    if isinstance(hit, topic_search.PaperHit) and (hit.by_meaning or hit.similarity is not None):
        reason = topic_search.paper_reason(hit)
    elif isinstance(hit, topic_search.ResearcherHit) and (hit.by_name or hit.papers):
        reason = topic_search.researcher_reason(hit)
    return caption + (" · " + render.md_escape(reason) if reason else "")


left, right = st.columns([3, 2], gap="large")

# -- search ---------------------------------------------------------------------------
with left:
    st.subheader("Search the store")
    s1, s2 = st.columns([3, 2])
    with s1:
        text = st.text_input("Search text", key="search_text",
                             placeholder="a topic or a name, e.g. decision making, galaxies")
    with s2:
        fields = st.multiselect("Fields", options=list(fnames), key="search_fields",
                                format_func=lambda f, fnames=fnames: fnames.get(f, f), placeholder="All fields")
    r_hits, p_hits = _search(text, fields)
    own = visitor_records.own_ids(store, [h.researcher.id for h in r_hits], [h.paper.id for h in p_hits],
                                  ss["hood_r"], ss["hood_p"])
    more_r = "+" if len(r_hits) == RESULT_LIMIT else ""
    more_p = "+" if len(p_hits) == RESULT_LIMIT else ""
    empty = topic_search.EMPTY_HINT + " Or import an author or papers below."
    # Stable labels (counts go inside), so a new search does not reset the chosen tab.
    t_r, t_p = st.tabs(["Researchers", "Papers"], key="search_tab")
    with t_r:
        _hits(r_hits, more_r, empty if text.strip() else "No researcher in these fields yet.",
              lambda h: _row("researcher", h.researcher.id, h.researcher.name,
                             _why(render.researcher_caption(h.researcher, fnames), h), "sr"))
    with t_p:
        _hits(p_hits, more_p, empty if text.strip() else "No paper in these fields yet.",
              lambda h: _row("paper", h.paper.id, h.paper.title,
                             _why(render.paper_caption(h.paper, fnames), h), "sp"))
    suggest_view.panel(store, fnames)

# -- the neighbourhood ---------------------------------------------------------------
hood_r = store.corpus.get_researchers([i for i in ss["hood_r"] if store.corpus.researcher_exists(i)])
hood_p = store.corpus.get_papers([i for i in ss["hood_p"] if store.corpus.paper_exists(i)])

with right:
    st.subheader("Your neighbourhood")
    if not hood_r and not hood_p:
        st.info("Your neighbourhood is empty. Load a case study above, or search the store and "
                "press Add on researchers and papers. Two or three fields work best.", icon="🧭")
    else:
        st.caption(f"{len(hood_r)} researchers · {len(hood_p)} papers")
        with st.container(height=360, border=True):
            for r in hood_r:
                _row("researcher", r.id, "👤 " + r.name, render.researcher_caption(r, fnames), "hr", True)
            for p in hood_p:
                _row("paper", p.id, "📄 " + p.title, render.paper_caption(p, fnames), "hp", True)
        b1, b2 = st.columns(2)
        with b1:
            if st.button("Clear neighbourhood", key="hood_clear"):
                state.set_hood([], [])
                st.rerun()
        with b2:
            show_share = st.toggle("Share link", key="share_link",
                                   help="A link with the selection, model name and mode (never a key).")
        if show_share:
            st.code(state.share_url(state.share_params()), language=None, wrap_lines=True)
            st.caption("Copy it with the icon at the right of the box; opening the link restores "
                       "this selection and settings.")

        # interdisciplinarity read-out
        all_fields = [f for x in [*hood_r, *hood_p] for f in x.fields]
        info = interdisciplinarity(all_fields, community.field_domains(store))
        st.markdown("**Interdisciplinarity**")
        m1, m2, m3 = st.columns(3)
        m1.metric("Fields", info["n_fields"])
        m2.metric("Domains", info["n_domains"])
        m3.metric("Mean distance", f"{info['mean_distance']:.2f}",
                  help="0 = same field, 0.5 = same broad domain, 1 = different domains")
        if info["fields"]:
            st.caption("Fields: " + render.md_escape(", ".join(fnames.get(f, f) for f in info["fields"])))
        if info["warning"]:
            st.warning(info["warning"], icon="⚠️")
        elif info["n_domains"] >= 2:
            st.success("A cross-domain mix of a size that tends to work well.", icon="✅")
        elif info["n_fields"] == 0:
            st.info("No field is recorded for this selection, so its mix cannot be judged.")
        elif info["n_fields"] == 1:
            st.info("All in one field: add a second, distant field for an interdisciplinary idea.")
        st.page_link(state.PAGES["run"], label="Next: run the simulation", icon="▶️")

if hood_r or hood_p:
    st.subheader("Community graph")
    st.caption("Circles are researchers, squares are papers, coloured by field and sized by "
               "their number of links. Solid lines: authorship; dotted: citations. Names and "
               "titles that do not fit are on hover.")
    g = build_graph(hood_r, hood_p)
    st.plotly_chart(charts.graph_figure(g, fnames), key="hood_graph", config=charts.PLOT_CONFIG)

# -- importers -------------------------------------------------------------------------
st.subheader("Import more")
viewer = identity.viewer()
st.caption("arXiv, Semantic Scholar and OpenAlex need an internet connection. Imported items "
           + ("join the shared store and your neighbourhood." if viewer.privileged else
              "join your neighbourhood; on this shared server they are yours (this browser's "
              "searches and runs) until the operator shares them, and a record the store already "
              "holds never changes."))


def _import(papers: list[Paper], researchers: list, origin: str) -> bool:
    """Papers and researchers into the store in one transaction (Corpus.import_bundle),
    then into this neighbourhood; a message either way, never a traceback."""
    try:
        bundle = store.corpus.import_bundle(papers, researchers, origin=origin)
    except Exception as exc:  # nothing was written (one transaction)
        render.flash("error", render.md_escape(f"{exc} {getattr(exc, 'hint', '')}"), "import")
        return False
    state.add_to_hood("paper", bundle.paper_ids)
    state.add_to_hood("researcher", bundle.researcher_ids)
    who = (f"{render.md_escape(researchers[0].name)} with " if len(researchers) == 1 else "")
    visitor_records.import_messages(bundle, who)
    return True


def _import_papers(papers: list[Paper], origin: str) -> None:
    _import(papers, [], origin)
    st.rerun()


def _import_author(researcher, papers: list[Paper], origin: str) -> None:
    _import(papers, [researcher], origin)
    st.rerun()


render.show_flashes("import")
tab_ax, tab_s2, tab_oa, tab_up, tab_paste = st.tabs(
    ["arXiv", "Semantic Scholar author", "OpenAlex", "Upload a file", "Paste an abstract"],
    key="import_tab")  # keyed: an upload's rerun stays on its tab

def _search_and_pick(source: str, label: str, placeholder: str, search) -> None:
    """A search box for a paper source, a pick list of the hits, and an import button."""
    query = st.text_input(label, key=f"imp_{source}_q", placeholder=placeholder)
    if st.button("Search", key=f"imp_{source}_search"):
        try:
            with st.spinner("Searching..."):
                ss[f"{source}_results"] = [p.to_dict() for p in search(query)]
        except RTError as exc:
            render.show_error(exc)
    found = [Paper.from_dict(d) for d in ss.get(f"{source}_results", [])]
    if found:
        pick = st.multiselect("Papers to import", options=range(len(found)), key=f"imp_{source}_pick",
                              format_func=lambda i: render.short(f"{found[i].year} · {found[i].title}", 110))
        if st.button("Import selected", key=f"imp_{source}_import", disabled=not pick):
            _import_papers([found[i] for i in pick], source)


with tab_ax:
    from rt_core.sources import PapersNotFound, clients

    ids_text = st.text_area("arXiv ids or URLs, one per line", key="imp_arxiv_ids",
                            placeholder="2412.17767\nhttps://arxiv.org/abs/1706.03762")
    if st.button("Fetch and add", key="imp_arxiv_fetch"):
        wanted = [x.strip() for x in ids_text.splitlines() if x.strip()]
        if not wanted:
            st.error("Enter at least one arXiv id or URL.")
        else:
            try:
                with st.spinner("Asking arXiv..."), clients.arxiv(store.http_cache) as ax:
                    _import_papers(ax.fetch(wanted), "arxiv")
            except PapersNotFound as exc:
                if exc.found:
                    render.flash("error", render.md_escape(f"{exc} {render.app_hint(exc)}"), "import")
                    _import_papers(exc.found, "arxiv")
                render.show_error(exc)
            except RTError as exc:
                render.show_error(exc)
    def _search_arxiv(query: str) -> list[Paper]:
        with clients.arxiv(store.http_cache) as ax:
            return ax.search(query, max_results=20)

    _search_and_pick("arxiv", "Or search arXiv", "graph neural networks galaxies", _search_arxiv)

with tab_s2:
    from rt_core.sources import AmbiguousAuthor, clients

    name = st.text_input("Author name", key="imp_s2_name", placeholder="e.g. Graham Neubig")
    c1, c2 = st.columns(2)
    known = c1.text_input("A title of one of their papers (optional)", key="imp_s2_title")
    aff = c2.text_input("Affiliation (optional)", key="imp_s2_aff")
    if st.button("Find author", key="imp_s2_find"):
        ss.pop("s2_candidates", None)
        try:
            with st.spinner("Asking Semantic Scholar..."), \
                    clients.semantic_scholar(store.http_cache, secrets=request.SECRETS) as s2:
                cand = s2.resolve_author(name, known or None, aff or None)
                researcher, papers = s2.author_with_papers(cand.id)
                _import_author(researcher, papers, "semantic_scholar")
        except AmbiguousAuthor as exc:
            ss["s2_candidates"] = [{"id": c.id, "text": c.describe()} for c in exc.candidates[:10]]
        except RTError as exc:
            render.show_error(exc)
    cands = ss.get("s2_candidates") or []
    if cands:
        st.warning("Several Semantic Scholar authors could be this person; pick the right one.",
                   icon="👥")
        idx = st.radio("Candidates", options=range(len(cands)), key="imp_s2_pick",
                       format_func=lambda i, cands=cands: render.md_escape(render.short(cands[i]["text"], 200)))
        if st.button("Import this author", key="imp_s2_import"):
            try:
                with st.spinner("Fetching their papers..."), \
                        clients.semantic_scholar(store.http_cache, secrets=request.SECRETS) as s2:
                    researcher, papers = s2.author_with_papers(cands[idx]["id"])
                ss.pop("s2_candidates", None)  # before the import, which reruns the page
                _import_author(researcher, papers, "semantic_scholar")
            except RTError as exc:
                render.show_error(exc)

with tab_oa:
    def _search_openalex(query: str) -> list[Paper]:
        with clients.openalex(store.http_cache) as oa:
            return oa.search_works(query, limit=20)

    _search_and_pick("openalex", "Search OpenAlex works", "criminal networks policing", _search_openalex)

with tab_up:
    from rt_core.sources import parse_upload

    st.caption("BibTeX (.bib), JSON (a list of papers, or {papers, researchers}) or CSV with a "
               "header (title, authors, year, abstract, arxiv_id, doi, venue, fields, url).")
    up = st.file_uploader("File", type=["bib", "bibtex", "json", "csv"], key="imp_upload")
    if st.button("Import file", key="imp_upload_go", disabled=up is None) and up is not None:
        try:
            result = parse_upload(up.name, up.getvalue())
        except RTError as exc:
            render.show_error(exc)
        else:
            for err in result.errors[:30]:
                render.flash("error", "⚠️ " + render.md_escape(err), "import")
            if len(result.errors) > 30:
                render.flash("error", f"... and {len(result.errors) - 30} more problems.", "import")
            for w in result.warnings[:10]:
                render.flash("warning", render.md_escape(w), "import")
            if result.papers or result.researchers:
                if _import(result.papers, result.researchers, "upload") and result.errors:
                    render.flash("warning", f"{len(result.errors)} records of "
                                 f"{render.md_escape(up.name)} were skipped.", "import")
            elif result.errors:
                render.flash("error", "Nothing was imported: fix the lines named above and upload "
                         "again.", "import")
            st.rerun()

with tab_paste:
    from rt_core.sources import paper_from_text

    pt = st.text_input("Title", key="imp_paste_title")
    pa = st.text_area("Abstract", key="imp_paste_abstract", height=150)
    c1, c2, c3 = st.columns([3, 1, 2])
    pauth = c1.text_input("Authors (comma separated, optional)", key="imp_paste_authors")
    pyear = c2.text_input("Year", key="imp_paste_year")
    pfield = c3.selectbox("Field", options=[""] + list(fnames), key="imp_paste_field",
                          format_func=lambda f, fnames=fnames: fnames.get(f, f) if f else "(none)")
    if st.button("Add paper", key="imp_paste_go"):
        try:
            paper = paper_from_text(pt, pa, [a.strip() for a in pauth.split(",") if a.strip()],
                                    pyear.strip() or None)
            if pfield:
                paper.fields = [pfield]
            _import_papers([paper], "paste")
        except RTError as exc:
            render.show_error(exc)

visitor_records.panel(store, viewer)
