"""A study's answers turned into statistics (stats.py) and into safe exports.

`summary` is everything the results page shows; `export_frame` is one row per answer with the
rater id, the shown order and sides, the arms behind them and the timestamps; `to_csv` writes
it so that no cell can run as a spreadsheet formula.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pandas as pd

from ..store.study_types import StudyItem
from ..text import clip
from . import judging, stats
from .design import REAL_ARM

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def _records(rows: list[dict]) -> tuple[list[stats.Rating], list[stats.Vote]]:
    ratings, votes = [], []
    for r in rows:
        if r["shown_right"] is None:
            ratings.append(stats.Rating(r["unit_id"], r["arm_left"], r["rater_id"], r["criterion"],
                                        r["score"], bool(r["repeat"])))
        else:
            gold = None
            if r["gold_item"]:
                gold = "left" if r["gold_item"] == r["shown_left"] else "right"
            votes.append(stats.Vote(r["unit_id"], r["criterion"], r["rater_id"], r["arm_left"],
                                    r["arm_right"], r["choice"], gold, bool(r["repeat"])))
    return ratings, votes


def _judge_records(rows: list[dict], model: str) -> tuple[dict[str, dict[str, float]], list[stats.Vote]]:
    """Judge answers of one model: {criterion: {unit: score}} and its votes (rater = model)."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    votes = []
    for r in rows:
        if r["model"] != model:
            continue
        if not r["shown_right"]:
            if r["score"] is not None:
                scores[r["criterion"]][r["unit_id"]] = float(r["score"])
        elif r["choice"] is not None:
            votes.append(stats.Vote(r["unit_id"], r["criterion"], model, r["arm_left"], r["arm_right"],
                                    r["choice"]))
    return scores, votes


def item_win_share(rows: list[dict], key_left: str = "shown_left", key_right: str = "shown_right") -> dict[str, float]:
    """Per item: the share of its comparisons it won (a tie is half a win), over every
    criterion. The pairwise counterpart of an item's mean score, for judge calibration."""
    won: dict[str, float] = defaultdict(float)
    seen: dict[str, int] = defaultdict(int)
    for r in rows:
        choice, left, right = r.get("choice"), r.get(key_left), r.get(key_right)
        if not right or choice is None or r.get("repeat") or r.get("gold_item"):
            continue
        seen[left] += 1
        seen[right] += 1
        if choice == "tie":
            won[left] += 0.5
            won[right] += 0.5
        else:
            won[left if choice == "left" else right] += 1
    return {i: won[i] / n for i, n in seen.items()}


def summary(store, study_id: str, n_boot: int = 1000, n_boot_criterion: int = 200) -> dict[str, Any]:
    """Everything the results page shows, from the stored answers (and judge answers).
    The pooled ranking gets `n_boot` resamples, each per-criterion ranking `n_boot_criterion`."""
    study = store.studies.get(study_id)
    rows = store.studies.answer_rows(study_id)
    ratings, votes = _records(rows)
    criteria = [c.name for c in study["settings"].criteria]
    out: dict[str, Any] = {"study": study, "n_answers": len({(r["rater_id"], r["shown_position"]) for r in rows}),
                           "n_raters": len({r["rater_id"] for r in rows}), "criteria": criteria,
                           "attention": stats.attention(ratings, votes)}
    if study["mode"] == "absolute":
        out["means"] = stats.arm_means(ratings)
        out["alpha"] = stats.alpha_by_criterion(ratings) if ratings else {}
    else:
        preference = [v for v in votes if not v.repeat and v.gold is None]
        out["alpha"] = {c: stats.vote_alpha(preference, c) for c in criteria}
        out["alpha"][stats.ALL] = stats.vote_alpha(preference)
        out["agreement"] = stats.pairwise_agreement(preference)
        out["bt"] = stats.bradley_terry(preference, n_boot=n_boot)
        out["bt_by_criterion"] = {c: stats.bradley_terry(preference, n_boot=min(n_boot, n_boot_criterion),
                                                         criterion=c)
                                  for c in criteria}
        out["win"] = stats.win_matrix(preference)
        arms = {i.arm for i in store.studies.items(study_id).values()}
        out["real"] = stats.picked_real_rate(preference, REAL_ARM) if REAL_ARM in arms else None
    out["judge"] = judge_summary(store, study_id, rows, ratings, votes, criteria, study["mode"])
    return out


def judge_summary(store, study_id: str, rows, ratings, votes, criteria, mode) -> dict[str, dict]:
    """Per judge model: calibration against the humans."""
    jrows = store.studies.judge_rows(study_id)
    out = {}
    for model in sorted({r["model"] for r in jrows}):
        scores, jvotes = _judge_records(jrows, model)
        if mode == "absolute":
            cal = {c: judging.judge_calibration(stats.item_means(ratings, c), scores.get(c, {})) for c in criteria}
            out[model] = {"calibration": cal}
        else:
            human = [v for v in votes if not v.repeat and v.gold is None]
            pair = judging.judge_pairwise(human, jvotes)
            mine = [r for r in jrows if r["model"] == model]
            cal = judging.judge_calibration(item_win_share(rows), item_win_share(mine))
            out[model] = {"pairwise": pair, "calibration": {stats.ALL: cal}}
    return out


