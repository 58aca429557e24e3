"""Statistics for the human-evaluation study (blind rating of proposals by several raters).

Records: every function takes iterables of `Rating` / `Vote` (the frozen dataclasses below)
or plain mappings with the same keys. Mappings are turned into the dataclasses first, so
rows straight from JSON or the store get the same validation as hand-built records.

Two kinds of record exist only to check the raters, and only `attention` reads them:
- `repeat=True` marks the second showing of an attention-check item; counting it elsewhere
  would count one rater's opinion twice.
- a `Vote` with `gold` set is a constructed pair with a known answer; in the preference
  statistics it would inflate agreement and the strength of the arms the check uses.

Missing answers (score None) never vanish silently: `arm_means` reports `n_missing`, and
reliability treats them as "not rated" (np.nan), which is what Krippendorff's alpha expects.
Slow imports (scipy, statsmodels, choix, krippendorff) happen inside the functions so the
app starts without them.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd

CHOICES = ("left", "right", "tie")
SCORE_RANGE = (1, 10)
TIE = "<tie>"  # `picked` value of a tie; cannot clash with a real arm name
ALL = "(all)"  # key for "all criteria pooled"; "overall" is itself a criterion name


@dataclass(frozen=True)
class Rating:
    """One rater's absolute score of one study item on one criterion; None = not answered."""
    item_id: str
    arm: str
    rater_id: str
    criterion: str
    score: int | None
    repeat: bool = False

    def __post_init__(self) -> None:
        # Refuse out-of-range scores here, so a 0 or 11 cannot skew a mean unnoticed.
        if self.score is not None and not SCORE_RANGE[0] <= self.score <= SCORE_RANGE[1]:
            raise ValueError(f"score {self.score!r} is outside {SCORE_RANGE}")


@dataclass(frozen=True)
class Vote:
    """One rater's choice between two arms' proposals shown side by side."""
    pair_id: str
    criterion: str
    rater_id: str
    arm_left: str
    arm_right: str
    choice: str
    gold: str | None = None
    repeat: bool = False

    def __post_init__(self) -> None:
        for value in (self.choice, self.gold):
            if value is not None and value not in CHOICES:
                raise ValueError(f"choice {value!r} is not one of {CHOICES}")


RatingsIn = Iterable[Rating | Mapping[str, Any]]
VotesIn = Iterable[Vote | Mapping[str, Any]]


def _frame(records: Iterable[Any], cls: type) -> pd.DataFrame:
    """Records -> DataFrame with every field as a column, even when there are no records."""
    rows = [asdict(r if isinstance(r, cls) else cls(**r)) for r in records]
    return pd.DataFrame(rows, columns=[f.name for f in fields(cls)])


def _ratings(ratings: RatingsIn, with_checks: bool = False) -> pd.DataFrame:
    df = _frame(ratings, Rating)
    df["score"] = df["score"].astype(float)  # None -> NaN: "not answered"
    df["repeat"] = df["repeat"].astype(bool)
    return df if with_checks else df[~df["repeat"]]


def votes_frame(votes: VotesIn, with_checks: bool = False) -> pd.DataFrame:
    """Votes plus `picked` (the chosen arm, or TIE) and `outcome` ("a"/"b"/"tie").

    Both derived columns name arms rather than sides, so raters who saw the same pair in a
    different (randomised) order are compared on what they chose, not where it was.
    `outcome` is "a" when the alphabetically first arm of the pair won.
    """
    df = _frame(votes, Vote)
    df["repeat"] = df["repeat"].astype(bool)
    if not with_checks:
        df = df[~df["repeat"] & df["gold"].isna()]
    df = df.copy()
    left, tie = df["choice"] == "left", df["choice"] == "tie"
    df["picked"] = np.where(tie, TIE, np.where(left, df["arm_left"], df["arm_right"]))
    first = df[["arm_left", "arm_right"]].min(axis=1)
    same = df["arm_left"] == df["arm_right"]  # no arm to name: fall back on the side
    a_won = np.where(same, left, df["picked"] == first)
    df["outcome"] = np.where(tie, "tie", np.where(a_won, "a", "b"))
    return df


def finite_or_none(x: Any) -> float | None:
    """float, or None for NaN/inf: JSON- and UI-friendly 'not computable'."""
    return float(x) if x is not None and np.isfinite(x) else None


