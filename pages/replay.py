"""Replay: hide a real paper, let its neighbourhood write, compare the modes with chance."""
from __future__ import annotations

import json

import streamlit as st

from rt_core import agents, community
from rt_core.errors import RTError
from rt_core.fiveq import QUESTION_KEYS
from rt_core.run.pipeline import warmup
from rt_core.run.replay import paper as replay
from rt_core.types import MODES
from studio import charts, identity, polling, render, request, resources, state
from studio.frame import ensure_frame

ensure_frame()  # a page opened by its address on a fresh server (studio/frame.py)
store = resources.get_store()
ss = st.session_state
warmup.warm_up()  # the model client imports while the user sets up (rt_core.run.pipeline.warmup)
ss.setdefault("replay_jobs", {})

st.title("Replay a paper")
st.caption("Node masking, as in the ResearchTown paper: pick a real paper, hide it, and let its "
           "neighbourhood (its authors, reading only what they had published before its year, "
           "and the papers it cites) write a proposal in each mode. Each proposal is compared "
           "with the paper question by question, next to a chance band: how similar the paper "
           "is to unrelated papers.")

# -- which paper ----------------------------------------------------------------------------
targets = [t["paper_id"] for t in community.replay_targets() if store.corpus.paper_exists(t["paper_id"])]
choices = resources.paper_choices(store)
options = list(dict.fromkeys(targets + list(choices)))
if not options:
    st.info("The store holds no papers yet. Import some on the Neighbourhood page.", icon="📄")
    st.stop()
titles = store.corpus.paper_titles(targets) | choices


def _label(pid: str) -> str:
    mark = "replay target · " if pid in targets else ""
    return mark + render.short(titles.get(pid, pid), 100)


with st.expander("Import a paper to replay (arXiv id or DOI; needs internet)"):
    st.caption("Semantic Scholar gives the paper and the papers it cites; its authors who are "
               "already researchers here are linked to it. Import more of their earlier papers "
               "on the Neighbourhood page to give the replay more to read.")
    ident = st.text_input("arXiv id or DOI", key="replay_import_id",
                          placeholder="2410.16179 or 10.1016/j.neuron.2020.07.040")
    if st.button("Import", key="replay_import", disabled=not ident.strip()):
        from rt_core.sources import SemanticScholar

        try:
            with st.spinner("Asking Semantic Scholar..."), SemanticScholar(
                    api_key=request.source_key("semantic_scholar"), cache=store.http_cache) as s2:
                new_id = replay.import_target(store, ident, s2)
        except RTError as exc:
            render.show_error(exc)
        else:
            ss["replay_target"] = new_id
            st.rerun()

target_id = st.selectbox("Paper to replay", options, key="replay_target",
                         format_func=lambda i, f=_label: f(i),
                         help="The starter community's replay targets come first: their cited "
                              "papers and a five-question summary ship with the app, so they "
                              "replay offline. Papers imported on the Neighbourhood page (by "
                              "arXiv id or DOI) can be replayed too.")
keep_undated = st.checkbox("Let authors read their papers that have no year", key="replay_undated",
                           help="Off by default: an undated paper may be later than the target.")
try:
    hood = replay.neighbourhood(store, target_id, keep_undated=keep_undated)
except RTError as exc:
    render.show_error(exc)
    st.stop()
target = hood.target
names = store.corpus.researcher_names(hood.researcher_ids)
c1, c2, c3 = st.columns(3)
c1.metric("Year (hidden paper)", target.year or "n.d.")
c2.metric("Authors taking part", len(hood.researcher_ids),
          help=", ".join(names.values()) or "none")
c3.metric("Cited papers", len(hood.paper_ids))
st.caption(render.md_escape("Authors: " + (", ".join(names.values()) or "none") +
                            (f" · they read papers up to {hood.cutoff_year}" if hood.cutoff_year else "")))
for note in hood.notes:
    st.caption("ℹ️ " + render.md_escape(note))

# -- modes and the reference -------------------------------------------------------------------
st.subheader("Modes")
cols = st.columns(len(replay.MODE_ORDER))
modes = [m for m, col in zip(replay.MODE_ORDER, cols, strict=True)
         if col.checkbox(m, value=True, key=f"replay_mode_{m}", help=MODES[m].help)]

with st.expander("The paper's own five answers (optional)"):
    st.caption("Paste or upload the paper's answers to the five questions if you have them; "
               "they are used before a stored restatement or the shipped summary. Without any "
               "of these, the whole proposal is compared with the abstract, and labelled so.")
    pasted = st.text_area("Five answers", key="replay_pasted", height=140,
                          placeholder="[Question 1] ...\n[Question 2] ...")
    upload = st.file_uploader("or a text file", type=["txt", "md"], key="replay_upload")
    if upload is not None and not pasted.strip():
        pasted = upload.getvalue().decode("utf-8", errors="replace")
    st.text_input("Evaluator model that restates the paper (optional)", key="evaluator_model",
                  placeholder="e.g. gpt-4o", help="A capable instruction model writes the paper's "
                  "five answers once; they are stored and reused. Its key comes from the server's "
                  "environment or secrets. The embedded demo model is not fit for this.")