# -- the ranking, readable ----------------------------------------------------------------------
def _signed(x: Any) -> str:
    return "–" if x is None or pd.isna(x) else f"{x:+.2f}"


def _share(p: Any) -> str:
    """A probability as a percentage a person reads at a glance; the extremes are bounded
    rather than written out to thirty decimals."""
    if p is None or pd.isna(p):
        return "–"
    if p < 0.001:
        return "<0.1%"
    if p > 0.999:
        return ">99.9%"
    return f"{p:.1%}"


def _places(low: Any, high: Any) -> str:
    if pd.isna(low) or pd.isna(high):
        return "–"
    return f"{low:.0f}" if low == high else f"{low:.0f}-{high:.0f}"


def ranking_table(bt: pd.DataFrame) -> pd.DataFrame:
    """The Bradley-Terry ranking as the page prints it: each arm's place with the places the
    bootstrap allows, its log-strength with a 95% interval, and its chance against an average
    arm as a bounded percentage."""
    return pd.DataFrame({
        "rank": bt["rank"].astype(int),
        "plausible ranks (95%)": [_places(lo, hi) for lo, hi in zip(bt["rank_low"], bt["rank_high"], strict=True)],
        "arm": bt["arm"],
        "log-strength": [_signed(x) for x in bt["strength"]],
        "95% interval": [f"{_signed(lo)} to {_signed(hi)}" for lo, hi in zip(bt["ci_low"], bt["ci_high"], strict=True)],
        "beats an average arm": [_share(p) for p in bt["p_beat_average"]],
        "votes": bt["n_votes"].astype(int),
    })


RANKING_DECIMALS = {"strength": 3, "ci_low": 3, "ci_high": 3, "p_beat_average": 4}


def ranking_export(bt: pd.DataFrame, study: dict) -> pd.DataFrame:
    """The ranking for a spreadsheet: numbers kept as numbers, rounded to what the votes can
    support, with the study named on every row."""
    out = bt.round(RANKING_DECIMALS).rename(columns={"strength": "log_strength"})
    out.insert(0, "study_code", study["code"])
    out.insert(0, "study_name", study["name"])
    return out


# -- exports ---------------------------------------------------------------------------------
EXPORT_COLUMNS = ["study_name", "study_code", "study_id", "rater_id", "shown_position", "unit_id", "repeat", "gold",
                  "shown_left", "run_left", "title_left", "arm_left",
                  "shown_right", "run_right", "title_right", "arm_right",
                  "criterion", "score", "choice", "picked_arm",
                  "rationale", "confidence", "seconds", "minutes", "shown_at", "submitted_at"]
TITLE_CHARS = 120


def item_title(item: StudyItem | None) -> str | None:
    """What a reader of an export recognises an item by: its research question (the first of
    the five answers, as written before any restyling), clipped to a spreadsheet cell."""
    if item is None:
        return None
    return clip(item.answers.get("q1", ""), TITLE_CHARS) or "(no research question)"


def export_frame(store, study_id: str) -> pd.DataFrame:
    """One row per answer and criterion. Each shown side is named three ways: the item id
    (stable), the run it came from (empty for the real paper and the gold decoy) and its
    title, so a spreadsheet on its own says which study, run and proposal a row is about."""
    study = store.studies.get(study_id)
    items = store.studies.items(study_id)
    out = []
    for r in store.studies.answer_rows(study_id):
        picked = None
        if r["choice"] == "tie":
            picked = "tie"
        elif r["choice"]:
            picked = r["arm_left"] if r["choice"] == "left" else r["arm_right"]
        left, right = items.get(r["shown_left"]), items.get(r["shown_right"] or "")
        minutes = r["minutes"]  # measured by the store: from first shown to submitted
        out.append({**r, "study_name": study["name"], "study_code": study["code"], "study_id": study["id"],
                    "run_left": left.run_id or None if left else None, "title_left": item_title(left),
                    "run_right": right.run_id or None if right else None, "title_right": item_title(right),
                    "repeat": bool(r["repeat"]), "gold": bool(r["gold_item"]), "picked_arm": picked,
                    "seconds": None if minutes is None else round(minutes * 60, 1),
                    "minutes": None if minutes is None else round(minutes, 3)})
    return pd.DataFrame(out, columns=EXPORT_COLUMNS)


def neutralise(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def to_csv(df: pd.DataFrame) -> bytes:
    safe = df.copy()
    for col in safe.columns:
        if safe[col].dtype == object or pd.api.types.is_string_dtype(safe[col]):
            safe[col] = safe[col].map(neutralise)
    return safe.to_csv(index=False).encode("utf-8")


def to_json(store, study_id: str) -> str:
    study = store.studies.get(study_id)
    items = store.studies.items(study_id)
    doc = {"study": {k: v for k, v in study.items() if k != "settings"},
           "settings": study["settings"].to_dict(),
           "items": [{"item_id": i.item_id, "title": item_title(i), "arm": i.arm, "target": i.target,
                      "source": i.source, "run_id": i.run_id, "answers": i.answers, "restyled": i.styled}
                     for i in items.values()],
           "answers": json.loads(export_frame(store, study_id).to_json(orient="records")),
           "judge": store.studies.judge_rows(study_id)}
    return json.dumps(doc, indent=2, ensure_ascii=False)

