"""A circuit breaker per literature source.

Why: the public sources rate-limit hard (AI-Scientist's users hit Semantic Scholar's 429s
on every novelty check) and fail in runs (a 503 for minutes). Asking a failing source
again for every facet of every candidate only spends time and the source's patience. So
a source that failed `max_failures` times in a row, or asked for a wait longer than we
keep (a 429 whose Retry-After is past the HTTP client's limit), is skipped for
`cooldown` seconds, and the check moves on to the next source. After the cool-down one
request may try again (half-open): a success closes the breaker, a failure opens it anew.
The short waits a source asks for are waited by the HTTP client (`sources/http.py`,
Retry-After honoured, the sleep injectable); the breaker decides only whether to ask.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Breaker:
    name: str
    max_failures: int = 2
    cooldown: float = 300.0
    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    opened_at: float | None = None
    last_error: str = ""
    requests: int = field(default=0, compare=False)  # tries let through (for tests and notes)

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None and self.clock() - self.opened_at < self.cooldown

    def allow(self) -> bool:
        """Whether to ask this source now (closed, or half-open after the cool-down)."""
        if self.is_open:
            return False
        self.requests += 1
        return True

    def success(self) -> None:
        self.failures, self.opened_at = 0, None

    def failure(self, error: str, *, at_once: bool = False) -> None:
        """A failed request; `at_once` opens the breaker now (the source asked us to wait)."""
        self.last_error = error
        self.failures += 1
        if at_once or self.failures >= self.max_failures or self.opened_at is not None:
            self.opened_at = self.clock()
