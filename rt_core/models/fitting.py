"""The one rule for fitting a prompt into a model's context window.

While the prompt is too long, the longest message loses the middle of its text: its first
60% and last 40% are kept, so the instructions that open a prompt and the question (or
the sentence stem) that closes it survive, and a marker says how many characters went.
The client applies it to every call with a generous token estimate (`fit_messages`); the
embedded model re-applies the same rule with its own tokenizer as a last guard
(`fit_text`), since its window is small.
"""
from __future__ import annotations

import math
from collections.abc import Callable

CUT_MARK = "\n[... {n:,} characters cut here to fit the model's context window ...]\n"
HEAD_SHARE = 0.6  # of what is kept, this share comes from the start; the rest from the end
REPLY_MARGIN = 64  # tokens kept free besides the reply (role markers, template)


def estimate_tokens(text: str) -> int:
    """A deliberately generous token estimate without a tokenizer: one token per three
    ASCII characters, one per other character (CJK, Cyrillic, emoji...)."""
    # Encoding drops exactly the characters at or above 128: the same count as testing
    # each one, without a Python loop over every character of every prompt (it ran
    # twice per call, on the event loop, before each request went out).
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def prompt_budget(context: int, max_tokens: int) -> int:
    """Tokens a prompt may use in a window of `context` tokens with `max_tokens` of reply."""
    return max(256, context - max_tokens - REPLY_MARGIN)


def cut_middle(text: str, drop: int) -> str:
    """The text without `drop` characters from its middle (by the rule above), marked."""
    drop = min(len(text), drop)
    keep = len(text) - drop
    head = math.floor(keep * HEAD_SHARE)
    mark = CUT_MARK.format(n=drop)
    return text[:head] + mark + text[len(text) - (keep - head):] if keep > 0 else mark


def fit_text(text: str, budget: int, count: Callable[[str], int] = estimate_tokens) -> str:
    """One text cut (by the rule) until `count` says it fits `budget` tokens."""
    for _ in range(8):
        total = count(text)
        if total <= budget:
            break
        per_char = max(count(text) / max(1, len(text)), 1e-3)
        text = cut_middle(text, math.ceil((total - budget) / per_char) + 80)
    return text


def fit_messages(messages: list[dict], context: int, max_tokens: int) -> tuple[list[dict], str]:
    """The messages cut to fit `context` tokens, leaving room for `max_tokens` of reply.
    Returns the messages and a note for the run ('' when nothing was cut)."""
    budget = prompt_budget(context, max_tokens)

    def size(msgs: list[dict]) -> int:
        return sum(estimate_tokens(str(m.get("content") or "")) for m in msgs)

    if size(messages) <= budget:
        return messages, ""
    out = [dict(m) for m in messages]
    before = sum(len(str(m.get("content") or "")) for m in out)
    for _ in range(8):
        total = size(out)
        if total <= budget:
            break
        i = max(range(len(out)), key=lambda j: len(str(out[j].get("content") or "")))
        text = str(out[i].get("content") or "")
        per_char = max(estimate_tokens(text) / max(1, len(text)), 1e-3)
        out[i]["content"] = cut_middle(text, math.ceil((total - budget) / per_char) + 80)
    after = sum(len(str(m.get("content") or "")) for m in out)
    note = (f"A prompt of {before:,} characters was cut to {after:,} to fit the model's context "
            f"window of {context:,} tokens (the middle of its longest part was left out).")
    return out, note