def arm_means(ratings: RatingsIn, confidence: float = 0.95) -> pd.DataFrame:
    """Per arm and criterion: n answered, n missing, mean, sd and a t-interval of the mean.

    Each answer is one observation. Answers on the same item are not independent, so the
    interval is somewhat optimistic; use `item_means` first if items are the unit you need.
    The t rather than normal interval because studies have few raters per arm.
    """
    from scipy import stats  # noqa: PLC0415  (slow import)

    cols = ["arm", "criterion", "n", "n_missing", "mean", "sd", "ci_low", "ci_high"]
    rows = []
    for (arm, criterion), g in _ratings(ratings).groupby(["arm", "criterion"], sort=True):
        x = g["score"].dropna().to_numpy(float)
        n = len(x)
        mean = float(x.mean()) if n else math.nan
        sd = float(x.std(ddof=1)) if n >= 2 else math.nan
        half = stats.t.ppf((1 + confidence) / 2, n - 1) * stats.sem(x) if n >= 2 else math.nan
        rows.append([arm, criterion, n, len(g) - n, mean, sd, mean - half, mean + half])
    return pd.DataFrame(rows, columns=cols)


def item_means(ratings: RatingsIn, criterion: str) -> dict[str, float]:
    """Mean answered score per item on one criterion: the human side of `judge_calibration`."""
    df = _ratings(ratings)
    df = df[(df["criterion"] == criterion) & df["score"].notna()]
    return {str(k): float(v) for k, v in df.groupby("item_id")["score"].mean().items()}


def reliability_matrix(ratings: RatingsIn, criterion: str | None = None) -> pd.DataFrame:
    """Raters x units, a unit being one (item, criterion); NaN where not rated.

    Raises on two non-repeat answers by one rater to one unit, rather than picking one.
    """
    df = _ratings(ratings)
    if criterion is not None:
        df = df[df["criterion"] == criterion]
    return df.pivot(index="rater_id", columns=["item_id", "criterion"], values="score")


def krippendorff_alpha(ratings: RatingsIn, criterion: str | None = None) -> float | None:
    """Interval-level Krippendorff's alpha for one criterion, or all criteria pooled (None).

    Alpha rather than kappa: it allows any number of raters and missing cells, and the
    interval metric treats a 7-vs-8 disagreement as smaller than 2-vs-9. None when no unit
    has two scores (nothing to compare) or all scores are equal (alpha is 0/0 there).
    """
    import krippendorff  # noqa: PLC0415  (slow import)

    m = reliability_matrix(ratings, criterion).to_numpy(float)
    m = m[:, (~np.isnan(m)).sum(axis=0) >= 2] if m.size else m
    if m.size == 0 or len(np.unique(m[~np.isnan(m)])) < 2:
        return None
    return finite_or_none(krippendorff.alpha(reliability_data=m, level_of_measurement="interval"))


def alpha_by_criterion(ratings: RatingsIn) -> dict[str, float | None]:
    """Alpha for each criterion plus ALL (every (item, criterion) unit pooled)."""
    ratings = list(ratings)
    criteria = sorted(_ratings(ratings)["criterion"].unique())
    out = {c: krippendorff_alpha(ratings, c) for c in criteria}
    out[ALL] = krippendorff_alpha(ratings)
    return out


def pairwise_agreement(votes: VotesIn) -> dict[str, Any]:
    """Raw pairwise agreement and Fleiss' kappa over (pair, criterion) units.

    Agreement: of all rater pairs who judged the same unit, the share choosing the same
    outcome (same arm, or both tie). Fleiss' kappa needs the same number of raters on every
    unit, so it uses only the units with the most common rater count (the larger count if
    two are equally common); `kappa_units` and `kappa_raters` say which. Kappa corrects
    agreement for chance, which raw agreement overstates when one arm usually wins.
    """
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa  # noqa: PLC0415

    df = votes_frame(votes)
    grouped = df.groupby(["pair_id", "criterion"])["outcome"]
    units = [g.tolist() for _, g in grouped if len(g) >= 2]
    same = [a == b for u in units for a, b in combinations(u, 2)]
    out: dict[str, Any] = {"n_units": len(units), "n_rater_pairs": len(same),
                           "agreement": float(np.mean(same)) if same else None,
                           "fleiss_kappa": None, "kappa_units": 0, "kappa_raters": None}
    if units:
        sizes = Counter(len(u) for u in units)
        k = max(sizes, key=lambda s: (sizes[s], s))
        codes = np.array([[("a", "b", "tie").index(o) for o in u] for u in units if len(u) == k])
        table, _ = aggregate_raters(codes, n_cat=3)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = fleiss_kappa(table, method="fleiss")
        out.update(fleiss_kappa=finite_or_none(kappa), kappa_units=len(codes), kappa_raters=k)
    return out


