"""The two model passes of a study: restyling every proposal into one voice (as Si et al. do)
and the LLM judge that rates the same units as the humans (for judge calibration).

Both need an instruction model (prompt style "chat" in the model registry): the embedded base model can
neither rewrite in a given style nor answer in JSON, so restyling is skipped for it and the
judge refuses it. Replies are cached by the LLM client (the llm_cache table); restyled texts
are also stored on the study's items, next to the untouched originals.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..errors import InputError
from ..fiveq import QUESTIONS
from ..models import keys as key_rule
from ..models.client import LLMClient, ModelSettings
from ..models.registry import run_async
from ..run import prompts
from ..run.styles import parse
from .design import Criterion, StudyItem

Progress = Callable[[int, int], None] | None


def _format(answers: dict[str, str]) -> str:
    return "\n\n".join(f"{q.heading}\n{answers.get(q.key) or '(no answer)'}" for q in QUESTIONS)


def _rubric(criteria: tuple[Criterion, ...]) -> str:
    return "\n".join(f"- {c.name}: {c.question} (1 = {c.low}; 10 = {c.high})" for c in criteria)


def can_use(settings: ModelSettings) -> bool:
    return settings.traits.follows_instructions


def _check(settings: ModelSettings) -> None:
    """The one key rule (rt_core.models.keys), once, before the first of many calls."""
    key_rule.check(settings.model, settings.base_url, settings.api_key, settings.server_key)


def _tick(progress: Progress, total: int) -> Callable[[], None]:
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)
    return tick


# -- restyling ---------------------------------------------------------------------------------
def restyle(store, study_id: str, settings: ModelSettings, progress: Progress = None) -> dict:
    """Restyle every item of a study that nobody has rated yet. Returns counts; items whose
    rewrite lost a question keep their original text (never a half-rewritten proposal)."""
    if not can_use(settings):
        return {"skipped": True, "reason": "a base model cannot restyle text", "restyled": 0, "kept": 0}
    if store.studies.progress(study_id):
        raise InputError("raters have already joined this study",
                         "Restyle before sharing the link, so every rater sees the same text.")
    _check(settings)
    items = store.studies.items(study_id)
    client = LLMClient(settings, store=store)
    template = prompts.load("study")["restyle"]
    tick = _tick(progress, len(items))

    async def one(item: StudyItem) -> tuple[str, dict[str, str] | None]:
        reply = await client.complete(template.messages(proposal=_format(item.answers)), max_tokens=1200,
                                      temperature=0.0)
        tick()
        answers, missing = parse.parse_five_questions(reply.text)
        return item.item_id, None if missing else answers

    async def all_items():
        return await asyncio.gather(*(one(i) for i in items.values()))

    results = run_async(all_items())
    styled = {i: a for i, a in results if a is not None}
    store.studies.set_styled(study_id, styled)
    return {"skipped": False, "restyled": len(styled), "kept": len(results) - len(styled)}


# -- the judge -----------------------------------------------------------------------------------
def _score(value) -> int | None:
    s = parse.parse_score(str(value)) if value is not None else None
    return s if s is not None and 1 <= s <= 10 else None


def _choice(value) -> str | None:
    v = str(value or "").strip().strip('"').lower()
    return {"a": "left", "b": "right", "tie": "tie"}.get(v)


async def _ask(client: LLMClient, msgs: list[dict], read, keys: list[str], attempts: int = 2) -> dict:
    """JSON reply -> {key: value}; asks again (new seed) while any key is unreadable."""
    out: dict = {}
    for attempt in range(attempts):
        reply = await client.complete(msgs, max_tokens=300, temperature=0.0,
                                      extra={"seed": attempt, "response_format": {"type": "json_object"}})
        data = parse.json_object(reply.text) or {}
        for k in keys:
            if out.get(k) is None:
                out[k] = read(data.get(k))
        if all(out.get(k) is not None for k in keys):
            break
    return out


def run_judge(store, study_id: str, settings: ModelSettings, progress: Progress = None) -> dict:
    """The judge rates the study's units with the study's rubric: absolute studies item by item,
    pairwise studies every pair in both orders (so position bias shows). Gold pairs are left out."""
    if not can_use(settings):
        raise InputError("the LLM judge needs an instruction-following model",
                         "Choose a hosted or Ollama model (e.g. gpt-4o-mini) on the Run page.")
    _check(settings)
    study = store.studies.get(study_id)
    criteria = study["settings"].criteria
    keys = [c.name for c in criteria]
    rubric, key_text = _rubric(criteria), ", ".join(keys)
    items = store.studies.items(study_id)
    units = [u for u in store.studies.units(study_id) if u.gold_item is None]
    client = LLMClient(settings, store=store)
    study_prompts = prompts.load("study")
    jobs = []
    for u in units:
        if u.item_b is None:
            jobs.append((u.unit_id, u.item_a, ""))
        else:
            jobs += [(u.unit_id, u.item_a, u.item_b), (u.unit_id, u.item_b, u.item_a)]
    tick = _tick(progress, len(jobs))

    async def one(unit_id: str, left: str, right: str) -> list[dict]:
        if right:
            msgs = study_prompts["judge_pair"].messages(rubric=rubric, keys=key_text,
                                                        first=_format(items[left].shown()),
                                                        second=_format(items[right].shown()))
            got = await _ask(client, msgs, _choice, keys)
            rows = [{"choice": got.get(k)} for k in keys]
        else:
            msgs = study_prompts["judge_item"].messages(rubric=rubric, keys=key_text,
                                                        proposal=_format(items[left].shown()))
            got = await _ask(client, msgs, _score, keys)
            rows = [{"score": got.get(k)} for k in keys]
        tick()
        return [{**r, "unit_id": unit_id, "shown_left": left, "shown_right": right, "criterion": k}
                for r, k in zip(rows, keys, strict=True)]

    async def all_jobs():
        return await asyncio.gather(*(one(*j) for j in jobs))

    rows = [r for group in run_async(all_jobs()) for r in group]
    store.studies.save_judge(study_id, settings.model, rows)
    unanswered = sum(1 for r in rows if r.get("score") is None and r.get("choice") is None)
    return {"model": settings.model, "calls": len(jobs), "answers": len(rows), "unanswered": unanswered}
