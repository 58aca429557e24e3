"""One line of a document, completed by a base model and cleaned.

Every stem-style stage (run.stem) asks for one line at a time: the line's seed and the
cuts that keep one answer (run-ons into the next point, invented contact details,
trailing fragments, cut at whole sentences by run/styles/trim.py) live here, so writing
and reviewing complete lines the same way.
The sampling that keeps a tiny model from looping is the model's own, declared once in
the registry.
"""
from __future__ import annotations

import re

from ... import fiveq
from ...models import registry
from .context import StageContext
from .trim import whole_sentences

SCORE_GRAMMAR = 'root ::= " "? ([1-9] | "10")'
# A base model sometimes runs on into the next numbered point on the same line.
_RUN_ON = re.compile(r"(?:^|\s)(?:\d\.|\(\d\))\s+[A-Z][\w ]{2,40}:|\s\d\.\s+(?:Research question|Why)\b"
                     r"|\s\d[a-z]?:\s")  # ("... alpine flora . 2a: What are ...")
# Contact details a small model invents ("(e-mail address: someone@example.com)"): never
# a point about the proposal, and misleading to a reader.
_CONTACT = re.compile(r"\s*\([^()]*(?:@|https?://|www\.)[^()]*\)|\s*\S+@\S+\.\w+|\s*(?:https?://|www\.)\S+")


async def line(ctx: StageContext, document: str, max_tokens: int = 60, attempt: int = 0,
               grammar: str | None = None, stop: tuple[str, ...] = (), sentence_words: int = 0) -> str:
    """Complete one line of a document at the run's temperature. Each attempt (retry or
    sampled candidate) has its own seed, so candidates differ and each is cached alone.
    `stop`: more places to stop than the line's end; `sentence_words`: stop at the first
    sentence end after this many words, where the model can (registry.sentence_stop)."""
    return (await _complete(ctx, document, max_tokens, attempt, grammar, stop, False, sentence_words))[0]


async def fluent_line(ctx: StageContext, document: str, max_tokens: int = 60, attempt: int = 0,
                      stop: tuple[str, ...] = ()) -> tuple[str, float | None]:
    """Like `line`, with the line's fluency: the model's mean log-probability per token of
    the text kept (None when the model or the cache gave no log-probabilities)."""
    return await _complete(ctx, document, max_tokens, attempt, None, stop, True)


async def _complete(ctx: StageContext, document: str, max_tokens: int, attempt: int,
                    grammar: str | None, stop: tuple[str, ...], logprobs: bool, sentence_words: int = 0
                    ) -> tuple[str, float | None]:
    ctx.check_cancel()
    extra: dict = {"seed": attempt}  # sampling defaults: the model's, from the registry
    extra.update(registry.sentence_stop(ctx.client.settings.model, sentence_words))
    if grammar:
        extra["grammar"] = grammar
    if logprobs:
        extra["logprobs"] = True
    res = await ctx.client.complete([{"role": "user", "content": document}],
                                    max_tokens=max_tokens, stop=["\n", *stop], extra=extra)
    text = clean_line(res.text)
    return text, mean_logprob(res.logprobs, len(text))


def mean_logprob(logprobs, kept_chars: int) -> float | None:
    """Mean log-probability of the tokens that make up the first `kept_chars` characters
    of the reply (leading spaces aside): what cleaning cut off does not count."""
    if not logprobs:
        return None
    values, seen = [], 0
    for i, (token, value) in enumerate(logprobs):
        if seen >= kept_chars and values:
            break
        seen += len(token.lstrip()) if i == 0 else len(token)
        values.append(value)
    return sum(values) / len(values)


def next_point(q: fiveq.Question) -> tuple[str, ...]:
    """Where an answer to q has run on into the next numbered point on its own line
    ("... survey design? 2. Research hypothesis: ..."): stopping there, rather than
    cutting afterwards, saves the tokens a run-on costs (up to the whole budget)."""
    return (f" {q.number + 1}. ",) if q.number < len(fiveq.QUESTIONS) else ()


def clean_line(text: str) -> str:
    """Keep one answer: cut run-ons into the next point, invented contact details and
    trailing fragments."""
    text = _CONTACT.sub("", (text or "")).strip()
    m = _RUN_ON.search(text)
    if m:
        text = text[:m.start()].strip()
    return re.sub(r"\s+([.?!])$", r"\1", whole_sentences(text))
