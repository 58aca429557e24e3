"""Writing one candidate from the shared drafts, led by its `Lead`, in either prompt style.

Drafts are written once per author (the run's `write` stage) and shared: what makes
candidates differ is the lead and the seed, so n candidates cost n merges, not n times
the drafts. The lead author's draft always comes first.

- chat (instruction models): the lead, in words, is part of the editor's instruction,
  and the drafts carry labels the editor cites, as in the plain aggregate.
- stem (base models): the lead is material, since a base model follows no instruction:
  the lead author's profile heads the document, the lead fields and concepts come first
  among the key concepts (so the seeded stems start from them), and only the lead
  author's own answers compete with the fresh continuations. A base model cites nothing.

Every call of candidate i carries seeds from `leads.seed_of(i)` on (`Seeded`), so two
candidates never share a sampled line and each call has its own cache entry. `Seeded`
also keeps the token log-probabilities the model returned (the fluency signal of the
base-model ranking; the embedded model gives them, hosted ones are not asked).
"""
from __future__ import annotations

import dataclasses

from ...models import registry
from ...text import clip
from ...types import Proposal
from .. import prompts
from ..styles import chat, stem
from ..styles.citations import draft_label
from ..styles.context import StageContext
from ..styles.grounding import Grounding
from ..styles.stem_facets import planned
from ..styles.stem_material import concepts_block, fields_phrase
from ..styles.stem_write import five_questions as stem_five_questions
from .leads import SEED_STEP, led_grounding


class Seeded:
    """The run's client seen by one candidate: every call's seed moved by `base`, and
    the log-probabilities of what the model sampled kept in `logprobs`."""

    def __init__(self, client, base: int):
        self._client = client
        self.base = base
        self.logprobs: list[float] = []

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    async def complete(self, messages, **kw):
        extra = dict(kw.pop("extra", None) or {})
        extra["seed"] = int(extra.get("seed", 0) or 0) + self.base
        res = await self._client.complete(messages, extra=extra, **kw)
        if res.logprobs:
            self.logprobs.extend(v for _, v in res.logprobs)
        return res


def seeded(ctx: StageContext, base: int) -> tuple[StageContext, Seeded]:
    client = Seeded(ctx.client, base)
    return dataclasses.replace(ctx, client=client), client


def lead_first(drafts: list[Proposal], author_ids: list[str]) -> list[Proposal]:
    lead = [d for d in drafts if d.author_id in author_ids]
    return lead + [d for d in drafts if d not in lead]


async def write_chat(ctx: StageContext, drafts: list[Proposal], lead_text: str, persona: str,
                     g: Grounding, lead) -> Proposal:
    # Labelled as in the plain aggregate, so the editor can cite what it takes; the labels
    # are checked and taken out by the caller (run/candidates/stages.py) before anyone reads them.
    text = "\n\n".join(f"Draft {i}: [{draft_label(i)}]\n{chat.format_proposal(d)}"
                       for i, d in enumerate(drafts, 1))
    msgs = prompts.load("candidates")["aggregate_led"].messages(drafts=text, lead=lead_text)
    merged = await chat.five_questions(ctx, msgs)
    merged.drafts = list(drafts)
    return merged


async def write_stem(ctx: StageContext, drafts: list[Proposal], lead_text: str, persona: str,
                     g: Grounding, lead) -> Proposal:
    # From the papers' facets when they pair: candidate i (its seed base, `Seeded`) takes
    # the i-th distinct pairing, so candidates differ by what they combine.
    plan = planned(ctx, g, index=max(0, getattr(ctx.client, "base", SEED_STEP) // SEED_STEP - 1))
    if plan is not None:
        plan.drafts = list(drafts)
        return plan
    led = led_grounding(g, lead)
    header = prompts.load("candidates")["aggregate_led_header"].render(
        fields=fields_phrase(led) or "several fields", concepts=concepts_block(led),
        lead=clip(persona or lead_text, 300))["text"]
    first = drafts[0] if drafts and drafts[0].author_id in lead.author_ids else None

    def per_question(key: str) -> tuple[str, list[str]]:
        ready = [getattr(d, key) for d in drafts if getattr(d, key)]
        ideas = [f"- Draft idea: {clip(a, 160)}" for a in ready[:3]]
        own = [getattr(first, key)] if first is not None and getattr(first, key) else []
        return ("Drafts:\n" + "\n".join(ideas) + "\n" if ideas else ""), own

    merged = await stem_five_questions(ctx, header, led, stem.MERGE_CANDIDATES, 0, per_question)
    merged.drafts = list(drafts)
    return merged


def writer_for(style: str):
    """The candidate writer of a prompt style: by stems for a style that completes them."""
    return write_stem if registry.traits(style).completes_stems else write_chat
