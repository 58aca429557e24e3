"""From judgements or measured signals to an order of the candidates, with no model call.

- Judgements: a Bradley-Terry fit (`choix.ilsr_pairwise`, lightly regularised so a
  Swiss tournament's sparse comparisons and an unbeaten candidate still give finite
  scores), intervals from a bootstrap over the decisions, the win matrix, and the
  position bias (the share of decisions that went to the proposal shown first). A
  judgement without a decision counts nowhere. Every pair is judged in both orders, so
  a judge that always picks the first shown gives each candidate as many wins as
  losses: equal scores, and the order falls to the tie-break, as if it had not judged.
- Signals (no model that can judge): each measured signal is standardised across the
  candidates and the standardised signals are averaged; the record says it was signals.

Ties (equal scores) are broken by the reviewers' mean score, then by candidate order.
"""
from __future__ import annotations

import numpy as np

from ...types import Candidate, Judgement

ALPHA = 0.01  # choix's regularisation: finite scores for an unbeaten or unplayed candidate
BOOTSTRAP = 200  # resamples of the decisions for the intervals
LEVEL = 0.95


def decisions(judgements: list[Judgement], ids: list[str]) -> list[tuple[int, int]]:
    """(winner index, loser index) of every judgement with a decision."""
    at = {c: i for i, c in enumerate(ids)}
    out = []
    for j in judgements:
        if j.winner and j.first in at and j.second in at:
            loser = j.second if j.winner == j.first else j.first
            out.append((at[j.winner], at[loser]))
    return out


def bradley_terry(n: int, data: list[tuple[int, int]]) -> np.ndarray:
    """Log-strengths (mean zero); all zero when there is nothing to fit."""
    if n < 2 or not data:
        return np.zeros(n)
    import choix  # noqa: PLC0415  (slow: it imports scipy.stats, 1.5 s of every CLI command's start)

    return np.asarray(choix.ilsr_pairwise(n, data, alpha=ALPHA), dtype=float)


def bootstrap(n: int, data: list[tuple[int, int]], rounds: int = BOOTSTRAP,
              seed: int = 0) -> np.ndarray:
    """[low, high] per candidate: percentile intervals of the fit over resampled decisions."""
    if not data:
        return np.zeros((n, 2))
    rng = np.random.default_rng(seed)
    fits = np.stack([bradley_terry(n, [data[i] for i in rng.integers(0, len(data), len(data))])
                     for _ in range(rounds)])
    tail = (1 - LEVEL) / 2 * 100
    return np.stack([np.percentile(fits, tail, axis=0), np.percentile(fits, 100 - tail, axis=0)], axis=1)


def win_matrix(judgements: list[Judgement], ids: list[str]) -> dict[str, dict[str, int]]:
    wins = {a: {b: 0 for b in ids if b != a} for a in ids}
    for w, lose in decisions(judgements, ids):
        wins[ids[w]][ids[lose]] += 1
    return wins


def position_bias(judgements: list[Judgement]) -> float | None:
    """Share of decisions won by the proposal shown first (None: no decision at all)."""
    decided = [j for j in judgements if j.winner]
    return round(sum(j.winner == j.first for j in decided) / len(decided), 4) if decided else None


def review_score(c: Candidate) -> float | None:
    if c.meta_review is not None and c.meta_review.score is not None:
        return float(c.meta_review.score)
    scores = [r.score for r in c.reviews if r.score is not None]
    return float(np.mean(scores)) if scores else None


def order_by(scores: dict[str, float], candidates: list[Candidate]) -> list[str]:
    """Best first: score, then the reviewers' mean score, then candidate order."""
    pos = {c.id: i for i, c in enumerate(candidates)}
    by_id = {c.id: c for c in candidates}

    def key(cid: str):
        rs = review_score(by_id[cid])
        return (-round(scores.get(cid, 0.0), 6), -(rs if rs is not None else -1e9), pos[cid])

    return sorted(scores, key=key)


def combine_signals(candidates: list[Candidate]) -> dict[str, float]:
    """Mean of the standardised signals each candidate has (a signal that does not vary
    across candidates, or that some candidates lack, tells them apart by nothing and is
    left out of the sum)."""
    names = sorted({k for c in candidates for k in c.signals})
    score = {c.id: 0.0 for c in candidates}
    used = 0
    for name in names:
        if not all(name in c.signals for c in candidates):
            continue
        vals = np.array([c.signals[name] for c in candidates], dtype=float)
        sd = vals.std()
        if sd < 1e-9:
            continue
        used += 1
        for c, z in zip(candidates, (vals - vals.mean()) / sd, strict=True):
            score[c.id] += float(z)
    return {k: round(v / max(1, used), 4) for k, v in score.items()}
