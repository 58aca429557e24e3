"""Bounded retries of one model call on litellm's transient errors.

What is transient is decided here, by litellm's exception types (never by the text of a
message); how long to wait and when to give up is the shared RetryPolicy's business
(retry.py). Everything else becomes an rt_core error at once (translate.py).
"""
from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import CancelledRun, RateLimitError
from . import registry
from .registry import litellm, rt_error_in
from .retry import TooLongToWait, retry_after_seconds
from .settings import ModelSettings
from .translate import EmptyReply, nothing_listening, translate

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]


def transient_errors() -> tuple[type[BaseException], ...]:
    """The faults worth another try: the provider was busy, slow or briefly broken."""
    lm = litellm()
    return (lm.RateLimitError, lm.Timeout, lm.APIConnectionError, lm.InternalServerError,
            lm.ServiceUnavailableError, lm.BadGatewayError, EmptyReply)


async def with_retries(call: Callable[[], Awaitable[Any]], settings: ModelSettings,
                       sleep: Sleep) -> Any:
    """Await call() until it answers, retrying transient errors as settings.retry allows."""
    attempt = 0
    while True:
        try:
            return await asyncio.wait_for(call(), timeout=settings.timeout + 5)
        except TimeoutError as exc:
            err: Exception = litellm().Timeout(message="no answer in time", model=settings.model,
                                               llm_provider=registry.provider_of(settings.model))
            err.__cause__ = exc
        except Exception as exc:
            err = retryable(exc, settings)
        attempt += 1
        delay = wait_before_retry(err, attempt, settings)
        log.info("retrying %s after %s (attempt %d): %.1fs", settings.model, type(err).__name__,
                 attempt, delay)
        await sleep(delay)


def retryable(exc: Exception, settings: ModelSettings) -> Exception:
    """`exc` itself when it is worth another try; otherwise its rt_core error is raised."""
    own = rt_error_in(exc)  # an in-process provider's own error: never retried
    if own is not None:
        raise own from None
    if nothing_listening(exc):  # a refused connection stays refused: no retries
        raise translate(exc, settings) from None
    if not isinstance(exc, transient_errors()):
        raise translate(exc, settings) from None
    return exc


def wait_before_retry(err: Exception, attempt: int, settings: ModelSettings) -> float:
    """Seconds to wait after the attempt-th failure; raises the rt_core error when the
    policy gives up or the provider asks for a wait longer than it allows."""
    if not settings.retry.should_retry(attempt):
        raise translate(err, settings) from None
    try:
        return settings.retry.delay(attempt, retry_after(err))
    except TooLongToWait as wait:
        # A provider asking us to wait an hour: say so now rather than hang the run.
        raise RateLimitError(f"model '{settings.model}' asks to wait {wait.seconds:.0f}s before "
                             "retrying", RateLimitError.hint) from None


def retry_after(exc: Exception) -> float | None:
    """The provider's Retry-After, from the HTTP response litellm kept, if any."""
    headers = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    return retry_after_seconds(headers or getattr(exc, "litellm_response_headers", None))


def sleep_unless_cancelled(cancel: threading.Event | None) -> Sleep:
    """A back-off that a Cancel cuts short."""

    async def sleep(delay: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        while (left := end - loop.time()) > 0:
            if cancel is not None and cancel.is_set():
                raise CancelledRun("the run was cancelled while waiting to retry")
            await asyncio.sleep(min(0.25, left))

    return sleep
