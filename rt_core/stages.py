"""The three stages — reading, writing, reviewing — for one agent call each.

Two prompt styles share one structure:
- chat: instruction models answer the whole format in one reply; a reply that
  lacks a part is asked again for that part only (bounded);
- stem: base models (the bundled 270M) complete one document line per part,
  from a sentence stem, with earlier answers kept in the prompt.
Either way a part that never arrives is listed in `missing`, never left blank silently.
"""
from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from typing import Callable

from . import parse, prompts
from .errors import CancelledRun
from .llm import LLMClient
from .types import (QUESTION_KEYS, QUESTION_TITLES, MetaReview, Paper, ProgressEvent, Profile,
                    Proposal, Review)

NEUTRAL_PERSONA = "You are a careful scientist writing a research proposal."
NO_PAPERS = "(No related papers were given.)"
STEM_SAMPLING = {"frequency_penalty": 0.5, "repeat_penalty": 1.3, "top_p": 0.95}


@dataclass
class StageContext:
    client: LLMClient
    on_progress: Callable[[ProgressEvent], None] = lambda e: None
    cancel: threading.Event = field(default_factory=threading.Event)
    max_reasks: int = 2

    @property
    def style(self) -> str:
        return self.client.settings.style

    @property
    def prompts(self) -> prompts.PromptSet:
        return prompts.load(self.style)

    def check_cancel(self) -> None:
        if self.cancel.is_set():
            raise CancelledRun("the run was cancelled", "Finished parts are kept; start again to resume.")

    async def chat(self, messages: list[dict], max_tokens: int = 900, **kw) -> str:
        self.check_cancel()
        return (await self.client.complete(messages, max_tokens=max_tokens, **kw)).text

    async def line(self, document: str, max_tokens: int = 60, attempt: int = 0,
                   grammar: str | None = None) -> str:
        """Complete one line of a document (stem style). Retries vary the seed."""
        self.check_cancel()
        extra: dict = dict(STEM_SAMPLING, seed=attempt)
        if grammar:
            extra["grammar"] = grammar
        res = await self.client.complete([{"role": "user", "content": document}],
                                         max_tokens=max_tokens, stop=["\n"], temperature=0.7,
                                         extra=extra)
        return clean_line(res.text)


SCORE_GRAMMAR = 'root ::= " "? ([1-9] | "10")'
# A base model sometimes runs on into the next numbered point on the same line.
_RUN_ON = re.compile(r"\s(?:\d\.|\(\d\))\s+[A-Z][\w ]{2,40}:|\s\d\.\s+(?:Research question|Why)\b")


def clean_line(text: str) -> str:
    """Keep one answer: cut run-ons into the next point and trailing fragments."""
    text = (text or "").strip()
    m = _RUN_ON.search(text)
    if m:
        text = text[:m.start()].strip()
    if text and text[-1] not in ".?!" and re.search(r"[.?!]", text):
        text = text[:max(text.rfind("."), text.rfind("?"), text.rfind("!")) + 1]
    return text


# -- formatting inputs ---------------------------------------------------------------