def vote_alpha(votes: VotesIn, criterion: str | None = None) -> float | None:
    """Nominal Krippendorff's alpha of pairwise votes: units are (pair, criterion), the
    values the outcome (first arm / second arm / tie), so raters shown different sides are
    compared on what they chose. None when no unit has two votes or all votes agree on one
    outcome (alpha is 0/0 there)."""
    import krippendorff  # noqa: PLC0415  (slow import)

    df = votes_frame(votes)
    if criterion is not None:
        df = df[df["criterion"] == criterion]
    if df.empty:
        return None
    codes = df.assign(code=df["outcome"].map({"a": 0.0, "b": 1.0, "tie": 2.0}))
    m = codes.pivot_table(index="rater_id", columns=["pair_id", "criterion"], values="code",
                          aggfunc="first").to_numpy(float)
    m = m[:, (~np.isnan(m)).sum(axis=0) >= 2]
    if m.size == 0 or len(np.unique(m[~np.isnan(m)])) < 2:
        return None
    return finite_or_none(krippendorff.alpha(reliability_data=m, level_of_measurement="nominal"))


def _comparisons(df: pd.DataFrame, index: Mapping[str, int]) -> list[list[tuple[int, int]]]:
    """Each vote as (winner, loser) entries for choix, which takes neither weights nor ties.

    A win is entered twice and a tie once in each direction, so a tie is exactly half a win
    for each side and the likelihood keeps its relative weights.
    """
    out = []
    for left, right, choice in df[["arm_left", "arm_right", "choice"]].itertuples(index=False):
        i, j = index[left], index[right]
        out.append([] if i == j else {"left": [(i, j)] * 2, "right": [(j, i)] * 2,
                                      "tie": [(i, j), (j, i)]}[choice])
    return out


def _fit_bt(n_items: int, per_vote: list[list[tuple[int, int]]], reg: float) -> np.ndarray:
    """BT log-strengths via choix's I-LSR, centred to mean 0.

    The small regulariser keeps an arm that never lost (or never won) finite instead of
    diverging, and keeps arms absent from a bootstrap resample at the average.
    """
    import choix  # noqa: PLC0415  (slow import)

    data = [c for vote in per_vote for c in vote]
    params = choix.ilsr_pairwise(n_items, data, alpha=reg) if data else np.zeros(n_items)
    return params - params.mean()


def bradley_terry(votes: VotesIn, n_boot: int = 1000, seed: int = 0, criterion: str | None = None,
                  reg: float = 0.01, confidence: float = 0.95) -> pd.DataFrame:
    """Arms ranked by Bradley-Terry strength, with bootstrap percentile intervals.

    Strength is on the log-odds scale and centred (mean 0), so `p_beat_average` =
    expit(strength) is the modelled chance of beating an arm of average strength. Intervals
    come from resampling whole votes with replacement and refitting, which needs no
    asymptotic formula and respects ties; they are deterministic for a given seed. Votes
    are treated as independent (not clustered by rater), and criterion=None pools all
    criteria, so pass a criterion when the criteria may disagree.
    """
    from scipy.special import expit  # noqa: PLC0415  (slow import)

    df = votes_frame(votes)
    if criterion is not None:
        df = df[df["criterion"] == criterion]
    arms = sorted(set(df["arm_left"]) | set(df["arm_right"]))
    cols = ["rank", "rank_low", "rank_high", "arm", "strength", "ci_low", "ci_high", "p_beat_average", "n_votes"]
    if len(arms) < 2:
        return pd.DataFrame(columns=cols)
    per_vote = _comparisons(df, {a: i for i, a in enumerate(arms)})
    strength = _fit_bt(len(arms), per_vote, reg)
    rng = np.random.default_rng(seed)
    draws = (rng.integers(0, len(per_vote), len(per_vote)) for _ in range(n_boot))
    boots = np.array([_fit_bt(len(arms), [per_vote[k] for k in d], reg) for d in draws])
    tail = (1 - confidence) / 2 * 100
    low, high = (np.percentile(boots, [tail, 100 - tail], axis=0) if n_boot
                 else np.full((2, len(arms)), math.nan))
    rank_low, rank_high = _rank_interval(boots, tail) if n_boot else np.full((2, len(arms)), math.nan)
    n_votes = [int(((df["arm_left"] == a) | (df["arm_right"] == a)).sum()) for a in arms]
    out = pd.DataFrame({"arm": arms, "strength": strength, "ci_low": low, "ci_high": high,
                        "rank_low": rank_low, "rank_high": rank_high,
                        "p_beat_average": expit(strength), "n_votes": n_votes})
    out = out.sort_values(["strength", "arm"], ascending=[False, True], ignore_index=True)
    out.insert(0, "rank", range(1, len(out) + 1))
    return out[cols]


