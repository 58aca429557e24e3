"""One completion asked of the batch decoder (models/local_batch.py): what it asks for, what
it has sampled so far, and when its text is done.

Why apart from the decoder: the decoder is about the llama.cpp context (which sequence
holds what, one decode for every call in flight); a request and the rules that end it
(a stop string, the sentence-end stop, the token limit) are about one call's text, read
and tested without a model loaded.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..text import ended_sentences


@dataclass
class Request:
    """One completion: its prompt tokens, how to sample and when to stop."""
    prompt: list[int]
    max_tokens: int
    make_sampler: Callable[[], object]  # a fresh llama-cpp-python LlamaSampler chain
    stop: tuple[bytes, ...] = ()
    logprobs: bool = False
    sentence_words: int = 0  # >0: stop at the first sentence end after this many words
    tokens: list[int] = field(default_factory=list)  # sampled so far
    values: list[float] = field(default_factory=list)  # log-probability of each sampled token
    text: bytes = b""
    finish_reason: str = ""
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    # set while decoding
    slot: int = -1
    feed: list[int] = field(default_factory=list)  # tokens to decode next, for this sequence
    sampler: object = None


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many tokens two prompts share from their start: what a new call can copy from a
    sequence the cache holds instead of reading it again."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def ended(r: Request) -> str:
    """Why the request's text is done after the token just sampled ('' while it goes on):
    "stop" at a stop string or, when asked, at the first sentence end after its words (the
    text cut there), "length" at its token limit."""
    hits = [s for s in r.stop if s in r.text]
    if hits:
        r.text = r.text[: r.text.index(hits[0])]
        return "stop"
    if r.sentence_words:
        text = r.text.decode("utf-8", errors="ignore")
        at = ended_sentences(text, r.sentence_words)
        if at is not None:  # the token just sampled began the next sentence: cut
            r.text = text[:at].rstrip().encode("utf-8")
            return "stop"
    if len(r.tokens) >= r.max_tokens:
        return "length"
    return ""
