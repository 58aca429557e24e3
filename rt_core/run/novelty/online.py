"""The online literature: Semantic Scholar, then OpenAlex, then arXiv, each behind a breaker.

Why in this order: Semantic Scholar's relevance search covers every field and returns
abstracts; OpenAlex covers as much but its search is looser; arXiv only holds preprints.
A facet asks the first source the breaker lets through; a source that fails, is
rate-limited past what we wait, or finds nothing, hands over to the next (and says so in
a note). Every answer is kept in the store's HTTP cache (`store.http_cache`), so a re-run
of the same check makes no request. Retries and Retry-After are the shared HTTP
client's (`sources/http.py`); the `sleep` it waits with is injectable, so tests never wait.
"""
from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import RateLimitError, RTError
from ...sources import clients
from ...sources.http import Cache, SourceClient
from ...text import STOP
from ...types import Paper
from .breaker import Breaker

PER_SOURCE = 10  # papers asked of a source per facet
QUERY_WORDS = 8  # a relevance search does best with a few telling words, not a paragraph
TIMEOUT = 15.0
MAX_RETRY_AFTER = 30.0  # a longer wait asked by a 429 opens the breaker instead
NAMES = {"semantic_scholar": "Semantic Scholar", "openalex": "OpenAlex", "arxiv": "arXiv"}


def query_words(text: str, limit: int = QUERY_WORDS) -> list[str]:
    """The first content words of a facet, in order, once each."""
    seen: list[str] = []
    for w in re.findall(r"[A-Za-z][A-Za-z0-9\-]{2,}", text or ""):
        low = w.lower()
        if low not in STOP and low not in seen:
            seen.append(low)
        if len(seen) >= limit:
            break
    return seen


@dataclass
class Answer:
    """What the online literature found for one facet."""
    papers: list[Paper] = field(default_factory=list)
    source: str = ""  # the source whose papers these are ("" when none answered)
    notes: list[str] = field(default_factory=list)


class OnlineLiterature:
    """The three sources in order, one breaker each, answers cached in the store."""

    def __init__(self, cache: Cache | None, *, sleep: Callable[[float], None] = time.sleep,
                 timeout: float = TIMEOUT, clock: Callable[[], float] = time.monotonic,
                 base_urls: dict[str, str] | None = None):
        self.clients: dict[str, SourceClient] = clients.clients_for(
            cache, base_urls=base_urls, timeout=timeout, max_retries=1, sleep=sleep)
        for client in self.clients.values():
            client.http.retry = dataclasses.replace(client.http.retry, max_retry_after=MAX_RETRY_AFTER)
        self.breakers = {name: Breaker(NAMES[name], clock=clock) for name in self.clients}

    def close(self) -> None:
        for client in self.clients.values():
            client.close()

    def search(self, text: str, limit: int = PER_SOURCE) -> Answer:
        """Papers for a facet from the first source that has some; never raises for a
        source's failure (it becomes a note, and the next source is asked)."""
        words = query_words(text)
        answer = Answer()
        if not words:
            answer.notes.append("the facet has no words to search for online")
            return answer
        for name, client in self.clients.items():
            breaker = self.breakers[name]
            if not breaker.allow():
                answer.notes.append(f"{NAMES[name]} skipped: it failed just before "
                                    f"({breaker.last_error})")
                continue
            try:
                papers = _ask(name, client, words, limit)
            except RTError as exc:
                # a 429 the client could not wait out: the source asked for a pause
                breaker.failure(str(exc), at_once=isinstance(exc, RateLimitError))
                answer.notes.append(f"{NAMES[name]} failed ({exc}); moved on")
                continue
            breaker.success()
            if papers:
                answer.papers, answer.source = papers, name
                return answer
            answer.notes.append(f"{NAMES[name]} found nothing for: {' '.join(words)}")
        return answer

    def all_failed(self) -> bool:
        return all(b.failures for b in self.breakers.values())


def _ask(name: str, client, words: list[str], limit: int) -> list[Paper]:
    if name == "semantic_scholar":
        return client.search_papers(" ".join(words), limit)
    if name == "openalex":
        return client.search_works(" ".join(words), limit=limit)
    # arXiv's search wants every plain word (AND): any of them, ranked by relevance, instead.
    return client.search(" OR ".join(f"all:{w}" for w in words), max_results=limit)

