"""One model call shared by every identical caller (single flight).

Within this process, callers with the same (store, cache key) meet in a table of
futures, whatever thread, session or event loop they run in: the first makes the call,
the others wait for its answer. Across processes that table cannot help, so the caller
making the call first takes a claim in the store (store/claims.py); another process finds
it taken and waits until the answer is cached or the claim is gone. The caller hands the
store's claims in (`Claims` below says what they must do): the model layer sits below the
store and never imports it.

The caller brings the three things this module needs and knows nothing else of models,
caches or usage: `cached()` reads an answer already stored (None when there is none),
`make()` makes the call, `keep(answer)` stores an answer worth keeping and says whether it
did (a stored answer ends the claim; one not stored releases it, so a waiting process
asks again).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import threading
from collections.abc import Awaitable, Callable
from typing import Protocol

from ..errors import CancelledRun
from .completion import Completion

Flight = tuple[str, str]  # (the store's path, or "" without one; the call's cache key)


class Claims(Protocol):
    """What sharing a call across processes asks of the store's claims (store/claims.py)."""

    def new_owner(self) -> str: ...

    async def claim_or_wait(self, key: str, owner: str,
                            cached: Callable[[], Completion | None]) -> Completion | None: ...

    def release(self, key: str, owner: str) -> None: ...


class Flights:
    """The calls in flight in this process, and the callers waiting for one of them."""

    def __init__(self) -> None:
        self._calls: dict[Flight, concurrent.futures.Future] = {}
        self._lock = threading.Lock()
        self._waiting = 0

    def count(self) -> tuple[int, int]:
        """(calls in flight, callers waiting for one of them)."""
        with self._lock:
            return len(self._calls), self._waiting

    def join(self, flight: Flight) -> tuple[concurrent.futures.Future, bool]:
        """The flight's future, and whether this caller leads it (makes the call)."""
        with self._lock:
            leader = flight not in self._calls
            if leader:
                self._calls[flight] = concurrent.futures.Future()
            else:
                self._waiting += 1
            return self._calls[flight], leader

    async def follow(self, future: concurrent.futures.Future,
                     cancelled: Callable[[], bool]) -> Completion | None:
        """The leader's answer, marked as costing nothing; None when the leader was cancelled
        and this caller was not, so it should try again itself. The leader's error is raised."""
        try:
            answer: Completion = await asyncio.wrap_future(future)
        except (CancelledRun, concurrent.futures.CancelledError, asyncio.CancelledError):
            if cancelled():
                raise
            return None
        finally:
            with self._lock:
                self._waiting -= 1
        return dataclasses.replace(answer, cached=True, cost=0.0)

    def land(self, flight: Flight, future: concurrent.futures.Future,
             answer: Completion | None = None, error: BaseException | None = None) -> None:
        """End the flight and hand its answer (or error) to whoever waits for it."""
        with self._lock:
            self._calls.pop(flight, None)
        if error is None:
            future.set_result(answer)
        else:
            future.set_exception(error if isinstance(error, Exception) else CancelledRun("cancelled"))


FLIGHTS = Flights()


async def share(flight: Flight, make: Callable[[], Awaitable[Completion]], *,
                cached: Callable[[], Completion | None] = lambda: None,
                keep: Callable[[Completion], bool] = lambda answer: False,
                claims: Claims | None = None,
                cancelled: Callable[[], bool] = lambda: False) -> Completion:
    """The answer to the call behind `flight`: from `cached()`, from an identical call in
    flight in this process or another, or from `make()` when this caller is the first."""
    while True:
        hit = cached()
        if hit is not None:
            return hit
        future, leader = FLIGHTS.join(flight)
        if leader:
            break
        answer = await FLIGHTS.follow(future, cancelled)
        if answer is not None:
            return answer
    try:
        answer = await _across_processes(claims, flight[1], make, cached, keep)
    except BaseException as exc:
        FLIGHTS.land(flight, future, error=exc)
        raise
    FLIGHTS.land(flight, future, answer)
    return answer


async def _across_processes(claims: Claims | None, key: str,
                            make: Callable[[], Awaitable[Completion]],
                            cached: Callable[[], Completion | None],
                            keep: Callable[[Completion], bool]) -> Completion:
    """Make the call unless another process is making it: then its stored answer."""
    if claims is None:
        answer = await make()
        keep(answer)
        return answer
    owner = claims.new_owner()
    try:
        hit = await claims.claim_or_wait(key, owner, cached)
        if hit is not None:
            return hit
        answer = await make()
        if not keep(answer):
            claims.release(key, owner)
    except BaseException:
        with contextlib.suppress(Exception):  # the store may be what failed
            claims.release(key, owner)
        raise
    return answer
