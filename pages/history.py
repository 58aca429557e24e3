"""History: the stored runs this browser may see (rt_core.access); reopen, compare two side by
side, delete."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rt_core import access_store
from rt_core.access import Action
from rt_core.errors import RTError
from rt_core.export import run as export
from rt_core.fiveq import QUESTION_KEYS, QUESTION_TITLES
from rt_core.run.pipeline.progress import RESUMABLE_STATUSES
from studio import idea_map_view, identity, render, resources, score_headline, state, study, timing_view
from studio.frame import ensure_frame

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)
store = resources.get_store()
ss = st.session_state

store.runs.reap_orphans()  # runs whose process died (another app server, a killed CLI)
st.title("History")
viewer = identity.viewer()
if viewer.privileged:
    st.caption("All runs in the store, from every session. Reopening a run reads it from the store: "
               "no model is called.")
else:
    st.caption("The runs this browser started (this server is shared: other people's runs are not "
               "listed). Reopening a run reads it from the store: no model is called.")

f1, f2 = st.columns([3, 1])
text = f1.text_input("Filter by title or model", key="hist_text")
status = f2.selectbox("Status", ["", "done", "running", "interrupted", "failed", "cancelled"], key="hist_status",
                      format_func=lambda s: s or "any")
shown = ss.setdefault("hist_shown", 200)  # a page of runs; "Show older runs" adds another
rows = access_store.listed(store, viewer, text=text, status=status, limit=shown)
held = study.hidden_runs_note(store, viewer)  # an owner's runs held blind by a study: said, not "none"
if not rows:
    if text or status:
        st.info("No run matches the filter. Clear it to see all runs.", icon="🔎")
    else:
        st.info(("No runs stored yet." if viewer.privileged else "No other run of this browser to list." if held
                 else "This browser has started no run yet.") +
                " Start one on the Run page; every run is saved here automatically.", icon="🗂️")
        st.page_link(state.PAGES["run"], label="Go to Run", icon="▶️")
    render.show_flashes("history")  # "Deleted run ...", when it was the last one listed
    st.stop()

df = pd.DataFrame(rows)[["created_at", "status", "model", "mode", "mean_score", "similarity",
                         "evaluator", "title", "id"]]
df = df.rename(columns={"created_at": "created", "mean_score": "score", "title": "problem (Q1)"})
df.insert(df.columns.get_loc("model"), "wall time", timing_view.history_column(store, df["id"]))
# Each run's own address (relative, so it works wherever the app is served): a link to
# open or share; it opens the run read-only.
df.insert(0, "link", [f"{state.URL_PATHS['results']}?{state.RUN_PARAM}={i}" for i in df["id"]])
st.dataframe(df, hide_index=True, key="hist_table",
             column_config={"score": st.column_config.NumberColumn(format="%.1f"),
                            "similarity": st.column_config.NumberColumn(format="%.3f"),
                            "link": st.column_config.LinkColumn("link", display_text="open ↗",
                                                                help="This run's address: open it or "
                                                                     "share it (read-only)")})
if len(rows) >= shown and st.button("Show older runs", key="hist_more"):
    ss["hist_shown"] = shown + 200
    st.rerun()
score_headline.history_note(r["model"] for r in rows)
ids = [r["id"] for r in rows]
labels = {r["id"]: render.run_label(r) for r in rows}
# Built when clicked (it reads every listed run): the runs above, people and papers by name.
exportable = tuple(access_store.permitted(store, viewer, Action.EXPORT, ids))
st.download_button("Download these runs (CSV)", lambda ids=exportable: export.stored_runs_csv(store, ids),
                   file_name="researchtown-runs.csv", mime="text/csv", key="hist_csv",
                   on_click="ignore", icon="⬇️",
                   help="One row per run: authors by name, papers by title, mean score, "
                        "similarity and its evaluator, tokens and cost; ids in the last columns.")


# -- reopen / delete -----------------------------------------------------------------------------
st.subheader("Open or delete a run")
pick = st.selectbox("Run", ids, key="hist_pick", format_func=lambda i, labels=labels: labels.get(i, i))
c1, c2, c3, _ = st.columns([1, 1, 1, 2])
if c1.button("Open in Results", key="hist_open", type="primary"):
    ss["results_run"] = pick
    st.switch_page(state.PAGES["results"], query_params={state.RUN_PARAM: pick})
pick_status = next((r["status"] for r in rows if r["id"] == pick), "")
if pick_status in RESUMABLE_STATUSES and state.may(Action.RESUME, pick) and c3.button(
        "Resume", key="hist_resume", help="Run it again with the same settings under the same id: "
        "every model call that had finished comes from the cache, free."):
    try:
        state.resume_run(store, pick)
    except RTError as exc:
        render.show_error(exc)
    else:
        st.switch_page(state.PAGES["run"], query_params={state.RUN_PARAM: pick})
if state.may(Action.DELETE, pick) and c2.button("Delete…", key="hist_delete"):
    ss["_confirm_delete"] = pick
target = ss.get("_confirm_delete")
if target and target in labels and not (allowed := state.may(Action.DELETE, target)):
    st.error(render.md_escape(allowed.reason))
    ss.pop("_confirm_delete", None)
elif target and target in labels:
    job = state.job_for(target)
    if job is not None and not job.done:
        st.error("This run is still going; cancel it on the Run page before deleting it.")
        ss.pop("_confirm_delete", None)
    else:
        st.warning(f"Delete run {target} permanently? {render.md_escape(labels[target])}", icon="🗑️")
        y, n, _ = st.columns([1, 1, 3])
        if y.button("Yes, delete", key="hist_delete_yes", type="primary"):
            store.runs.delete(target)
            ss["jobs"].pop(target, None)
            ss["session_runs"] = [i for i in ss["session_runs"] if i != target]
            ss.pop("_confirm_delete", None)
            render.flash("success", f"Deleted run {target}.", "history")
            st.rerun()
        if n.button("Cancel", key="hist_delete_no"):
            ss.pop("_confirm_delete", None)
            st.rerun()
render.show_flashes("history")

idea_map_view.history_section(store, ids)  # on request: every listed run's ideas on one map

# -- compare ------------------------------------------------------------------------------------
st.subheader("Compare two runs")
if len(ids) < 2:
    st.info("Two runs are needed for a comparison.")
    st.stop()
a_col, b_col = st.columns(2)
a_id = a_col.selectbox("Left", ids, index=0, key="hist_cmp_a", format_func=lambda i, labels=labels: labels.get(i, i))
b_id = b_col.selectbox("Right", ids, index=1, key="hist_cmp_b", format_func=lambda i, labels=labels: labels.get(i, i))
try:
    runs = [store.runs.load(a_id), store.runs.load(b_id)]
except RTError as exc:
    render.show_error(exc)
    st.stop()
for col, run in zip((a_col, b_col), runs, strict=True):
    with col:
        score_headline.compare_metrics(run)  # a base model's scores are noise: what was measured leads
        scored = [str(r.score) for r in run.reviews if r.score is not None]
        scores = f"reviewer scores {', '.join(scored)}" if scored else "no reviews"
        if run.similarity:  # two runs' scores are comparable only under the same evaluator
            st.caption(render.md_escape("similarity evaluator: " +
                                        (run.similarity.evaluator or run.similarity.embedder)))
        st.caption(render.md_escape(f"{run.config.model} · mode {run.config.mode} · "
                                    f"{len(run.config.researcher_ids)} researchers, "
                                    f"{len(run.config.paper_ids)} papers · {scores}"))
for i, k in enumerate(QUESTION_KEYS, 1):
    st.markdown(f"**Q{i}. {QUESTION_TITLES[k]}**")
    c1, c2 = st.columns(2)
    for col, run in zip((c1, c2), runs, strict=True):
        with col:
            text = getattr(run.proposal, k) if run.proposal else ""
            if text:
                render.show_text(text)
            else:
                st.warning("Missing", icon="❓")
