"""Study: results. The room's progress, agreement, rankings, the real paper, attention checks,
judge calibration and exports, for the organiser only (arms are un-blinded here): every study on
this page was opened with its organiser token (studio/study_room.py)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rt_core import access_store
from rt_core.models.client import ModelSettings
from rt_core.models.registry import follows_instructions
from rt_core.study import models as study_models
from rt_core.study import results
from rt_core.study.stats import ALL
from studio import identity, render, request, resources, study, study_room
from studio.frame import ensure_frame

ensure_frame()
store = resources.get_store()
ss = st.session_state

st.title("Study results")
# The operator of a shared server organises every study on it (rt_core.access); others show a token.
ids = [s["id"] for s in store.studies.list()] if identity.viewer().operator else []
ids = ids or study_room.gate(store)
render.show_flashes()
studies = [s for s in store.studies.list() if s["id"] in ids]
names = {s["id"]: f"{s['name']} · {s['code']} · {s['mode']} · {s['status']}" for s in studies}
if ss.get("study_id") not in ids:
    ss["study_id"] = ids[-1]
study_id = st.selectbox("Study", ids, key="study_id", format_func=lambda i: names.get(i, i))
row = store.studies.get(study_id)

c1, c2, c3 = st.columns([3, 1, 1])
c1.caption("Rater link (opens the rating page only):")
c1.code(study.join_link(row["code"]), language=None)
if row["status"] == "open":
    if c2.button("Close study", key="sr_close", help="A closed study accepts no more answers."):
        store.studies.set_status(study_id, "closed")
        st.rerun()
elif c2.button("Reopen study", key="sr_reopen"):
    store.studies.set_status(study_id, "open")
    st.rerun()
c3.metric("Status", row["status"])

study_room.panel(store, row, access_store.listed(store, identity.viewer(), status="done", limit=500))
progress = store.studies.progress(study_id)
if not progress:
    st.info("No rater has joined yet. Share the rater link above (or the code " + row["code"] + ").", icon="🔗")
    st.stop()
prog = pd.DataFrame(progress)
study_room.progress_table(prog)


@st.cache_data(show_spinner="Fitting the statistics...", max_entries=8)
def _summary(path: str, study_id: str, answers: int, judged: int) -> dict:
    """Cached on what changes the result: the number of answers and judge answers."""
    out = results.summary(resources.get_store(), study_id, n_boot=500)
    out.pop("study")
    return out


judged = len(store.studies.judge_rows(study_id))
answers = int(prog["done"].sum())
if not answers:
    st.info("Raters have joined but nobody has submitted an answer yet.", icon="⏳")
    st.stop()
summ = _summary(str(store.path), study_id, answers, judged)
pairwise = row["mode"] == "pairwise"


def _num(x, fmt="{:.2f}") -> str:
    return "–" if x is None or pd.isna(x) else fmt.format(x)


st.header("Agreement")
a1, a2, a3, a4 = st.columns(4)
a1.metric("Raters", summ["n_raters"])
a2.metric("Krippendorff's alpha (all)", _num(summ["alpha"].get(ALL)),
          help="Nominal alpha on the choices (pairwise) or interval alpha on the scores (absolute). "
               "1 = perfect agreement, 0 = chance.")
if pairwise:
    agr = summ["agreement"]
    a3.metric("Pairwise agreement", _num(agr["agreement"], "{:.0%}"),
              help="Of all rater pairs who judged the same pair on the same criterion, the share who chose alike.")
    a4.metric("Fleiss' kappa", _num(agr["fleiss_kappa"]),
              help=f"On the {agr['kappa_units']} units with {agr['kappa_raters']} raters each (statsmodels).")
alpha = pd.DataFrame({"criterion": list(summ["alpha"]), "alpha": list(summ["alpha"].values())})
c1, c2 = st.columns([2, 1])
with c1:
    study.bars(alpha["criterion"].tolist(), alpha["alpha"].tolist(), "Krippendorff's alpha by criterion",
               key="sr_alpha_chart", y_range=(-1, 1.1))
c2.dataframe(alpha, hide_index=True, key="sr_alpha")

if pairwise:
    st.header("Bradley-Terry ranking of the arms")
    bt = summ["bt"]
    if bt.empty:
        st.info("Not enough votes between two arms yet.")
    else:
        st.caption("Log-strength (0 = an average arm; +1 wins about 73% against it), with 95% bootstrap "
                   "intervals (500 resamples of the votes; choix), and the ranks each arm takes in 95% of them.")
        study.interval_chart(bt, "strength", "ci_low", "ci_high", "arm", "All criteria pooled", key="sr_bt")
        st.dataframe(results.ranking_table(bt), hide_index=True, key="sr_bt_table")
        per = [d.assign(criterion=c) for c, d in summ["bt_by_criterion"].items() if not d.empty]
        if per:
            study.criterion_panels(pd.concat(per), "strength", "ci_low", "ci_high", "arm",
                                   "By criterion (200 resamples each; right of the dotted line = above average)",
                                   key="sr_bt_crit", zero=0.0, order=bt["arm"].tolist())
        st.subheader("Win rates")
        study.heatmap(summ["win"], "Share of decided comparisons the row arm won", key="sr_win")
    if summ.get("real"):
        st.header("Did raters pick the real paper?")
        real = pd.DataFrame([{"criterion": c, **v} for c, v in summ["real"].items()])
        st.caption("Share of votes on pairs with the real paper on one side that chose it (ties count as "
                   "not chosen), with Wilson 95% intervals.")
        if real["n"].sum():
            study.interval_chart(real.dropna(subset=["rate"]), "rate", "ci_low", "ci_high", "criterion",
                                 "Picked the real paper", key="sr_real")
        st.dataframe(real, hide_index=True, key="sr_real_table")
else:
    st.header("Scores by arm and criterion")
    means = summ["means"]
    st.caption("Mean score with 95% t-intervals.")
    shown_means = means.dropna(subset=["mean"])
    if not shown_means.empty:
        study.criterion_panels(shown_means.assign(ci_low=shown_means["ci_low"].fillna(shown_means["mean"]),
                                                  ci_high=shown_means["ci_high"].fillna(shown_means["mean"])),
                               "mean", "ci_low", "ci_high", "arm", "Mean score by criterion (1-10)",
                               key="sr_means", x_range=(0.5, 10.5))
    st.dataframe(means, hide_index=True, key="sr_means_table")

st.header("Attention checks")
att = summ["attention"]
if int(att["n_checks"].sum()) == 0:
    st.caption("This study has no attention checks (or nobody has reached one yet).")
else:
    flagged = att[att["flagged"]]["rater_id"].tolist()
    if flagged:
        st.warning("Raters who failed a check: " + render.md_escape(", ".join(flagged)), icon="🚩")
    checked = att[att["n_checks"] > 0]
    study.bars(checked["rater_id"].tolist(), checked["pass_rate"].tolist(), "Attention-check pass rate by rater",
               key="sr_attention_chart", y_range=(0, 1.15),
               colors=["#d62728" if f else "#2ca02c" for f in checked["flagged"]])
    st.dataframe(att, hide_index=True, key="sr_attention")

st.header("Judge calibration")
st.caption("The LLM judge (the model chosen on the Run page) rates the same "
           + ("pairs, each in both orders so its position bias shows," if pairwise else "items")
           + " with the same rubric; its answers are compared with the humans'.")
chat = follows_instructions(ss["model"].strip())
if not chat:
    # The scripted test model is not named: its canned verdicts (it always picks the left
    # side) would calibrate nothing, and the Run page offers it only on test servers.
    st.caption("The embedded base model cannot judge: choose a hosted model or an Ollama model "
               "on the Run page.")
if st.button("Run the LLM judge", key="sr_judge", disabled=not chat):
    bar = st.progress(0.0, text="The judge is reading...")
    render.act("The judge is rating...", lambda: study_models.run_judge(
        store, study_id, ModelSettings.for_request(request.build_request()),
        progress=lambda d, t: bar.progress(d / t, text=f"{d} of {t} judgements")))
for model, j in summ["judge"].items():
    st.subheader(render.md_escape(f"Judge: {model}"))
    if "pairwise" in j:
        p = j["pairwise"]
        m1, m2, m3 = st.columns(3)
        m1.metric("Agrees with the human majority", _num(p["agreement"], "{:.0%}"),
                  help=f"{p['n_compared']} judge votes on {p['n_majority_units']} units with a clear majority.")
        m2.metric("Position flips", _num(p["position_flip_rate"], "{:.0%}"),
                  help="Share of pairs where the judge changed its pick when the sides were swapped (0 is ideal).")
        m3.metric("Picks the left side", _num(p["first_position_rate"], "{:.0%}"),
                  help="Of its decided votes (0.5 is unbiased).")
    cal = pd.DataFrame([{"criterion": c, **v} for c, v in j["calibration"].items()])
    st.caption("Correlation of the judge's per-item " + ("win share" if pairwise else "scores")
               + " with the human per-item " + ("win share" if pairwise else "means")
               + ": Pearson (Fisher-z interval) and Spearman (bootstrap interval).")
    st.dataframe(cal, hide_index=True, key=f"sr_cal_{model}")
    if cal["pearson_r"].isna().all():
        st.caption("No correlation yet: it needs at least three items rated by both sides, and neither "
                   "side may give every item the same value.")
    shown = cal.dropna(subset=["spearman_rho"])
    if not shown.empty:
        long = pd.concat([
            shown.assign(stat="Pearson r", value=shown["pearson_r"], low=shown["pearson_ci_low"],
                         high=shown["pearson_ci_high"]),
            shown.assign(stat="Spearman rho", value=shown["spearman_rho"], low=shown["spearman_ci_low"],
                         high=shown["spearman_ci_high"])]).dropna(subset=["value", "low", "high"])
        if not long.empty:
            study.interval_chart(long, "value", "low", "high", "criterion", "Judge vs humans", color="stat",
                                 key=f"sr_cal_chart_{model}")

st.header("Export")
frame = results.export_frame(store, study_id)
e1, e2, e3 = st.columns(3)
e1.download_button("Answers (CSV)", results.to_csv(frame), file_name=f"study-{row['code']}.csv",
                   mime="text/csv", key="sr_csv")
e2.download_button("Study, items, answers and judge (JSON)", results.to_json(store, study_id),
                   file_name=f"study-{row['code']}.json", mime="application/json", key="sr_json")
if pairwise and not summ["bt"].empty:
    e3.download_button("Ranking (CSV)", results.to_csv(results.ranking_export(summ["bt"], row)),
                       file_name=f"study-{row['code']}-ranking.csv", mime="text/csv", key="sr_rank_csv")
st.caption("One row per answer and criterion, naming the study, each shown item (id, run and research "
           "question), the arms behind them, rater ids and timestamps. Cells that a spreadsheet would run "
           "as a formula start with an apostrophe.")
with st.expander("Rationales (rater text, shown as plain text)"):
    notes = frame.drop_duplicates(["rater_id", "shown_position"])
    for r in notes.itertuples():
        if r.rationale:
            st.caption(render.md_escape(f"{r.rater_id} · item {r.shown_position}"))
            render.show_text(r.rationale)
