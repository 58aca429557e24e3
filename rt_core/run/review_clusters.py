"""A meta-review drawn from the reviews: their points, embedded and clustered.

No model writes it, so it cannot contradict the reviews: each cluster of similar points
is represented by its most central point, most widely shared first, with how many
reviewers made it. The embedder is the run's (whatever the run chose).
"""
from __future__ import annotations

import re

import numpy as np


def review_points(text: str) -> list[str]:
    """The separate points of one review section (bullets, else sentences)."""
    pts = []
    for ln in (text or "").splitlines():
        ln = re.sub(r"^however,\s*", "", ln.strip().lstrip("-*• ").strip(), flags=re.I)
        ln = ln[:1].upper() + ln[1:]
        if not ln:
            continue
        pts += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", ln) if len(s.split()) >= 3]
    return pts


def cluster_points(points: list[tuple[int, str]], vecs: np.ndarray, threshold: float = 0.55
                   ) -> list[list[int]]:
    """Average-linkage clusters of points whose embeddings are closer than `threshold`
    (cosine), largest (most reviewers) first."""
    if not points:
        return []
    if len(points) == 1:
        return [[0]]
    from scipy.cluster.hierarchy import fcluster, linkage  # noqa: PLC0415  (slow)
    from scipy.spatial.distance import pdist  # noqa: PLC0415  (slow)

    dist = np.clip(pdist(vecs, metric="cosine"), 0, 2)
    labels = fcluster(linkage(dist, method="average"), t=1 - threshold, criterion="distance")
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len({points[i][0] for i in g}), g[0]))


def summarise(points: list[tuple[int, str]], vecs: np.ndarray, n_reviewers: int,
              limit: int = 4) -> str:
    """One bullet per cluster (at most `limit`): its most central point and its reach."""
    lines = []
    for group in cluster_points(points, vecs)[:limit]:
        centre = vecs[group].mean(axis=0)
        rep = group[int(np.argmax(vecs[group] @ centre))]
        who = len({points[i][0] for i in group})
        lines.append(f"- {points[rep][1]} ({who} of {n_reviewers} reviewer{'s' * (n_reviewers > 1)})")
    return "\n".join(lines)


def clustered_section(embedder, texts: list[str], n_reviewers: int) -> str:
    """The summary of one section across reviews (texts[i] is reviewer i's), or '' when
    no reviewer made a point."""
    points = [(i, p) for i, text in enumerate(texts) for p in review_points(text)]
    if not points:
        return ""
    return summarise(points, embedder.encode([p for _, p in points]), n_reviewers)
