"""Stages for instruction-following (chat) models.

A chat model answers a whole format in one reply. A reply that lacks a part is
asked again for that part only (bounded by ctx.max_reasks); a part that never
arrives is listed in `missing`, never left blank silently. `run.stem` has the
same functions for base models: both implement `run.style.PromptStyle`.
"""
from __future__ import annotations

from ... import fiveq
from ...text import clip
from ...types import MetaReview, Paper, Profile, Proposal, Review
from . import parse
from .citations import draft_label
from .context import NEUTRAL_PERSONA, NEUTRAL_REVIEWER, NO_PAPERS, StageContext

REVIEW_SCHEMA = {
    "name": "review",
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["strengths", "weaknesses", "score"],
               "properties": {"strengths": {"type": "array", "items": {"type": "string"}},
                              "weaknesses": {"type": "array", "items": {"type": "string"}},
                              "score": {"type": "integer", "minimum": 1, "maximum": 10}}},
    "strict": True,
}
_REVIEW_PARTS = {"strengths": "the Strengths part (bullet points)",
                 "weaknesses": "the Weaknesses part (bullet points)",
                 "score": "the Score: one whole number from 1 to 10"}


async def ask(ctx: StageContext, messages: list[dict], max_tokens: int = 900, **kw) -> str:
    ctx.check_cancel()
    return (await ctx.client.complete(messages, max_tokens=max_tokens, **kw)).text


