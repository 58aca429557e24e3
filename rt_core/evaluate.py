"""Comparing a generated proposal (and reviews) with a reference, as in node masking.

- Proposal similarity: cosine of each question's answer to the reference's, and the mean.
- Review similarity: both reviews as bullet lists; for each reference bullet the best
  cosine to any generated bullet, averaged (a recall), for strengths and weaknesses.
- Delta S: |generated score - reference score|.
- LLM judge: consistency, novelty and feasibility scores in one JSON reply.
"""
from __future__ import annotations

import numpy as np

from . import parse, prompts
from .embed import Embedder
from .errors import InputError
from .stages import StageContext, format_proposal
from .types import QUESTION_KEYS, Proposal, Similarity


def proposal_similarity(embedder: Embedder, generated: Proposal, reference: Proposal) -> Similarity:
    """Per-question cosine and the mean over questions both sides answered."""
    pairs = [(k, getattr(generated, k), getattr(reference, k)) for k in QUESTION_KEYS]
    usable = [(k, g, r) for k, g, r in pairs if g.strip() and r.strip()]
    if not usable:
        raise InputError("the proposals share no answered question to compare",
                         "Check that both texts use the five-question format.")
    vecs = embedder.encode([g for _, g, _ in usable] + [r for _, _, r in usable])
    n = len(usable)
    per = {k: round(float(np.dot(vecs[i], vecs[n + i])), 4) for i, (k, _, _) in enumerate(usable)}
    mean = round(float(np.mean(list(per.values()))), 4)
    return Similarity(per_question=per, mean=mean, embedder=embedder.name, reference=reference)


def bullet_recall(embedder: Embedder, generated: list[str], reference: list[str]) -> float | None:
    """Mean over reference points of the best cosine to any generated point."""
    if not generated or not reference:
        return None
    vecs = embedder.encode(reference + generated)
    ref, gen = vecs[:len(reference)], vecs[len(reference):]
    return round(float(np.mean(np.max(ref @ gen.T, axis=1))), 4)


async def to_bullets(ctx: StageContext | None, text: str) -> list[str]:
    """Rewrite review text as separate points (with the model when one is given)."""
    if ctx is not None and ctx.style == "chat" and text.strip():
        reply = await ctx.chat(prompts.load("chat")["bullets"].messages(text=text), max_tokens=800)
        points = parse.split_bullets(reply)
        if points:
            return points
    return parse.split_bullets(text)


async def review_similarity(ctx: StageContext | None, embedder: Embedder,
                            generated: dict, reference: dict) -> dict:
    """generated/reference: {'strengths': str, 'weaknesses': str, 'score': number|None}."""
    out: dict[str, float | None] = {}
    for part in ("strengths", "weaknesses"):
        gen = await to_bullets(ctx, str(generated.get(part) or ""))
        ref = await to_bullets(ctx, str(reference.get(part) or ""))
        out[part] = bullet_recall(embedder, gen, ref)
    gs, rs = generated.get("score"), reference.get("score")
    out["delta_s"] = round(abs(float(gs) - float(rs)), 3) if gs is not None and rs is not None else None
    return out


JUDGE_KEYS = ("topic", "method", "factual", "claim", "application_context", "overall",
              "novelty_reference", "feasibility_reference", "novelty_generated",
              "feasibility_generated")


async def judge(ctx: StageContext, reference: Proposal, generated: Proposal) -> dict:
    """LLM-judge scores (1-10) in one JSON reply; keys it left out come back as None."""
    msgs = prompts.load("chat")["judge"].messages(reference=format_proposal(reference, "chat"),
                                                  generated=format_proposal(generated, "chat"))
    data = None
    for attempt in range(ctx.max_reasks + 1):
        reply = await ctx.chat(msgs, max_tokens=500, extra={"seed": attempt, "response_format":
                                                             {"type": "json_object"}})
        data = parse.parse_judge(reply)
        if data:
            break
    data = data or {}
    scores = {}
    for k in JUDGE_KEYS:
        v = parse.parse_score(str(data.get(k))) if data.get(k) is not None else None
        scores[k] = v
    scores["rationale"] = str(data.get("rationale") or "")
    return scores
