"""One model reply as rt_core sees it, read out of whatever litellm returned.

Kept apart from the client so the cache, the call sharing and the accounting can all
speak of a reply without importing the code that makes calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .registry import StyleTraits, litellm


@dataclass
class Completion:
    text: str
    cached: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    finish_reason: str = ""
    # (token, log-probability) per generated token when the call asked for `logprobs` and
    # the model gave them; None otherwise (also for a cached reply stored without them).
    logprobs: tuple[tuple[str, float], ...] | None = None


def refused(reply: Completion) -> bool:
    """The provider's content filter stopped the model before it wrote anything."""
    return reply.finish_reason == "content_filter" and not reply.text.strip()


def cut_short(reply: Completion, traits: StyleTraits) -> bool:
    """A reply stopped by its token limit. A base model writing to a stem stops at its
    budget by design; for an instruction model the same finish means a reply cut short."""
    return reply.finish_reason == "length" and not traits.ends_at_token_budget


def from_response(response: Any) -> Completion:
    """The text, finish reason, token counts, cost and log-probabilities of a litellm reply;
    what a provider left out reads as empty or zero."""
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        text = None
    try:
        finish = str(response.choices[0].finish_reason or "")
    except (AttributeError, IndexError, KeyError, TypeError):
        finish = ""
    usage = getattr(response, "usage", None)
    pt = int(getattr(usage, "prompt_tokens", 0) or 0)
    ct = int(getattr(usage, "completion_tokens", 0) or 0)
    try:
        cost = float(litellm().completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown price: count tokens, show cost as 0
        cost = 0.0
    return Completion(text or "", False, pt, ct, cost, finish, logprobs_of(response))


def logprobs_of(response: Any) -> tuple[tuple[str, float], ...] | None:
    """choices[0].logprobs.content as (token, log-probability) pairs, when the reply has them."""
    try:
        lp = response.choices[0].logprobs
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    content = lp.get("content") if isinstance(lp, dict) else getattr(lp, "content", None)
    if not content:
        return None
    pairs = []
    for item in content:
        get = item.get if isinstance(item, dict) else lambda k, item=item: getattr(item, k, None)
        if get("logprob") is None:
            return None
        pairs.append((str(get("token") or ""), float(get("logprob"))))
    return tuple(pairs)
