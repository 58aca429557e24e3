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


# -- exports ---------------------------------------------------------------------------------
def export_frame(store, study_id: str) -> pd.DataFrame:
    cols = ["study_code", "rater_id", "shown_position", "unit_id", "repeat", "gold", "shown_left",
            "arm_left", "shown_right", "arm_right", "criterion", "score", "choice", "picked_arm",
            "rationale", "confidence", "seconds", "minutes", "shown_at", "submitted_at"]
    study = store.studies.get(study_id)
    rows = store.studies.answer_rows(study_id)
    out = []
    for r in rows:
        picked = None
        if r["choice"] == "tie":
            picked = "tie"
        elif r["choice"]:
            picked = r["arm_left"] if r["choice"] == "left" else r["arm_right"]
        minutes = r["minutes"]  # measured by the store: from first shown to submitted
        out.append({**r, "study_code": study["code"], "repeat": bool(r["repeat"]),
                    "gold": bool(r["gold_item"]), "picked_arm": picked,
                    "seconds": None if minutes is None else round(minutes * 60, 1),
                    "minutes": None if minutes is None else round(minutes, 3)})
    return pd.DataFrame(out, columns=cols)


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
           "items": [{"item_id": i.item_id, "arm": i.arm, "target": i.target, "source": i.source,
                      "run_id": i.run_id, "answers": i.answers, "restyled": i.styled}
                     for i in items.values()],
           "answers": json.loads(export_frame(store, study_id).to_json(orient="records")),
           "judge": store.studies.judge_rows(study_id)}
    return json.dumps(doc, indent=2, ensure_ascii=False)

