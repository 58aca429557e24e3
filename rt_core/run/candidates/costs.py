"""What the stages of several candidates and their tournament cost, from the sizes alone.

The same rules as run/pipeline/costs.py (calls without and with every re-ask, four characters a
token), for n candidates: n led merges of the shared drafts, the same k reviews and a
meta-review for each (an upper bound: merged near-duplicates are not reviewed), and the
judge's 2 P(n) calls (run/candidates/tournament.py), each re-asked at most once.
"""
from __future__ import annotations

from ...models import registry
from ..pipeline import costs
from ..pipeline.costs import CHARS_PER_TOKEN, MAX_REASKS, QUESTIONS, Calls, Sizes
from ..styles import stem
from .judging import planned_calls

JUDGE_REPLY = 150  # a reason of two or three sentences and the winner's line


def _times(c: Calls, n: int) -> Calls:
    return c.times(n)


def write_candidates(s: Sizes) -> Calls:
    if costs.from_facets(s):  # the i-th pairing, by template; then the merge's embedding
        return Calls(local=costs.FACETS_MERGE)
    if registry.traits(s.style).completes_stems:
        cand = stem.MERGE_CANDIDATES
        per = sum(cand.get(f"q{i}", cand["default"]) for i in range(1, QUESTIONS + 1))
        prompt = costs.STEM_HEADER + 3 * costs.STEM_LINE * 3
        return Calls(per * s.candidates, per * s.candidates * (MAX_REASKS + 1),
                     per * s.candidates * prompt, per * s.candidates * costs.STEM_WRITTEN)
    n = s.candidates  # the drafts and the lead (about 60 tokens) in every merge's prompt
    prompt = costs.template_tokens("aggregate") + s.authors * costs.CHAT_REPLY["draft"] + 60
    return Calls(n, n + n * QUESTIONS * MAX_REASKS, n * prompt, n * costs.CHAT_REPLY["aggregate"])


def review_candidates(s: Sizes) -> Calls:
    if costs.from_facets(s):
        return Calls(local=s.reviewers * costs.FACETS_REVIEW_MANY)
    return _times(costs.review(s), s.candidates)


def meta_review_candidates(s: Sizes) -> Calls:
    return _times(costs.meta_review(s), s.candidates)


def tournament(s: Sizes) -> Calls:
    if not s.judge or s.candidates < 2:
        return Calls()
    n = planned_calls(s.candidates)
    prompt = 250 + 2 * costs.CHAT_REPLY["aggregate"] * (4 // CHARS_PER_TOKEN)
    return Calls(n, 2 * n, n * prompt, n * JUDGE_REPLY)
