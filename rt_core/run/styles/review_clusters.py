"""A meta-review drawn from the reviews: their points, embedded and clustered.

No model writes it, so it cannot contradict the reviews: each cluster of similar points
is represented by its most central point, most widely shared first, with how many
reviewers made it. The embedder is the run's (whatever the run chose).

The count is a claim, so it must hold: a reviewer is counted for a point only if one of
that reviewer's own points is the same point. Two things keep loosely related points
apart. Every review point opens with the same frame ("The proposal is ..."), which
dominates a sentence embedding ("The proposal is about to be submitted" and "The proposal
is well written" score 0.72 with MiniLM), so points are embedded without it. And clusters
are complete-linkage: every pair of members is closer than the threshold, so no chain of
loosely similar points merges unlike ones. A paraphrase the embedder does not recognise is
split and undercounted, never the other way round.
"""
from __future__ import annotations

import re

import numpy as np

from ...text import sentences
from .review_heading import STRENGTHS, WEAKNESSES, heading


def review_points(text: str) -> list[str]:
    """The separate points of one review section (bullets, else sentences)."""
    pts = []
    for ln in (text or "").splitlines():
        ln = re.sub(r"^however,\s*", "", ln.strip().lstrip("-*• ").strip(), flags=re.I)
        ln = ln[:1].upper() + ln[1:]
        if not ln:
            continue
        pts += [s for s in sentences(ln) if len(s.split()) >= 3]
    return pts


# Same point in other words scores 0.47-0.93 with MiniLM once the frame is gone; different
# points at most 0.44 (15 planted paraphrase pairs against 420 unlike pairs).
SAME_POINT = 0.5

_SUBJECT = re.compile(r"\b(?:the|this|its|our)\s+(?:proposal|paper|work|project|submission|study|"
                      r"authors?)(?:'s)?\b", re.I)
_AUXILIARY = re.compile(r"^\s*(?:(?:is|are|was|were|has|have|does|do|will|would|can|could|may|"
                        r"might)\b\s*)+", re.I)
_DANGLING = re.compile(r"\s+(?:in|of|for|by|to)\s*(?=[.!?]|$)", re.I)
# A base model's line led by a concept ("The proposal's use of WebArena is ...",
# run/styles/stem.py): the concept's name dominated the embedding, so two unlike points on
# one concept scored 0.55-0.64 and counted as one point of two reviewers; without it,
# 0.07-0.19.
_FOCUS = re.compile(r"^\s*(?:however\s*,\s*)?use\s+of\s+.+?\s+(?:is|are)\b", re.I)


def point_content(point: str) -> str:
    """A point without the frame every point shares (its subject, the proposal, and the
    auxiliary after it; for a line led by a concept, "the proposal's use of <concept> is"),
    so points are similar for what they say about it. A point that is nothing but frame
    stays whole."""
    text = _AUXILIARY.sub("", _FOCUS.sub("", _SUBJECT.sub(" ", point)))
    text = re.sub(r"\s+", " ", _DANGLING.sub("", text)).strip(" ,;:")
    return text if re.search(r"\w", text) else point


def cluster_points(points: list[tuple[int, str]], vecs: np.ndarray, threshold: float = SAME_POINT
                   ) -> list[list[int]]:
    """Complete-linkage clusters: every two members closer than `threshold` (cosine), so
    a chain of loosely similar points never merges unlike ones. Most reviewers first."""
    if not points:
        return []
    if len(points) == 1:
        return [[0]]
    from scipy.cluster.hierarchy import fcluster, linkage  # noqa: PLC0415  (slow)
    from scipy.spatial.distance import pdist  # noqa: PLC0415  (slow)

    dist = np.clip(pdist(vecs, metric="cosine"), 0, 2)
    labels = fcluster(linkage(dist, method="complete"), t=1 - threshold, criterion="distance")
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len({points[i][0] for i in g}), g[0]))


def summarise(points: list[tuple[int, str]], vecs: np.ndarray, n_reviewers: int,
              limit: int = 4) -> str:
    """One bullet per cluster (at most `limit`): its most central point and its reach, the
    number of distinct reviewers among its members (a reviewer's two points count once)."""
    lines = []
    for group in cluster_points(points, vecs)[:limit]:
        centre = vecs[group].mean(axis=0)
        rep = group[int(np.argmax(vecs[group] @ centre))]
        who = len({points[i][0] for i in group})
        lines.append(f"- {points[rep][1]} ({who} of {n_reviewers} reviewer{'s' * (n_reviewers > 1)})")
    return "\n".join(lines)


def clustered_section(embedder, points: list[tuple[int, str]], n_reviewers: int) -> str:
    """The summary of one section's (reviewer index, point) pairs, or '' when there are none."""
    if not points:
        return ""
    return summarise(points, embedder.encode([point_content(p) for _, p in points]), n_reviewers)


def clustered_sections(embedder, reviews) -> dict[str, str]:
    """Both sections of a meta-review. Each point goes under the heading it leans to (praise
    under Strengths, criticism under Weaknesses; run/styles/review_heading.py), else under
    the one it was asked for: never by where a reviewer happened to write it."""
    sections: dict[str, list[tuple[int, str]]] = {STRENGTHS: [], WEAKNESSES: []}
    for i, r in enumerate(reviews):
        for asked in (STRENGTHS, WEAKNESSES):
            for p in review_points(getattr(r, asked)):
                sections[heading(p, asked)].append((i, p))
    return {key: clustered_section(embedder, pts, len(reviews)) for key, pts in sections.items()}
