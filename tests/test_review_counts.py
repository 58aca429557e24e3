"""The clustered meta-review's counts are claims: "(2 of 3 reviewers)" must mean two
reviewers made that point (issue 16). Planted reviews, embedded with the real MiniLM."""
from __future__ import annotations

import asyncio
import itertools
import re

import numpy as np
import pytest

from rt_core.config import LOCAL_EMBEDDER
from rt_core.models.embed import Embedder
from rt_core.run.styles import context, grounding, stem
from rt_core.run.styles.review_clusters import SAME_POINT, point_content
from rt_core.types import Proposal, Review

PROPOSAL = Proposal(q1="How can language agents classify stellar spectra?",
                    q5="We will label survey spectra and report classification accuracy.")

# The same point in other words, as different reviewers put it.
PARAPHRASES = [
    ("The proposal links stellar spectra with language agents.",
     "The proposal connects language agents and stellar spectra well."),
    ("The proposal is a lot of work.", "The proposal requires a lot of work to carry out."),
    ("The proposal never says which survey data it uses.", "The proposal does not name its data source."),
    ("The proposal is well written and clear.", "The writing of the proposal is clear."),
    ("The idea is novel.", "The proposal is novel and original."),
    ("The proposal ignores the cost of labelling spectra.",
     "Labelling the spectra would be expensive and the proposal does not budget for it."),
    ("The evaluation lacks a baseline.", "The proposal does not compare against any baseline method."),
    ("The proposal is about to be submitted.", "The proposal is ready for submission."),
    ("The proposal uses a large survey of galaxies.", "The proposal draws on a big galaxy survey."),
    ("The proposal could help robots grasp objects.", "The work may improve robotic grasping."),
    ("The sample size is too small.", "The proposal relies on too few examples."),
    ("The proposal has a clear metric, classification accuracy.",
     "The proposal reports accuracy as its measure of success."),
    ("The proposal does not discuss ethics.", "Ethical issues are not addressed in the proposal."),
    ("The timeline is too ambitious for one year.", "The plan is unrealistic in the time given."),
    ("The proposal is well motivated.", "The motivation of the proposal is strong."),
]


@pytest.fixture(scope="module")
def minilm():
    return Embedder(LOCAL_EMBEDDER)


def meta(minilm, reviews):
    ctx = context.StageContext(None, grounding=grounding.Grounding([], embedder=minilm))
    return asyncio.run(stem.meta_review(ctx, PROPOSAL, reviews))


def counted(section: str) -> dict[str, int]:
    """Each line's point -> how many reviewers it claims."""
    out = {}
    for ln in section.splitlines():
        m = re.fullmatch(r"- (.*) \((\d+) of \d+ reviewers?\)", ln)
        assert m, ln
        out[m.group(1)] = int(m.group(2))
    return out


def test_points_only_one_reviewer_made_count_one_reviewer(minilm):
    """The session's reviews: generic points, each said by one reviewer, were counted 3 of 3
    and 2 of 3 when clusters chained them through the shared 'The proposal is' frame."""
    reviews = [Review("a", "- The proposal is about to be submitted.", "- The proposal is a lot of work.", 5),
               Review("b", "- The proposal is well written and clear.", "- The evaluation lacks a baseline.", 6),
               Review("c", "- The proposal is well motivated.", "- The proposal does not discuss ethics.", 4)]
    m = meta(minilm, reviews)
    assert counted(m.strengths) == {"The proposal is about to be submitted.": 1,
                                    "The proposal is well written and clear.": 1,
                                    "The proposal is well motivated.": 1}
    assert set(counted(m.weaknesses).values()) == {1}
    assert "The proposal is a lot of work." in counted(m.weaknesses)


def test_a_point_every_reviewer_made_counts_every_reviewer(minilm):
    reviews = [Review("a", "- The proposal links stellar spectra with language agents.", "", 6),
               Review("b", "- The proposal connects language agents and stellar spectra well.", "", 7),
               Review("c", "- Linking language agents with stellar spectra is the strength of the proposal.\n"
                           "- The proposal is about to be submitted.", "", 5)]
    lines = counted(meta(minilm, reviews).strengths)
    first = next(iter(lines))
    assert "stellar spectra" in first and lines[first] == 3
    assert lines["The proposal is about to be submitted."] == 1


def test_each_counted_reviewer_made_the_point_shown(minilm):
    """Fifteen points in two wordings each, dealt to three reviewers: every reviewer a line
    counts has a point of their own as close to the line's point as the threshold asks."""
    dealt = [[], [], []]
    for n, (one, other) in enumerate(PARAPHRASES):
        dealt[n % 3].append(one)
        dealt[(n + 1) % 3].append(other)
    reviews = [Review(str(i), "\n".join(f"- {p}" for p in pts), "", 5) for i, pts in enumerate(dealt)]
    lines = counted(meta(minilm, reviews).strengths)
    assert len(lines) == 4  # the summary's limit
    for point, n in lines.items():
        v = minilm.encode([point_content(point)] + [point_content(p) for d in dealt for p in d])
        sims = v[1:] @ v[0]
        owners = {i for i, d in enumerate(dealt) for _ in d}
        close = {i for i, s in zip([i for i, d in enumerate(dealt) for _ in d], sims, strict=True)
                 if s >= SAME_POINT}
        assert close <= owners and len(close) >= n, (point, n, close)


def test_without_the_frame_unlike_points_stay_below_the_threshold(minilm):
    """The threshold's calibration: no two different points reach it, and most paraphrases do
    (a missed paraphrase undercounts, which is the safe side)."""
    points = [p for pair in PARAPHRASES for p in pair]
    v = minilm.encode([point_content(p) for p in points])
    sims = v @ v.T
    unlike = [sims[i, j] for i, j in itertools.combinations(range(len(points)), 2) if i // 2 != j // 2]
    alike = [sims[2 * k, 2 * k + 1] for k in range(len(PARAPHRASES))]
    assert max(unlike) < SAME_POINT
    assert np.mean(np.array(alike) >= SAME_POINT) >= 0.75


def test_the_frame_is_left_out_but_a_point_of_frame_only_is_kept():
    assert point_content("The proposal is about to be submitted.") == "about to be submitted."
    assert point_content("Ethical issues are not addressed in the proposal.") == "Ethical issues are not addressed."
    assert point_content("The proposal's data is public.") == "data is public."
    assert point_content("The proposal is.") == "The proposal is."
    # a line led by a concept (run/styles/stem.py): the concept is frame too
    assert point_content("The proposal's use of crime hotspots is not tied to data.") == "not tied to data."
    assert point_content("However, the proposal's use of WebArena is vague.") == "vague."


def test_two_unlike_points_on_one_concept_are_two_points(minilm):
    """Two reviewers led by the same concept say different things: they must not be counted
    as one point made by both (with the concept's name in, 0.55-0.64 with MiniLM)."""
    a = "The proposal's use of WebArena is very attractive and user-friendly."
    b = "The proposal's use of WebArena is important because it lets astronomers label spectra."
    v = minilm.encode([point_content(a), point_content(b)])
    assert float(v[0] @ v[1]) < SAME_POINT
