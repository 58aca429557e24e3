"""Study: create a blind human-evaluation study from stored runs, and share its link."""
from __future__ import annotations

import collections

import pandas as pd
import streamlit as st

from rt_core import access, access_store
from rt_core.errors import RTError
from rt_core.models.client import ModelSettings
from rt_core.models.registry import follows_instructions
from rt_core.study import models as study_models
from rt_core.study.create import create_from_runs
from rt_core.study.design import (
    ARM_BY,
    DEFAULT_CRITERIA,
    MODES,
    SESSION_CRITERIA,
    StudySettings,
    build_items,
    build_units,
    has_real_answers,
    parse_criteria,
)
from studio import fields, identity, render, request, resources, state, study
from studio.frame import ensure_frame

ensure_frame()
store = resources.get_store()
ss = st.session_state

st.title("Create a study")
st.caption("A blind human evaluation: raters see proposals in one neutral format, never the model, "
           "mode or run behind them. Pick runs, group them into arms, choose a rubric, share the link.")
render.show_flashes()

viewer = identity.viewer()
if not (allowed := access.may(viewer, access.Action.CREATE_STUDY)):
    st.info(render.md_escape(allowed.reason), icon="🔐")
    st.stop()
runs = access_store.listed(store, viewer, status="done", limit=500)
if not runs:
    st.info("No finished runs yet. A study rates stored proposals: run a few simulations first "
            "(for example the same reference paper in two modes), then come back.", icon="🧪")
    st.page_link(state.PAGES["run"], label="Go to Run", icon="▶️")
    st.stop()

labels = {r["id"]: f"{render.run_label(r)} · {r['mode']}" for r in runs}
ids = [r["id"] for r in runs]

c1, c2 = st.columns([2, 1])
name = c1.text_input("Study name", value="Quick study", key="sc_name", max_chars=80)
mode = c2.radio("Mode", MODES, index=MODES.index("pairwise"), key="sc_mode", horizontal=True,
                help="Absolute: one proposal at a time, scored 1-10. Pairwise: two proposals for the same "
                     "target side by side, pick the stronger per criterion (ties allowed).")
picked = st.multiselect("Runs to rate (each run's proposal is one item)", ids, default=ids[:12],
                        format_func=lambda i: labels.get(i, i), key="sc_runs")
try:
    chosen = [store.runs.load(r) for r in picked]
except RTError as exc:  # a run deleted since the list was drawn
    render.show_error(exc)
    chosen = []
c1, c2 = st.columns(2)
arm_by = c1.selectbox("Group runs into arms by", ARM_BY, key="sc_arm_by",
                      help="Pairs are only made between different arms on the same target (reference "
                           "paper or neighbourhood).")
REAL_HELP = ("From the bundled replay targets or a run's restated reference: asks whether raters can tell "
             "(or prefer) the real paper.")
if has_real_answers(chosen):
    real_arm = c2.checkbox("Add the real paper's five answers as a hidden arm", value=True, key="sc_real",
                           help=REAL_HELP)
else:  # a separate key, so the organiser's choice comes back once a run with a reference is picked
    real_arm = c2.checkbox("Add the real paper's five answers as a hidden arm", value=False, key="sc_real_none",
                           disabled=True, help=REAL_HELP)
    c2.caption("Not available: none of the chosen runs has a reference paper whose five answers are known.")

with st.expander("Rubric", expanded=False):
    names = [c.name for c in DEFAULT_CRITERIA]
    keep = st.multiselect("Criteria (Si et al. 2024; three keep a ten-minute session moving, all five on request)",
                          names, default=[c.name for c in SESSION_CRITERIA], key="sc_criteria")
    for c in DEFAULT_CRITERIA:
        st.caption(render.md_escape(f"{c.name}: {c.question} 1 = {c.low}; 10 = {c.high}"))
    extra = st.text_area("Your own criteria, one per line: name | question | what 1 means | what 10 means",
                         key="sc_extra", placeholder="clarity | Is it easy to follow? | confusing | crystal clear")

c1, c2, c3, c4 = st.columns(4)
minutes = fields.bounded_number(
    "Minutes per rater", "sc_minutes", 1, 240, 10, where=c1,
    help="Each rater gets as many items as fit: the minutes over the median time an item takes in this study "
         "(before any is measured: 45 s per proposal plus 10 s per criterion).")
per_unit = fields.bounded_number(
    "Raters per item (at least)", "sc_per_unit", 1, 50, 2, where=c2,
    help="Every item (or pair) is brought up to this many raters first; more raters are never turned away, "
         "they spread over the least-covered items.")