def format_papers(papers: list[Paper], budget_chars: int = 12000) -> str:
    if not papers:
        return NO_PAPERS
    per = max(300, budget_chars // len(papers))
    return "\n\n".join(f"Title: {p.title}" + (f" ({p.year})" if p.year else "") +
                       f"\nAbstract: {clip(p.abstract, per) or '(no abstract)'}" for p in papers)


def format_prior(titles: list[str] | None) -> str:
    """The novelty check's nearest papers for a reviewer ('' without a check, so the
    prompt is then exactly what it was before the check existed)."""
    if not titles:
        return ""
    return ("\n\nThe closest published work a literature search found for this proposal:\n"
            + "\n".join(f"- {t}" for t in titles))


def format_proposal(p: Proposal) -> str:
    return "\n\n".join(f"{q.heading}\n{getattr(p, q.key) or '(missing)'}" for q in fiveq.QUESTIONS)


async def _reask(ctx: StageContext, msgs: list[dict], reply: str, part: str,
                 accept=lambda text: text.strip()):
    """Ask again for one missing part; the value `accept` makes of the first usable answer,
    or None. Each re-ask carries a new seed, so it is a new request and a new cache entry."""
    ask_msgs = ctx.prompts["ask_missing"].messages(part=part)
    for attempt in range(1, ctx.max_reasks + 1):
        extra = await ask(ctx, msgs + [{"role": "assistant", "content": reply}] + ask_msgs,
                          max_tokens=400, extra={"seed": attempt})
        value = accept(extra)
        if value:
            return value
    return None


async def five_questions(ctx: StageContext, msgs: list[dict]) -> Proposal:
    reply = await ask(ctx, msgs, max_tokens=1400, json_schema=fiveq.json_schema())
    answers, missing = parse.parse_five_questions(reply)
    for key in list(missing):
        q = fiveq.BY_KEY[key]
        value = await _reask(ctx, msgs, reply, f"the answer to Question {q.number} ({q.title})",
                             strip_heading)
        if value:
            answers[key] = value
            missing.remove(key)
    return Proposal(**answers, missing=missing)


def strip_heading(text: str) -> str:
    """A re-asked part sometimes comes back with its heading; keep the whole answer."""
    return parse.strip_heading(text)


async def read_profile(ctx: StageContext, researcher_id: str, name: str,
                       papers: list[Paper]) -> Profile:
    """A first-person persona from the researcher's publications."""
    if not papers:
        return Profile(researcher_id, "", ctx.client.settings.model, [], missing=True)
    msgs = ctx.prompts["profile"].messages(name=name, papers=format_papers(papers, 8000))
    text = ""
    for attempt in range(ctx.max_reasks + 1):
        text = (await ask(ctx, msgs, max_tokens=600,
                          extra={"seed": attempt} if attempt else None)).strip()
        if len(text.split()) >= 10:
            break
        text = ""
    return Profile(researcher_id, text, ctx.client.settings.model, [p.id for p in papers],
                   missing=not text)


async def write_draft(ctx: StageContext, persona: str | None, papers: list[Paper],
                      author_id: str = "") -> Proposal:
    """One agent's 5Q draft from its persona (if any) and all chosen papers."""
    msgs = ctx.prompts["draft"].messages(persona=persona or NEUTRAL_PERSONA,
                                         papers=format_papers(papers),
                                         questions=fiveq.headings(with_guidance=True))
    draft = await five_questions(ctx, msgs)
    draft.author_id = author_id
    return draft


async def aggregate(ctx: StageContext, drafts: list[Proposal]) -> Proposal:
    """The global agent merges the drafts into one proposal (skipped for a single draft)."""
    if len(drafts) == 1:
        d = drafts[0]
        return Proposal(**d.answers(), missing=list(d.missing), drafts=[d])
    text = "\n\n".join(f"Draft {i}: [{draft_label(i)}]\n{format_proposal(d)}" for i, d in enumerate(drafts, 1))
    merged = await five_questions(ctx, ctx.prompts["aggregate"].messages(drafts=text))
    merged.drafts = list(drafts)
    return merged


async def review(ctx: StageContext, reviewer_id: str, persona: str | None, proposal: Proposal,
                 papers: list[Paper], prior: list[str] | None = None) -> Review:
    msgs = ctx.prompts["review"].messages(persona=persona or NEUTRAL_REVIEWER,
                                          proposal=format_proposal(proposal),
                                          papers=format_papers(papers, 6000),
                                          prior_work=format_prior(prior))
    reply = await ask(ctx, msgs, max_tokens=900, json_schema=REVIEW_SCHEMA)
    data, missing = parse.parse_review(reply)
    for part in list(missing):
        accept = parse.parse_score if part == "score" else (lambda t: t.strip())
        value = await _reask(ctx, msgs, reply, _REVIEW_PARTS[part], accept)
        if value:
            data[part] = value
            missing.remove(part)
    return Review(reviewer_id, str(data.get("strengths") or ""), str(data.get("weaknesses") or ""),
                  data.get("score"), missing)


def reviews_text(reviews: list[Review], limit: int = 2500) -> str:
    return "\n\n".join(f"Reviewer {i}:\nStrengths: {clip(r.strengths, limit)}\n"
                       f"Weaknesses: {clip(r.weaknesses, limit)}\nScore: {r.score}"
                       for i, r in enumerate(reviews, 1))


def mean_score(reviews: list[Review]) -> float | None:
    scores = [r.score for r in reviews if r.score is not None]
    return round(sum(scores) / len(scores), 2) if scores else None


async def meta_review(ctx: StageContext, proposal: Proposal, reviews: list[Review]) -> MetaReview:
    """The chair reads the proposal and summarises the reviews' strengths and weaknesses;
    the score is the reviewers' mean."""
    reply = await ask(ctx, ctx.prompts["meta_review"].messages(proposal=format_proposal(proposal),
                                                               reviews=reviews_text(reviews)))
    data, missing = parse.parse_review(reply)
    missing = [m for m in missing if m != "score"]
    return MetaReview(str(data.get("strengths") or ""), str(data.get("weaknesses") or ""),
                      mean_score(reviews), missing)


async def reference_to_5q(ctx: StageContext, paper: Paper) -> Proposal:
    msgs = ctx.prompts["reference_5q"].messages(title=paper.title, text=clip(paper.abstract, 12000),
                                                questions=fiveq.headings())
    return await five_questions(ctx, msgs)
