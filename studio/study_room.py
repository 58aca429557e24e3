"""The organiser's side of a live study: the token gate in front of results, exports and closing,
and the room panel (who is rating, how far each unit is covered, time per item, more raters or
more items while the study is open)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rt_core.errors import RTError
from rt_core.study.candidates import ARM_BY as CANDIDATE_ARMS
from rt_core.study.create import CANDIDATES_HINT, add_runs
from rt_core.study.ideas import ARM_BY as IDEA_ARMS

from . import fields, render, study


def gate(store) -> list[str]:
    """The studies this session may organise. An organiser link's token is read once and taken
    out of the address bar; without any, the page offers a field for the link and stops."""
    ss = st.session_state
    token = st.query_params.get("organiser", "")
    if token:
        del st.query_params["organiser"]
        _open(store, token)
    render.show_flashes()
    ids = [i for i in ss.get("study_unlocked", []) if _exists(store, i)]
    with st.expander("Open another study with its organiser link", expanded=not ids), \
            st.form("sr_unlock", border=False):
        pasted = st.text_input("Organiser link or token", type="password", key="sr_token",
                               help="Shown once when the study was created. Rater links do not open results.")
        if st.form_submit_button("Open results"):
            _open(store, pasted)
            st.rerun()
    if not ids:
        st.info("Results, exports and closing a study need its organiser link (shown once, when the "
                "study was created). The rater link only opens the rating page. A study made before "
                "organiser links has none yet: whoever runs the app can give it one with "
                "`python -m rt_core study-token CODE`.", icon="🔐")
        st.stop()
    return ids


def _open(store, token: str) -> None:
    found = store.studies.by_organiser_token(token)
    if found is None:
        render.flash("error", "That organiser link opens no study. Check that it was copied whole.")
        return
    study.unlock(found["id"])
    st.session_state["study_id"] = found["id"]


def _exists(store, study_id: str) -> bool:
    try:
        store.studies.get(study_id)
    except RTError:
        return False
    return True


def panel(store, row: dict, runs: list[dict]) -> None:
    """Progress of the room, and what the organiser can change while it runs."""
    sid, settings = row["id"], row["settings"]
    coverage = store.studies.coverage(sid)
    floor = settings.raters_per_unit
    reached = sum(n >= floor for n in coverage.values())
    pace = store.studies.time_per_item(sid)
    c1, c2, c3 = st.columns(3)
    c1.metric(f"Units with at least {floor} raters", f"{reached} of {len(coverage)}",
              help="New raters get the least-covered units first; the overlap is a floor, not a ceiling.")
    c2.metric("Time per item", f"{pace['seconds']:.0f} s",
              help=(f"Median of {pace['n']} measured items." if pace["measured"] else
                    "A prior until 3 items are measured: 45 s per proposal shown plus 10 s per criterion."))
    c3.metric("Answers per unit", f"{min(coverage.values(), default=0)}-{max(coverage.values(), default=0)}")
    with st.expander("Change the study while it runs"):
        a1, a2, a3 = st.columns(3)
        floor_new = fields.bounded_number("Raters per item (at least)", f"sr_floor_{sid}", 1, 50, floor, where=a1)
        minutes = fields.bounded_number("Minutes per rater", f"sr_minutes_{sid}", 1, 240,
                                        int(settings.minutes_per_rater), where=a2)
        cap = fields.bounded_number("Most items per rater", f"sr_cap_{sid}", 1, 200, settings.max_units_per_rater,
                                    where=a3)
        if st.button("Apply", key=f"sr_adjust_{sid}", disabled=not fields.all_valid(floor_new, minutes, cap)):
            render.act("Saving...", lambda: store.studies.adjust(
                sid, raters_per_unit=int(floor_new), minutes_per_rater=float(minutes), max_units_per_rater=int(cap)))
        if settings.arm_by == CANDIDATE_ARMS:  # add_runs refuses these: say so instead of offering it
            st.caption("This study compares the candidates of one run, so it takes no other runs. "
                       + CANDIDATES_HINT)
            return
        if settings.arm_by == IDEA_ARMS:  # add_runs refuses these too
            st.caption("This study rates starred ideas; star more on the Ideas page and make a new study.")
            return
        have = {i.run_id for i in store.studies.items(sid).values()}
        more = [r for r in runs if r["id"] not in have]
        labels = {r["id"]: f"{render.run_label(r)} · {r['mode']}" for r in more}
        extra = st.multiselect("Add runs as items", list(labels), format_func=lambda i: labels.get(i, i),
                               key=f"sr_more_{sid}", help="Raters who need an item get the new ones first.")
        if st.button("Add to the study", key=f"sr_add_{sid}", disabled=not extra):
            try:
                added = add_runs(store, sid, extra)
            except RTError as exc:
                render.show_error(exc)
            else:
                render.flash("success", f"Added {added} units to rate.")
                st.rerun()


def progress_table(prog: pd.DataFrame) -> None:
    shown = prog.assign(minutes=prog["minutes"].round(1))[["rater_id", "done", "planned", "minutes",
                                                           "joined_at", "last_answer"]]
    st.dataframe(shown, hide_index=True, key="sr_progress")