cap = fields.bounded_number("Most items per rater", "sc_cap", 1, 200, 20, where=c3,
                            help="A per-rater cap, so no one person dominates the results.")
allowed = c4.text_area("Allowed rater ids (optional, one per line)", key="sc_allowed", height=68)
c1, c2, c3 = st.columns(3)
repeat_check = c1.checkbox("Attention check: repeat one item", key="sc_repeat",
                           help="Shows one item again at the end (sides swapped); answers should match.")
gold_check = c2.checkbox("Attention check: gold pair", key="sc_gold", disabled=mode != "pairwise",
                         help="A pair with a known answer: a real proposal against a deliberately vague one.")
chat_model = follows_instructions(ss["model"].strip())
restyle = c3.checkbox("Restyle every proposal with the model", key="sc_restyle", disabled=not chat_model,
                      help="Puts every arm in one voice (as Si et al. do) with the model chosen on the Run "
                           "page; the originals are kept. Not available for the embedded base model.")


def _settings() -> StudySettings:
    criteria = tuple(c for c in DEFAULT_CRITERIA if c.name in keep) + tuple(parse_criteria(extra))
    return StudySettings(name=name, mode=mode, criteria=criteria, raters_per_unit=int(per_unit),
                         max_units_per_rater=int(cap), minutes_per_rater=float(minutes),
                         repeat_check=repeat_check,
                         gold_check=gold_check and mode == "pairwise",
                         allowed_raters=tuple(x.strip() for x in allowed.splitlines() if x.strip()),
                         arm_by=arm_by)


# A live preview: what the study will contain, before anything is stored. The numbers must all
# be usable (each field says what is wrong beside it) before there are settings to create with.
numbers_ok = fields.all_valid(minutes, per_unit, cap)
try:
    settings = _settings() if numbers_ok else None
    items = build_items(chosen, arm_by, real_arm=real_arm) if chosen else []
    items, units = build_units(items, mode, gold_check and mode == "pairwise") if items else ([], [])
except RTError as exc:
    render.show_error(exc)
    settings, items, units = None, [], []
if items:
    arms = collections.Counter(i.arm for i in items)
    st.caption(render.md_escape(f"{len(items)} items in {len(arms)} arms, {len(units)} "
                                f"{'pairs' if mode == 'pairwise' else 'items'} to rate"))
    st.dataframe(pd.DataFrame({"arm": list(arms), "items": list(arms.values())}), hide_index=True,
                 key="sc_preview")

if not numbers_ok:
    st.caption("Create study waits until every number above is in range.")
if st.button("Create study", type="primary", key="sc_create", disabled=settings is None or not units):
    try:
        with st.status("Creating the study...", expanded=False) as box:
            made = create_from_runs(store, picked, settings, real_arm=real_arm)
            if restyle and chat_model:
                box.update(label="Restyling every proposal into one voice...")
                bar = st.progress(0.0)
                done = study_models.restyle(store, made["id"], ModelSettings.for_request(request.build_request()),
                                            progress=lambda d, t: bar.progress(d / t))
                st.write(f"Restyled {done['restyled']} items; {done['kept']} kept their original text.")
            box.update(label="Study created", state="complete")
    except Exception as exc:  # shown as one message; nothing half-made is left behind
        render.show_error(exc)
    else:
        ss["study_id"] = made["id"]
        study.unlock(made["id"])
        ss["study_new_token"] = (made["id"], made["organiser_token"])  # this session only; never stored
        render.flash("success", f"Study created. Code **{made['code']}**; share the rater link below.")
        st.rerun()

studies = store.studies.list()
if studies:
    st.subheader("Studies")
    df = pd.DataFrame(studies)[["code", "name", "mode", "status", "units", "raters", "answers", "created_at"]]
    st.dataframe(df, hide_index=True, key="sc_studies")
    current = next((s for s in studies if s["id"] == ss.get("study_id")), studies[0])
    st.markdown("Rater link for **" + render.md_escape(current["name"]) + "** (code "
                f"`{current['code']}`; it opens the rating page and nothing else):")
    st.code(study.join_link(current["code"]), language=None)
    new_id, token = ss.get("study_new_token") or (None, None)
    if new_id == current["id"]:
        st.markdown("Organiser link (results, exports, closing):")
        st.code(study.organiser_link(token), language=None)
        st.warning("Keep the organiser link: it is shown only now and stored only as a hash. Anyone "
                   "with it sees the results, so do not share it with raters.", icon="🔑")
    st.page_link(state.PAGES["study_results"], label="Open the results", icon="📊")