def _rank_interval(boots: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst plausible place of each arm (1 = strongest): percentiles of its rank
    over the bootstrap refits, which a reader takes in more easily than a log-odds interval."""
    ranks = (-boots).argsort(axis=1).argsort(axis=1) + 1
    low, high = np.percentile(ranks, [tail, 100 - tail], axis=0)
    return np.floor(low), np.ceil(high)


def win_matrix(votes: VotesIn, criterion: str | None = None,
               ties: Literal["exclude", "half"] = "exclude") -> pd.DataFrame:
    """Arms x arms: share of comparisons the row arm won against the column arm.

    ties="exclude" divides by decided (non-tie) comparisons only, so a row + its mirror
    cell sum to 1; ties="half" counts a tie as half a win for each side, matching
    `bradley_terry`. NaN on the diagonal and where two arms never met.
    """
    df = votes_frame(votes)
    if criterion is not None:
        df = df[df["criterion"] == criterion]
    arms = sorted(set(df["arm_left"]) | set(df["arm_right"]))
    wins = pd.DataFrame(0.0, index=arms, columns=arms)
    for left, right, picked in df[["arm_left", "arm_right", "picked"]].itertuples(index=False):
        if left == right:
            continue
        if picked != TIE:
            wins.loc[picked, right if picked == left else left] += 1
        elif ties == "half":
            wins.loc[left, right] += 0.5
            wins.loc[right, left] += 0.5
    total = wins + wins.T
    return (wins / total.where(total > 0)).rename_axis(index="row arm", columns="column arm")


def picked_real_rate(votes: VotesIn, real_arm: str = "real paper",
                     confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """How often raters picked the real paper when it was one side of the pair.

    Per criterion and ALL. The denominator is every such vote, ties included (a tie is
    "not picked"; `ties` says how many). Wilson intervals, because rates near 0 or 1 with
    small n are where the normal interval fails. Pairs with the real paper on both sides
    say nothing and are left out.
    """
    from statsmodels.stats.proportion import proportion_confint  # noqa: PLC0415  (slow import)

    df = votes_frame(votes)
    df = df[(df["arm_left"] == real_arm) ^ (df["arm_right"] == real_arm)]
    out: dict[str, dict[str, Any]] = {}
    for name, g in [*df.groupby("criterion", sort=True), (ALL, df)]:
        n, k = len(g), int((g["picked"] == real_arm).sum())
        low, high = (proportion_confint(k, n, alpha=1 - confidence, method="wilson") if n
                     else (None, None))
        out[str(name)] = {"n": n, "picked_real": k, "ties": int((g["picked"] == TIE).sum()),
                          "rate": k / n if n else None,
                          "ci_low": finite_or_none(low), "ci_high": finite_or_none(high)}
    return out


def attention(ratings: RatingsIn = (), votes: VotesIn = (), tolerance: int = 2) -> pd.DataFrame:
    """Per-rater attention-check pass rates and a `flagged` column (failed any check).

    Checks: (a) a repeated item (`repeat=True` paired with the rater's original): one check
    per item, passed when every criterion answered both times differs by <= tolerance; for a
    repeated vote, passed when the same arm (or tie) is chosen, so a side-swapped repeat is
    fine. (b) a gold vote: passed when the choice equals `gold`. Criteria left unanswered
    on either showing are no evidence either way and are skipped.
    """
    r, v = _ratings(ratings, with_checks=True), votes_frame(votes, with_checks=True)
    keys = ["rater_id", "item_id", "criterion"]
    rr = r[~r["repeat"]].merge(r[r["repeat"]], on=keys).dropna(subset=["score_x", "score_y"])
    rr["ok"] = (rr["score_x"] - rr["score_y"]).abs() <= tolerance
    item_checks = rr.groupby(["rater_id", "item_id"])["ok"].all().reset_index()
    vv = v[~v["repeat"]].merge(v[v["repeat"]], on=["rater_id", "pair_id", "criterion"])
    vv["ok"] = vv["picked_x"] == vv["picked_y"]
    gold = v[v["gold"].notna()].assign(ok=lambda d: d["choice"] == d["gold"])
    repeats = pd.concat([item_checks[["rater_id", "ok"]], vv[["rater_id", "ok"]]])
    raters = sorted(set(r["rater_id"]) | set(v["rater_id"]))
    out = pd.DataFrame({"rater_id": raters})
    for name, checks in (("repeat", repeats), ("gold", gold)):
        by = checks.groupby("rater_id")["ok"]
        out[f"{name}_checks"] = out["rater_id"].map(by.size()).fillna(0).astype(int)
        out[f"{name}_passed"] = out["rater_id"].map(by.sum()).fillna(0).astype(int)
    out["n_checks"] = out["repeat_checks"] + out["gold_checks"]
    passed = out["repeat_passed"] + out["gold_passed"]
    out["pass_rate"] = passed / out["n_checks"].where(out["n_checks"] > 0)
    out["flagged"] = passed < out["n_checks"]
    return out