st.caption(render.md_escape(f"Run model: {ss['model']} (change it on the Run page) · "
                            f"evaluator embedder: {ss['embedder']}"))


def _start() -> None:
    # The Run page's model settings; the replay sets each mode's neighbourhood itself, and
    # what it does not offer (reviewers chosen by id, revision, candidates) is rt_core's.
    req = request.build_request(num_reviewers=0, keep_undated=keep_undated,
                                evaluator_model=(ss.get("evaluator_model") or "").strip())
    job = replay.start(req, store, target_id, modes=modes, pasted=pasted,
                       owner_hash=identity.owner_hash())  # the runs are this browser's
    ss["replay_jobs"][target_id] = job
    ss["replay_current"] = target_id


running = [j for j in ss["replay_jobs"].values() if not j.done]
if st.button("Replay", key="replay_start", type="primary", disabled=not modes or bool(running)):
    try:
        _start()
    except RTError as exc:
        render.show_error(exc)


def _results(result: replay.ReplayResult) -> None:
    import pandas as pd

    st.caption(render.md_escape(f"Evaluator for every score below: {result.evaluator}"))
    if result.kind == "whole-text":
        st.warning("No five-question reference exists for this paper, so each proposal is "
                   "compared as a whole with the abstract. These scores are not comparable with "
                   "per-question scores.", icon="⚠️")
    rows = result.rows()
    table = pd.DataFrame([{"mode": r["mode"], **{k.upper(): r[k] for k in QUESTION_KEYS},
                           "mean": r["mean"], "status": r["status"],
                           "missing": ", ".join(r["missing"]) or "-"} for r in rows])
    st.dataframe(table, hide_index=True, key="replay_table",
                 column_config={k.upper(): st.column_config.NumberColumn(format="%.3f")
                                for k in QUESTION_KEYS} |
                 {"mean": st.column_config.NumberColumn(format="%.3f")})
    st.caption("An empty cell is a question the proposal did not answer: it counts 0 in the mean.")
    band = result.chance
    done = [r for r in rows if r["mean"] is not None]
    fig = charts.bars_with_band([r["mode"] for r in done], [r["mean"] for r in done], band,
                                y_title="mean similarity over Q1-Q5")
    if band:
        st.caption(f"Chance band: median {band.median:.3f}, 90% of unrelated papers between "
                   f"{band.low:.3f} and {band.high:.3f} (n = {band.n}).")
    else:
        st.caption("No chance band: fewer than three unrelated papers in the store have five "
                   "answers.")
    st.plotly_chart(fig, key="replay_chart", config=charts.PLOT_CONFIG)
    for r in rows:
        if r["error"]:
            st.error(render.md_escape(f"{r['mode']}: {r['error']}"), icon="⚠️")
    pick = st.selectbox("Open a mode's run on the Results page", [r["run_id"] for r in rows if r["run_id"]],
                        key="replay_open_pick", format_func=lambda i, rows=rows: next(
                            r["mode"] for r in rows if r["run_id"] == i))
    if st.button("Open results", key="replay_open") and pick:
        ss["results_run"] = pick
        st.switch_page(state.PAGES["results"])
    st.download_button("Download replay (JSON)", json.dumps(result.to_dict(), indent=2),
                       file_name=f"replay-{result.target_id.replace(':', '_')}.json",
                       mime="application/json", key="replay_download", on_click="ignore")


def _progress() -> None:
    job = ss["replay_jobs"].get(ss.get("replay_current"))
    if job is None:
        return
    events = job.snapshot()
    if not job.done:
        names = agents.names_for(store.corpus, [e.agent for e in events[-8:]])
        # .container(): leaving a `with st.status` block marks it complete (a check mark while running).
        with st.status(f"Replaying · {len(events)} progress events", state="running", expanded=True).container():
            for e in events[-8:]:
                render.show_text(f"{e.stage} · {agents.label(e.agent, names)} · {e.status}")
        if st.button("Cancel", key="replay_cancel"):
            job.cancel()
        return
    if job.error is not None:
        render.show_error(job.error)
    elif job.unexpected:
        st.error(f"The replay stopped unexpectedly: {render.md_escape(job.unexpected)}")
    elif job.result is not None:
        _results(job.result)
    if not ss.get("_replay_final"):
        ss["_replay_final"] = True
        st.rerun()


current = ss["replay_jobs"].get(ss.get("replay_current"))
if current is not None:
    st.subheader("Results" if current.done else "Progress")
    if not current.done:
        ss["_replay_final"] = False
    st.fragment(_progress, run_every=polling.every(current.done))()
else:
    st.caption("Press Replay: the modes run side by side and their scores appear here.")
