"""Usage of a run's model: calls made, replies that cost nothing, tokens and cost.

A reply from the cache, or shared with an identical call made at the same time, counts as
a cache hit and nothing else; only a call that reached the model counts its tokens and
cost, and tells the current agent (so a progress event can say whether an agent's output
came from the cache alone).
"""
from __future__ import annotations

import contextvars

from ..types import Usage
from .completion import Completion

# Model calls made by the current agent (set per agent task by the simulation).
agent_calls: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("agent_calls",
                                                                               default=None)


def count_call(usage: Usage, reply: Completion) -> None:
    """A call that reached the model, counted whatever becomes of its reply."""
    usage.calls += 1
    counter = agent_calls.get()
    if counter is not None:
        counter[0] += 1
    usage.prompt_tokens += reply.prompt_tokens
    usage.completion_tokens += reply.completion_tokens
    usage.cost += reply.cost


def count_hit(usage: Usage) -> None:
    """A reply that made no call of its own."""
    usage.cache_hits += 1
