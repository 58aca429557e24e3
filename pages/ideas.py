"""Ideas: the notebook of every run's ideas (rt_core/ideas). Search, filter, star, note,
export, and follow an idea to the earlier one it repeats. Drawing only: the bank decides what
this browser sees (rt_core.access) and finds it; model text is shown as text."""
from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from rt_core.access import Action, may
from rt_core.errors import RTError
from rt_core.fiveq import QUESTION_KEYS, QUESTION_TITLES
from rt_core.ideas import bank as ideas_bank
from rt_core.ideas.bank import Idea, Page, Query
from rt_core.ideas.export import export
from rt_core.ideas.lineage import continued_in
from rt_core.ideas.seed import seed_from
from rt_core.store.study_types import StudySettings
from rt_core.study.ideas import create_from_starred
from studio import bank_map_view, idea_links, identity, render, resources, state, study
from studio.fields import bounded_number
from studio.frame import ensure_frame

ensure_frame()
store = resources.get_store()
bank = ideas_bank.for_store(store, per_owner=identity.shared())
viewer = identity.viewer()
ss = st.session_state

st.title("Ideas")
st.caption(("Every proposal, candidate, revision round and steered version of every run in the store."
            if viewer.privileged else "The ideas of the runs this browser started (this server is shared).")
           + " An idea marked *seen before* repeats, in other words, an idea of an earlier run.")


def query_from_widgets(fields: dict[str, str], models: list[str]) -> Query:
    c1, c2, c3 = st.columns([3, 2, 2])
    text = c1.text_input("Search by words or meaning", key="ideas_text")
    field = c2.selectbox("Field", ["", *fields], key="ideas_field", format_func=lambda f: fields.get(f, "any"))
    model = c3.selectbox("Model", ["", *models], key="ideas_model", format_func=lambda m: m or "any")
    d1, d2, d3, d4, d5 = st.columns([2, 2, 2, 1, 1])
    min_score = bounded_number("Mean score at least", "ideas_min_score", 0.0, 10.0, 0.0, step=0.5, where=d1)
    since = d2.date_input("Made on or after", value=None, key="ideas_since")
    until = d3.date_input("Made before", value=None, key="ideas_until")
    starred = d4.checkbox("Starred", key="ideas_starred")
    grouped = d5.checkbox("One per group", key="ideas_grouped", help="Near-duplicates once, by the first")
    return Query(text=text, field=field, model=model, min_score=min_score or None, starred=starred,
                 since=since.isoformat() if since else "",
                 until=(until + dt.timedelta(days=1)).isoformat() if until else "", one_per_group=grouped)


def show_table(page: Page) -> None:
    rows = [{"★": "★" if i.starred else "", "made": i.created_at[:16].replace("T", " "), "problem (Q1)": i.q1,
             "fields": ", ".join(i.fields), "model": i.model, "score": i.score,
             "seen before": i.seen_before or "", "run": i.run_id, "version": i.version, "id": i.id}
            for i in page.ideas]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="ideas_table",
                 column_config={"score": st.column_config.NumberColumn(format="%.1f")})
    st.caption(f"Page {page.page + 1} of {page.pages} · {page.total} ideas")


def show_idea(idea: Idea, group: list[Idea]) -> None:
    st.caption(render.md_escape(f"{idea.kind} {idea.version} of run {idea.run_id} · {idea.model} · "
                                f"mode {idea.mode} · fields: {', '.join(idea.fields) or 'none'} · "
                                f"mean score {'-' if idea.score is None else f'{idea.score:.1f}'}"))
    for i, k in enumerate(QUESTION_KEYS, 1):
        st.markdown(f"**Q{i}. {QUESTION_TITLES[k]}**")
        render.show_text(idea.answers.get(k, "") or "(no answer)")
    if idea.closest_paper is not None:
        st.caption(f"Closest prior paper its novelty check found: similarity {idea.closest_paper:.2f}.")
    if idea.seen_before:
        st.info(render.md_escape(f"Seen before: this repeats idea {idea.seen_before} "
                                 f"(similarity {idea.seen_similarity:.2f})."), icon="🔁")
        st.button("Open the earlier idea", key="ideas_open_seen",
                  on_click=lambda: ss.__setitem__("ideas_pick", idea.seen_before))
    if len(group) > 1:
        st.caption(render.md_escape("Its group: " + ", ".join(g.id for g in group)))
    for rid in continued_in(bank, viewer, idea.id):  # runs started from it that this browser may list
        st.page_link(state.PAGES["results"], label=render.md_escape(f"Continued in run {rid}"), icon="➡️",
                     query_params={state.RUN_PARAM: rid})


