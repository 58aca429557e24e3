"""How an LLM judge compares with the human raters of a study.

Kept apart from `study.stats` (what the humans said) because these functions answer a
different question: can the judge stand in for people, and does the side a proposal is
shown on sway it? Each pair is judged in both orders, so position bias can be measured
rather than assumed away.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .stats import VotesIn, finite_or_none, votes_frame


def judge_calibration(human_item_means: Mapping[str, float | None],
                      judge_item_scores: Mapping[str, float | None], n_boot: int = 2000,
                      seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """How well an LLM judge's per-item scores track the human per-item means.

    Pearson r (linear agreement) with scipy's Fisher-z interval, and Spearman rho (same
    ordering, robust to a judge that is on a different scale) with a paired percentile
    bootstrap. Resamples in which one side is constant have no rank correlation and are
    dropped. Items scored on one side only are ignored; all values None when n < 3.
    """
    from scipy import stats  # noqa: PLC0415  (slow import)

    keys = sorted(k for k in human_item_means.keys() & judge_item_scores.keys()
                  if finite_or_none(human_item_means[k]) is not None
                  and finite_or_none(judge_item_scores[k]) is not None)
    out: dict[str, Any] = dict.fromkeys(
        ["pearson_r", "pearson_ci_low", "pearson_ci_high", "pearson_p",
         "spearman_rho", "spearman_ci_low", "spearman_ci_high", "spearman_p"])
    out["n"] = len(keys)
    if len(keys) < 3:
        return out
    x = np.array([human_item_means[k] for k in keys], float)
    y = np.array([judge_item_scores[k] for k in keys], float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: reported as None below
        p = stats.pearsonr(x, y)
        ci = p.confidence_interval(confidence)
        s = stats.spearmanr(x, y)
        boot = stats.bootstrap((x, y), lambda a, b: stats.spearmanr(a, b).statistic, paired=True,
                               vectorized=False, n_resamples=n_boot, method="percentile",
                               rng=np.random.default_rng(seed))
    dist = boot.bootstrap_distribution
    tail = (1 - confidence) / 2 * 100
    finite = np.isfinite(dist).any()
    low, high = np.nanpercentile(dist, [tail, 100 - tail]) if finite else (None, None)
    out.update(pearson_r=finite_or_none(p.statistic), pearson_ci_low=finite_or_none(ci.low),
               pearson_ci_high=finite_or_none(ci.high), pearson_p=finite_or_none(p.pvalue),
               spearman_rho=finite_or_none(s.statistic), spearman_ci_low=finite_or_none(low),
               spearman_ci_high=finite_or_none(high), spearman_p=finite_or_none(s.pvalue))
    return out


def judge_pairwise(human_votes: VotesIn, judge_votes: VotesIn) -> dict[str, Any]:
    """An LLM judge's pairwise votes against the human majority, and its position bias.

    Agreement: over every judge vote (each order counts) on a (pair, criterion) unit with
    a strict human majority (an arm or tie), the share choosing that majority.
    Position bias: for units the judge saw in both orders, `position_flip_rate` is the share
    where its pick (arm or tie) changed when the sides were swapped (an order-blind judge
    scores 0; one that always picks "left" scores 1). `first_position_rate` is the share of
    its non-tie votes that picked the left side (0.5 is unbiased).
    """
    h, j = votes_frame(human_votes), votes_frame(judge_votes)
    unit = ["pair_id", "criterion"]
    majority = {}
    for key, g in h.groupby(unit)["picked"]:
        top = g.value_counts().tolist()
        if len(top) == 1 or top[0] > top[1]:
            majority[key] = g.value_counts().index[0]
    hits = [majority[(pair, crit)] == picked
            for pair, crit, picked in j[unit + ["picked"]].itertuples(index=False)
            if (pair, crit) in majority]
    flips = []
    for _, g in j.groupby(unit + ["rater_id"]):
        rows = g[["arm_left", "arm_right", "picked"]].itertuples(index=False)
        by_order = {(left, right): picked for left, right, picked in rows}
        flips += [by_order[o] != by_order[o[::-1]] for o in by_order
                  if o[0] < o[1] and o[::-1] in by_order]
    decided = j["choice"][j["choice"] != "tie"]
    return {"n_majority_units": len(majority), "n_compared": len(hits),
            "agreement": float(np.mean(hits)) if hits else None,
            "n_order_pairs": len(flips),
            "position_flip_rate": float(np.mean(flips)) if flips else None,
            "n_decided": len(decided),
            "first_position_rate": float((decided == "left").mean()) if len(decided) else None}
