"""Study statistics on small hand-checkable data (rt_core.study.stats)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rt_core.study import judging as J
from rt_core.study import stats as S
from rt_core.study.stats import ALL, Rating, Vote


def votes(pair: str, left: str, right: str, choices: list[str],
          criterion: str = "overall") -> list[Vote]:
    """One vote per choice, by raters r0, r1, ..."""
    return [Vote(pair, criterion, f"r{i}", left, right, c) for i, c in enumerate(choices)]


# --- records -------------------------------------------------------------------------------

def test_records_validate_and_accept_plain_dicts():
    with pytest.raises(ValueError):
        Rating("i", "global", "r", "novelty", 11)
    with pytest.raises(ValueError):
        Vote("p", "overall", "r", "a", "b", "middle")
    as_dicts = [{"item_id": "i", "arm": "global", "rater_id": "r", "criterion": "novelty",
                 "score": 4}]
    as_records = [Rating("i", "global", "r", "novelty", 4)]
    pd.testing.assert_frame_equal(S.arm_means(as_dicts), S.arm_means(as_records))


# --- absolute ratings ----------------------------------------------------------------------

def test_arm_means_counts_missing_and_uses_t_interval():
    ratings = [Rating("i1", "global", "r1", "novelty", 4),
               Rating("i2", "global", "r1", "novelty", 6),
               Rating("i3", "global", "r1", "novelty", None),
               Rating("i1", "global", "r1", "novelty", 10, repeat=True)]  # check copy: ignored
    row = S.arm_means(ratings).iloc[0]
    assert (row["n"], row["n_missing"], row["mean"]) == (2, 1, 5.0)
    # sd = sqrt(2), sem = 1, t(0.975, df=1) = 12.7062
    assert row["ci_low"] == pytest.approx(5 - 12.7062, abs=1e-4)
    assert row["ci_high"] == pytest.approx(5 + 12.7062, abs=1e-4)


def test_arm_means_single_answer_has_no_interval():
    row = S.arm_means([Rating("i1", "self", "r1", "feasibility", 7)]).iloc[0]
    assert row["n"] == 1 and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_alpha_is_one_under_perfect_agreement():
    ratings = [Rating(f"i{i}", "global", r, c, s)
               for i, s in enumerate([2, 5, 9, 7]) for r in ("r1", "r2", "r3")
               for c in ("novelty", "feasibility")]
    assert S.krippendorff_alpha(ratings) == pytest.approx(1.0)
    assert S.krippendorff_alpha(ratings, "novelty") == pytest.approx(1.0)


def test_alpha_matches_the_krippendorff_package_example():
    # The example in the krippendorff package's sample.py (from Wikipedia): interval alpha 0.811.
    coders = {"A": "*  *  *  *  *  3  4  1  2  1  1  3  3  *  3",
              "B": "1  *  2  1  3  3  4  3  *  *  *  *  *  *  *",
              "C": "*  *  2  1  3  4  4  *  2  1  1  3  3  *  4"}
    ratings = [Rating(f"u{u}", "global", coder, "novelty", None if v == "*" else int(v))
               for coder, row in coders.items() for u, v in enumerate(row.split())]
    assert round(S.krippendorff_alpha(ratings), 3) == 0.811


def test_alpha_none_without_overlap_or_without_variation():
    alone = [Rating("i1", "a", "r1", "novelty", 3), Rating("i2", "a", "r2", "novelty", 8),
             Rating("i3", "a", "r3", "novelty", None), Rating("i3", "a", "r1", "novelty", 5)]
    assert S.krippendorff_alpha(alone) is None
    constant = [Rating(f"i{i}", "a", r, "novelty", 6) for i in range(3) for r in ("r1", "r2")]
    assert S.krippendorff_alpha(constant) is None


def test_alpha_per_criterion_and_pooled():
    ratings = [Rating(f"i{i}", "a", r, "novelty", s)
               for i, s in enumerate([2, 5, 9]) for r in ("r1", "r2")]
    ratings += [Rating(f"i{i}", "a", "r1", "feasibility", s) for i, s in enumerate([2, 5, 9])]
    ratings += [Rating(f"i{i}", "a", "r2", "feasibility", s) for i, s in enumerate([9, 2, 5])]
    alphas = S.alpha_by_criterion(ratings)
    assert alphas["novelty"] == pytest.approx(1.0)
    assert alphas["feasibility"] < 0
    assert alphas["feasibility"] < alphas[ALL] < alphas["novelty"]


# --- pairwise votes ------------------------------------------------------------------------

def test_pairwise_agreement_compares_arms_not_sides():
    data = votes("p1", "global", "self", ["left", "left"])
    data.append(Vote("p1", "overall", "r2", "self", "global", "right"))  # swapped, same arm
    data += votes("p2", "global", "self", ["right", "right", "left"])
    out = S.pairwise_agreement(data)
    assert out["n_units"] == 2 and out["n_rater_pairs"] == 6
    assert out["agreement"] == pytest.approx(4 / 6)


def test_fleiss_kappa_perfect_and_modal_rater_count():
    data = (votes("p1", "a", "b", ["left"] * 3) + votes("p2", "a", "b", ["right"] * 3)
            + votes("p3", "a", "b", ["tie", "left"]))
    out = S.pairwise_agreement(data)
    assert (out["kappa_units"], out["kappa_raters"]) == (2, 3)
    assert out["fleiss_kappa"] == pytest.approx(1.0)


def dominant_votes() -> list[Vote]:
    """A beats B and C every time; B and C split evenly."""
    data = votes("ab", "A", "B", ["left"] * 10) + votes("ca", "C", "A", ["right"] * 10)
    return data + votes("bc", "B", "C", ["left", "right"] * 5)


def test_bradley_terry_dominant_arm_ranks_first_with_separate_interval():
    table = S.bradley_terry(dominant_votes(), n_boot=200, seed=1).set_index("arm")
    assert table.index[0] == "A" and table.loc["A", "rank"] == 1
    assert table.loc["A", "ci_low"] > table.loc[["B", "C"], "ci_high"].max()
    assert table["strength"].sum() == pytest.approx(0.0, abs=1e-9)
    assert table.loc["A", "p_beat_average"] > 0.9
    assert table.loc["A", "n_votes"] == 20


def test_bradley_terry_even_ties_give_equal_strengths():
    data = votes("ab", "A", "B", ["tie"] * 4 + ["left", "right"])
    table = S.bradley_terry(data, n_boot=50).set_index("arm")
    assert table.loc["A", "strength"] == pytest.approx(table.loc["B", "strength"], abs=1e-9)
    assert table.loc["A", "p_beat_average"] == pytest.approx(0.5)


def test_bradley_terry_tie_is_half_a_win():
    # A: 1 win + half of a tie = 1.5 of 2, so P(A beats B) = 0.75, log-odds log 3.
    table = S.bradley_terry(votes("ab", "A", "B", ["left", "tie"]), n_boot=0, reg=0.0)
    strength = table.set_index("arm")["strength"]
    assert strength["A"] - strength["B"] == pytest.approx(math.log(3), abs=1e-6)
    assert table["ci_low"].isna().all()


def test_bradley_terry_is_deterministic_under_a_seed():
    data = dominant_votes() + votes("ab2", "A", "B", ["right", "tie"])
    first = S.bradley_terry(data, n_boot=100, seed=7)
    pd.testing.assert_frame_equal(first, S.bradley_terry(data, n_boot=100, seed=7))
    other = S.bradley_terry(data, n_boot=100, seed=8)
    pd.testing.assert_series_equal(first["strength"], other["strength"])


def test_bradley_terry_ignores_gold_and_repeat_votes():
    data = dominant_votes()
    checks = [Vote("g", "overall", "r0", "B", "A", "left", gold="left"),
              Vote("ab", "overall", "r0", "A", "B", "right", repeat=True)]
    pd.testing.assert_frame_equal(S.bradley_terry(data, n_boot=20),
                                  S.bradley_terry(data + checks, n_boot=20))


def test_win_matrix_excludes_or_halves_ties():
    data = votes("ab", "A", "B", ["left", "left", "right", "tie"])
    excluded = S.win_matrix(data)
    assert excluded.loc["A", "B"] == pytest.approx(2 / 3)
    assert excluded.loc["B", "A"] == pytest.approx(1 / 3)
    assert math.isnan(excluded.loc["A", "A"])
    assert S.win_matrix(data, ties="half").loc["A", "B"] == pytest.approx(2.5 / 4)


def test_picked_real_rate_counts():
    real = "real paper"
    data = (votes("p1", real, "global", ["left", "left", "right"], criterion="novelty")
            + votes("p2", "self", real, ["right", "tie"], criterion="feasibility")
            + votes("p3", "self", "global", ["left"], criterion="novelty")  # no real paper
            + [Vote("g", "novelty", "r9", real, "junk", "left", gold="left")])  # check pair
    out = S.picked_real_rate(data, real_arm=real)
    assert (out["novelty"]["n"], out["novelty"]["picked_real"]) == (3, 2)
    assert (out["feasibility"]["n"], out["feasibility"]["picked_real"],
            out["feasibility"]["ties"]) == (2, 1, 1)
    assert (out[ALL]["n"], out[ALL]["picked_real"]) == (5, 3)
    assert out[ALL]["rate"] == pytest.approx(0.6)
    assert out[ALL]["ci_low"] < 0.6 < out[ALL]["ci_high"]


# --- attention checks ----------------------------------------------------------------------

def test_attention_flags_exactly_the_rater_who_changed_by_five():
    ratings = []
    for rater, change in (("steady", 0), ("edge", 2), ("drifter", 5)):
        ratings += [Rating("x", "global", rater, "novelty", 3),
                    Rating("x", "global", rater, "feasibility", 8),
                    Rating("x", "global", rater, "novelty", 3, repeat=True),
                    Rating("x", "global", rater, "feasibility", 8 - change, repeat=True)]
    data = [Vote("g", "overall", r, "real paper", "junk", "left", gold="left")
            for r in ("steady", "edge", "drifter")]
    table = S.attention(ratings, data).set_index("rater_id")
    assert table.index[table["flagged"]].tolist() == ["drifter"]
    assert table.loc["drifter", "pass_rate"] == pytest.approx(0.5)
    assert table.loc["steady", "n_checks"] == 2
    strict = S.attention(ratings, data, tolerance=1).set_index("rater_id")
    assert sorted(strict.index[strict["flagged"]]) == ["drifter", "edge"]


def test_attention_repeated_vote_and_gold():
    data = [Vote("p", "overall", "same", "A", "B", "left"),
            Vote("p", "overall", "same", "B", "A", "right", repeat=True),  # swapped, same arm
            Vote("p", "overall", "flip", "A", "B", "left"),
            Vote("p", "overall", "flip", "A", "B", "right", repeat=True),
            Vote("g", "overall", "wrong", "A", "junk", "right", gold="left")]
    table = S.attention(votes=data).set_index("rater_id")
    assert table["flagged"].to_dict() == {"flip": True, "same": False, "wrong": True}
    assert table.loc["wrong", ["gold_checks", "gold_passed"]].tolist() == [1, 0]


# --- LLM judge -----------------------------------------------------------------------------

def test_judge_calibration_perfect_and_too_small():
    human = {"a": 2.0, "b": 4.5, "c": 6.0, "d": 8.0, "e": 9.0, "f": None}
    judge = {k: v / 2 + 1 for k, v in human.items() if v is not None}  # linear, same order
    judge["g"] = 3.0  # human side missing: ignored
    out = J.judge_calibration(human, judge)
    assert out["n"] == 5
    assert out["pearson_r"] == pytest.approx(1.0)
    assert out["pearson_ci_low"] == pytest.approx(1.0)
    assert out["spearman_rho"] == pytest.approx(1.0)
    assert out["spearman_ci_low"] == pytest.approx(1.0)
    small = J.judge_calibration({"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0})
    assert small["n"] == 2 and small["pearson_r"] is None and small["spearman_rho"] is None


def test_item_means_feed_calibration():
    ratings = [Rating("i1", "g", "r1", "overall", 4), Rating("i1", "g", "r2", "overall", 6),
               Rating("i1", "g", "r3", "overall", None), Rating("i2", "g", "r1", "novelty", 9)]
    assert S.item_means(ratings, "overall") == {"i1": 5.0}


def test_judge_that_always_picks_left_has_full_position_bias():
    human = votes("p1", "A", "B", ["left"] * 3) + votes("p2", "A", "C", ["right", "right", "left"])
    judge = [Vote(p, "overall", "judge", x, y, "left")
             for p, a, b in (("p1", "A", "B"), ("p2", "A", "C")) for x, y in ((a, b), (b, a))]
    out = J.judge_pairwise(human, judge)
    assert out["position_flip_rate"] == 1.0 and out["first_position_rate"] == 1.0
    assert (out["n_order_pairs"], out["n_compared"]) == (2, 4)
    assert out["agreement"] == pytest.approx(0.5)


def test_consistent_judge_has_no_position_bias_and_agrees():
    human = votes("p1", "A", "B", ["left", "left", "tie"])
    judge = [Vote("p1", "overall", "judge", "A", "B", "left"),
             Vote("p1", "overall", "judge", "B", "A", "right")]
    out = J.judge_pairwise(human, judge)
    assert out["position_flip_rate"] == 0.0 and out["first_position_rate"] == 0.5
    assert out["agreement"] == 1.0


def test_slow_libraries_load_lazily():
    code = ("import sys; import rt_core.study.stats; "
            "print(sorted(m for m in ('scipy', 'statsmodels', 'choix', 'krippendorff') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip() == "[]"


def test_empty_inputs_do_not_raise():
    assert S.bradley_terry([]).empty and S.win_matrix([]).empty and S.arm_means([]).empty
    assert S.krippendorff_alpha([]) is None
    assert S.pairwise_agreement([])["agreement"] is None
    assert S.picked_real_rate([])[ALL]["rate"] is None
    assert J.judge_pairwise([], [])["agreement"] is None
    assert np.all(S.attention().columns == ["rater_id", "repeat_checks", "repeat_passed",
                                             "gold_checks", "gold_passed", "n_checks",
                                             "pass_rate", "flagged"])