def mark_idea(idea: Idea) -> None:
    c1, c2 = st.columns([1, 3])
    try:
        if c1.button("Unstar" if idea.starred else "Star", key="ideas_star", icon="⭐"):
            bank.star(viewer, idea.id, on=not idea.starred)
            st.rerun()
        note = c2.text_area("Note", value=idea.note, key=f"ideas_note_{idea.id}", max_chars=4000)
        if note != idea.note and c2.button("Save the note", key="ideas_note_save"):
            bank.note(viewer, idea.id, note)
            render.flash("success", "Note saved.", "ideas")
            st.rerun()
    except RTError as exc:
        render.show_error(exc)
    o1, o2 = st.columns(2)
    if o1.button("Open its run in Results", key="ideas_open_run"):
        ss["results_run"] = idea.run_id
        st.switch_page(state.PAGES["results"], query_params={state.RUN_PARAM: idea.run_id})
    if o2.button("Continue from this idea", key="ideas_continue",
                 help="A new neighbourhood: this idea's own, the papers nearest its problem, and its "
                      "problem as the topic for suggestions."):
        try:
            seed = seed_from(store, bank, viewer, idea.id)
        except RTError as exc:
            render.show_error(exc)
            return
        ss["hood_r"], ss["hood_p"], ss["sg_topic"] = list(seed.researcher_ids), list(seed.paper_ids), seed.topic
        ss[state.FROM_IDEA] = seed.idea_id  # the run started from this neighbourhood links back to it
        render.flash("success", render.md_escape(f"Neighbourhood seeded from idea {seed.idea_id}."))
        st.switch_page(state.PAGES["neighbourhood"])


def export_buttons(starred: list[Idea]) -> None:
    st.subheader("Export the starred ideas")
    if not starred:
        st.info("Star ideas to export them.", icon="⭐")
        return
    cols = st.columns(3)
    for col, (fmt, mime) in zip(cols, (("md", "text/markdown"), ("json", "application/json"),
                                       ("csv", "text/csv")), strict=True):
        col.download_button(f"Download ({fmt.upper()})", export(starred, fmt), file_name=f"ideas.{fmt}",
                            mime=mime, key=f"ideas_export_{fmt}", on_click="ignore", icon="⬇️")


def study_form() -> None:
    st.subheader("A blind study of the starred ideas")
    c1, c2 = st.columns([3, 1])
    name = c1.text_input("Study name", value="Starred ideas", key="ideas_study_name")
    mode = c2.selectbox("Mode", ["pairwise", "absolute"], key="ideas_study_mode")
    if st.button("Create the study", key="ideas_study_create", type="primary"):
        try:
            made = create_from_starred(store, bank, viewer, StudySettings(name=name, mode=mode))
        except RTError as exc:
            render.show_error(exc)
            return
        ss["study_id"] = made["id"]
        study.unlock(made["id"])
        ss["study_new_token"] = (made["id"], made["organiser_token"])  # this session only; never stored
        render.flash("success", f"Study created. Code **{made['code']}**; share the rater link below.")
        st.switch_page(state.PAGES["study_create"])


query = query_from_widgets(resources.field_names(store), store.ideas.models())
page_no = (bounded_number("Page", "ideas_page", 1, 100_000, 1) or 1) - 1  # an out-of-range page: the first
try:
    with st.spinner("Reading the bank..."):
        page = bank.find(viewer, Query(**{**query.__dict__, "page": page_no}))
except RTError as exc:
    render.show_error(exc)
    st.stop()
if not page.total:
    st.info("No idea matches." if query != Query() else "No ideas yet: every run's ideas appear here.", icon="💡")
    st.stop()
show_table(page)
render.show_flashes("ideas")
bank_map_view.section(bank, viewer, "ideas_pick")

ids = [i.id for i in page.ideas]
if linked := idea_links.linked_idea():  # /ideas?idea=ID: a link from Results
    ss["ideas_pick"] = linked
wanted = ss.get("ideas_pick")
if wanted and wanted not in ids:
    ids = [wanted, *ids]  # the earlier idea a seen-before link opened
pick = st.selectbox("Idea", ids, key="ideas_pick")
try:
    chosen = bank.one(viewer, pick)
    show_idea(chosen, bank.group(viewer, chosen))
    mark_idea(chosen)
except RTError as exc:
    render.show_error(exc)
starred = bank.starred(viewer)
export_buttons(starred)
if starred and may(viewer, Action.CREATE_STUDY):
    study_form()