def _clip(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _first_sentence(text: str, limit: int = 180) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return _clip(m.group(1) if m else text, limit)


def format_papers(papers: list[Paper], style: str, budget_chars: int = 12000) -> str:
    if not papers:
        return NO_PAPERS
    if style == "stem":  # a small model reads ~190 tok/s: keep it short
        return "\n".join(f"- {_clip(p.title, 110)}: {_first_sentence(p.abstract, 160)}" for p in papers[:5])
    per = max(300, budget_chars // len(papers))
    return "\n\n".join(f"Title: {p.title}" + (f" ({p.year})" if p.year else "") +
                       f"\nAbstract: {_clip(p.abstract, per) or '(no abstract)'}" for p in papers)


def format_proposal(p: Proposal, style: str) -> str:
    if style == "stem":
        return "\n".join(f"{i}. {_clip(getattr(p, k), 220)}"
                         for i, k in enumerate(QUESTION_KEYS, 1) if getattr(p, k))
    return "\n\n".join(f"[Question {i}] {QUESTION_TITLES[k]}\n{getattr(p, k) or '(missing)'}"
                       for i, k in enumerate(QUESTION_KEYS, 1))


def papers_key(paper_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(paper_ids).encode()).hexdigest()[:16]


def select_publications(papers: list[Paper], cutoff_year: int | None, exclude: set[str],
                        limit: int) -> list[Paper]:
    """Newest first, none after the cut-off year, never an excluded (target) paper."""
    kept = [p for p in papers if p.id not in exclude and
            (cutoff_year is None or p.year is None or p.year <= cutoff_year)]
    kept.sort(key=lambda p: (p.year or 0), reverse=True)
    return kept[:limit]


# -- reading -------------------------------------------------------------------------

async def read_profile(ctx: StageContext, researcher_id: str, name: str,
                       papers: list[Paper]) -> Profile:
    """A first-person persona from the researcher's publications."""
    style = ctx.style
    if not papers:
        return Profile(researcher_id, "", ctx.client.settings.model, [], missing=True)
    paper_text = format_papers(papers, style, budget_chars=8000)
    text = ""
    if style == "stem":
        doc = ctx.prompts["profile"].render(name=name, papers=paper_text)["text"].rstrip()
        for attempt in range(ctx.max_reasks + 1):
            out = (await ctx.line(doc, max_tokens=60, attempt=attempt)).strip()
            if len(out.split()) >= 4:
                text = "I am a researcher who " + out
                break
    else:
        msgs = ctx.prompts["profile"].messages(name=name, papers=paper_text)
        for attempt in range(ctx.max_reasks + 1):
            text = (await ctx.chat(msgs, max_tokens=600, extra={"seed": attempt} if attempt else None)).strip()
            if len(text.split()) >= 10:
                break
            text = ""
    return Profile(researcher_id, text, ctx.client.settings.model, [p.id for p in papers],
                   missing=not text)


# -- writing -------------------------------------------------------------------------

async def _chat_five_questions(ctx: StageContext, msgs: list[dict]) -> Proposal:
    reply = await ctx.chat(msgs, max_tokens=1400, json_schema=FIVE_Q_SCHEMA)
    answers, missing = parse.parse_five_questions(reply)
    for key in list(missing):
        n = QUESTION_KEYS.index(key) + 1
        ask = prompts.load("chat")["ask_missing"].messages(
            part=f"the answer to Question {n} ({QUESTION_TITLES[key]})")
        for attempt in range(1, ctx.max_reasks + 1):
            # The seed makes each re-ask a new request (and a new cache entry).
            extra = await ctx.chat(msgs + [{"role": "assistant", "content": reply}] + ask,
                                   max_tokens=400, extra={"seed": attempt})
            extra = _strip_heading(extra)
            if extra:
                answers[key] = extra
                missing.remove(key)
                break
    return Proposal(**answers, missing=missing)


def _strip_heading(text: str) -> str:
    """A re-asked part sometimes comes back with its heading; keep only the answer."""
    found, _ = parse.parse_five_questions(text)
    body = next((v for v in found.values() if v), "")
    return (body or text).strip()


async def _stem_five_questions(ctx: StageContext, header: str,
                               per_question_context: Callable[[str], str] | None = None) -> Proposal:
    stems = ctx.prompts.stems
    answers: dict[str, str] = {}
    missing = []
    done_lines: list[str] = []
    for key in QUESTION_KEYS:
        stem = stems[key]
        label, _, lead = stem.partition(": ")
        extra_ctx = per_question_context(key) if per_question_context else ""
        doc = header.rstrip() + "\n" + extra_ctx + "\n".join(done_lines + [stem])
        answer = ""
        for attempt in range(ctx.max_reasks + 1):
            out = (await ctx.line(doc, max_tokens=56, attempt=attempt)).strip()
            if len(out.split()) >= 3:
                answer = f"{lead} {out}".strip()
                break
        if answer:
            answers[key] = answer
            done_lines.append(f"{label}: {answer}")
        else:
            missing.append(key)
    return Proposal(**answers, missing=missing)


async def write_draft(ctx: StageContext, persona: str | None, papers: list[Paper],
                      author_id: str = "") -> Proposal:
    """One agent's 5Q draft from its persona (if any) and all chosen papers (one call)."""
    style = ctx.style
    paper_text = format_papers(papers, style)
    if style == "stem":
        header = ctx.prompts["draft_header"].render(
            persona=_clip(persona or "a scientist", 500), papers=paper_text)["text"]
        draft = await _stem_five_questions(ctx, header)
    else:
        msgs = ctx.prompts["draft"].messages(persona=persona or NEUTRAL_PERSONA, papers=paper_text)
        draft = await _chat_five_questions(ctx, msgs)
    draft.author_id = author_id
    return draft


def _drafts_text(drafts: list[Proposal], style: str) -> str:
    return "\n\n".join(f"Draft {i}:\n{format_proposal(d, style)}" for i, d in enumerate(drafts, 1))


async def aggregate(ctx: StageContext, drafts: list[Proposal]) -> Proposal:
    """The global agent merges the drafts into one proposal (skipped for a single draft)."""
    if len(drafts) == 1:
        d = drafts[0]
        return Proposal(**d.answers(), missing=list(d.missing), drafts=[d])
    style = ctx.style
    if style == "stem":
        header = ctx.prompts["aggregate_header"].render(drafts="(see the points below)")["text"]

        def per_question(key: str) -> str:
            i = QUESTION_KEYS.index(key) + 1
            ideas = [f"- Draft idea: {_clip(getattr(d, key), 200)}" for d in drafts if getattr(d, key)]
            return f"Point {i} in the drafts:\n" + "\n".join(ideas) + "\n" if ideas else ""

        merged = await _stem_five_questions(ctx, header, per_question)
    else:
        msgs = ctx.prompts["aggregate"].messages(drafts=_drafts_text(drafts, style))
        merged = await _chat_five_questions(ctx, msgs)
    merged.drafts = list(drafts)
    return merged


# -- reviewing -----------------------------------------------------------------------

async def review(ctx: StageContext, reviewer_id: str, persona: str | None, proposal: Proposal,
                 papers: list[Paper]) -> Review:
    style = ctx.style
    if style == "stem":
        return await _stem_review(ctx, reviewer_id, persona, proposal)
    msgs = ctx.prompts["review"].messages(persona=persona or NEUTRAL_PERSONA.replace(
        "writing a research proposal", "reviewing research proposals"),
        proposal=format_proposal(proposal, style), papers=format_papers(papers, style, 6000))
    reply = await ctx.chat(msgs, max_tokens=900, json_schema=REVIEW_SCHEMA)
    data, missing = parse.parse_review(reply)
    for part in list(missing):
        what = {"strengths": "the Strengths part (bullet points)",
                "weaknesses": "the Weaknesses part (bullet points)",
                "score": "the Score: one whole number from 1 to 10"}[part]
        ask = prompts.load("chat")["ask_missing"].messages(part=what)
        for attempt in range(1, ctx.max_reasks + 1):
            extra = (await ctx.chat(msgs + [{"role": "assistant", "content": reply}] + ask,
                                    max_tokens=400, extra={"seed": attempt})).strip()
            value = parse.parse_score(extra) if part == "score" else extra
            if value:
                data[part] = value
                missing.remove(part)
                break
    return Review(reviewer_id, str(data.get("strengths") or ""), str(data.get("weaknesses") or ""),
                  data.get("score"), missing)


async def _stem_review(ctx: StageContext, reviewer_id: str, persona: str | None,
                       proposal: Proposal) -> Review:
    stems = ctx.prompts.stems
    doc = ctx.prompts["review_header"].render(persona=_clip(persona or "an experienced scientist", 400),
                                              proposal=format_proposal(proposal, "stem"))["text"].rstrip()
    parts, missing, doc = await _stem_parts(ctx, doc, [(k, stems[k]) for k in ("strengths",
                                                                                "weaknesses")])
    score = None
    for attempt in range(ctx.max_reasks + 1):
        out = await ctx.line(doc + "\n" + stems["score"], max_tokens=3, attempt=attempt,
                             grammar=SCORE_GRAMMAR)
        score = parse.parse_score(out)
        if score is not None:
            break
    if score is None:
        missing.append("score")
    return Review(reviewer_id, parts.get("strengths", ""), parts.get("weaknesses", ""), score, missing)


async def _stem_parts(ctx: StageContext, doc: str, stems: list[tuple[str, str]]
                      ) -> tuple[dict[str, str], list[str], str]:
    """Complete one bullet per stem, each after the ones before; returns (parts, missing, doc)."""
    parts: dict[str, str] = {}
    missing = []
    for key, stem in stems:
        label, _, lead = stem.partition(": ")
        for attempt in range(ctx.max_reasks + 1):
            out = (await ctx.line(doc + "\n" + stem, max_tokens=70, attempt=attempt)).strip()
            if len(out.split()) >= 3:
                parts[key] = f"- {lead} {out}"
                doc += f"\n{label}: {lead} {out}"
                break
        else:
            missing.append(key)
    return parts, missing, doc


def _reviews_text(reviews: list[Review], style: str) -> str:
    limit = 300 if style == "stem" else 2500
    return "\n\n".join(f"Reviewer {i}:\nStrengths: {_clip(r.strengths, limit)}\n"
                       f"Weaknesses: {_clip(r.weaknesses, limit)}\nScore: {r.score}"
                       for i, r in enumerate(reviews, 1))


async def meta_review(ctx: StageContext, reviews: list[Review]) -> MetaReview:
    """The chair summarises strengths and weaknesses; the score is the reviewers' mean."""
    scores = [r.score for r in reviews if r.score is not None]
    mean = round(sum(scores) / len(scores), 2) if scores else None
    style = ctx.style
    if style == "stem":
        doc = ctx.prompts["meta_header"].render(reviews=_reviews_text(reviews, style))["text"].rstrip()
        parts, missing, _ = await _stem_parts(
            ctx, doc, [(k, ctx.prompts.stems[f"meta_{k}"]) for k in ("strengths", "weaknesses")])
        return MetaReview(parts.get("strengths", ""), parts.get("weaknesses", ""), mean, missing)
    msgs = ctx.prompts["meta_review"].messages(reviews=_reviews_text(reviews, style))
    reply = await ctx.chat(msgs, max_tokens=900)
    data, missing = parse.parse_review(reply)
    missing = [m for m in missing if m != "score"]
    return MetaReview(str(data.get("strengths") or ""), str(data.get("weaknesses") or ""), mean,
                      missing)


# -- reference paper to 5Q (for evaluation) ----------------------------------------------

async def reference_to_5q(ctx: StageContext, paper: Paper) -> Proposal:
    style = ctx.style
    if style == "stem":
        header = ctx.prompts["reference_header"].render(title=paper.title,
                                                        text=_clip(paper.abstract, 1200))["text"]
        return await _stem_five_questions(ctx, header)
    msgs = ctx.prompts["reference_5q"].messages(title=paper.title, text=_clip(paper.abstract, 12000))
    return await _chat_five_questions(ctx, msgs)


FIVE_Q_SCHEMA = {
    "name": "five_question_proposal",
    "schema": {"type": "object", "additionalProperties": False,
               "required": list(QUESTION_KEYS),
               "properties": {k: {"type": "string", "description": QUESTION_TITLES[k]}
                              for k in QUESTION_KEYS}},
    "strict": True,
}
REVIEW_SCHEMA = {
    "name": "review",
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["strengths", "weaknesses", "score"],
               "properties": {"strengths": {"type": "array", "items": {"type": "string"}},
                              "weaknesses": {"type": "array", "items": {"type": "string"}},
                              "score": {"type": "integer", "minimum": 1, "maximum": 10}}},
    "strict": True,
}
