"""The one door to chat and embedding models: every call goes through litellm here.

What this module adds on top of litellm:
- a persistent cache (SQLite) keyed by model, messages and parameters, so an
  identical re-run makes no calls at all;
- bounded retries on litellm's typed transient errors (the shared RetryPolicy),
  honouring Retry-After;
- translation of litellm's exceptions into rt_core's small error hierarchy;
- usage and cost accounting per run;
- single flight: identical calls made at the same time (same cache key, any thread,
  session or event loop of this process) share one model call;
- prompts fitted to the model's context window by the one rule of `fitting.py`,
  with a note saying what was cut;
- the sampling defaults the model declares in the registry.

Only usable replies are cached: a reply with no choices is retried like a transient
fault; an empty text, a refusal (finish_reason "content_filter") or a reply cut off at
the token limit ("length", for instruction models; a base model completing a stem stops
at its budget by design) is returned but never written to the cache.

API keys are passed per call and never stored, cached, logged or hashed. Which key a
call carries was decided by `rt_core.keys.resolve`; the client only re-checks that a key
held by the server (`server_key`) goes where rt_core.keys allows (`keys.guard`).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import hashlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import keys
from ..errors import CancelledRun, ProviderError, RateLimitError
from ..store.claims import new_owner
from ..types import Usage
from . import registry, router
from .fitting import fit_messages
from .registry import ensure_zero_price, litellm, rt_error_in, run_async
from .retry import RetryPolicy, TooLongToWait, retry_after_seconds
from .settings import ModelSettings
from .translate import EmptyReply, nothing_listening, translate

log = logging.getLogger(__name__)

__all__ = ["Completion", "LLMClient", "ModelSettings", "agent_calls", "cache_key", "embed_remote",
           "run_async"]


# Model calls made by the current agent (set per agent task by the simulation), so a
# progress event can say whether an agent's output came from the cache alone.
agent_calls: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("agent_calls",
                                                                               default=None)


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


# A reply's log-probabilities are cached beside its text, under the reply's key plus this
# suffix (the key itself covers the `logprobs` request, so it stays honest either way).
LOGPROBS_SUFFIX = "#logprobs"


def _cached_logprobs(store, key: str) -> tuple[tuple[str, float], ...] | None:
    row = store.llm_cache.get(key + LOGPROBS_SUFFIX)
    if row is None:
        return None
    try:
        return tuple((str(t), float(v)) for t, v in json.loads(row["text"]))
    except (ValueError, TypeError):  # not what we wrote: treat as absent
        return None


# -- single flight ------------------------------------------------------------------------
# In-flight calls of this process by (store, cache key): the first caller makes the call,
# callers that arrive meanwhile (any thread or event loop) wait for its answer.
_inflight: dict[tuple[str, str], concurrent.futures.Future] = {}
_inflight_lock = threading.Lock()
_waiting = [0]  # callers currently waiting for another caller's answer


def inflight_count() -> tuple[int, int]:
    """(calls in flight, callers waiting for one of them): for the tests that check single
    flight."""
    with _inflight_lock:
        return len(_inflight), _waiting[0]


def cache_key(settings: ModelSettings, messages: list[dict], params: dict) -> str:
    """Everything that changes the answer, and nothing secret."""
    blob = json.dumps({"model": settings.model, "base_url": settings.base_url.rstrip("/"),
                       "messages": messages, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def supports_json_schema(model: str) -> bool:
    try:
        return bool(litellm().supports_response_schema(model=model))
    except Exception:  # unknown models: litellm raises; plain text parsing handles them
        return False


class LLMClient:
    """Calls one configured model for one run, with cache, retries and usage."""

    def __init__(self, settings: ModelSettings, store=None, usage: Usage | None = None,
                 concurrency: int = 4, sleep: Callable[[float], Any] | None = None,
                 cancel: threading.Event | None = None):
        self.settings = settings
        self.store = store
        self.usage = usage if usage is not None else Usage()
        # A serial model (the embedded one) takes as many as its engine batches.
        limit = registry.calls_at_once(settings.model, concurrency)
        self.semaphore_limit = limit
        self.semaphore = asyncio.Semaphore(limit)
        self.cancel = cancel
        self._sleep = sleep or self._sleep_unless_cancelled
        self.notes: list[str] = []  # what was cut or not cached, for the run's notes
        # Asked before every call the cache does not answer; raises to stop the run (the
        # run's budget, run.budget.Budget.check_call).
        self.before_call: Callable[[], None] = lambda: None
        keys.guard(settings.model, settings.base_url, settings.api_key, settings.server_key)

    async def _sleep_unless_cancelled(self, delay: float) -> None:
        """Back-off that a Cancel cuts short."""
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        while (left := end - loop.time()) > 0:
            if self.cancel is not None and self.cancel.is_set():
                raise CancelledRun("the run was cancelled while waiting to retry")
            await asyncio.sleep(min(0.25, left))

    async def complete(self, messages: list[dict], *, max_tokens: int = 800,
                       stop: list[str] | None = None, temperature: float | None = None,
                       extra: dict | None = None, json_schema: dict | None = None) -> Completion:
        s = self.settings
        params: dict[str, Any] = {**registry.sampling(s.model), "max_tokens": max_tokens,
                                  "temperature": s.temperature if temperature is None else temperature}
        if stop:
            params["stop"] = stop
        if extra:
            params.update(extra)
        if json_schema and supports_json_schema(s.model):
            params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        messages, note = fit_messages(messages, registry.context_tokens(s.model), max_tokens)
        if note:
            self._note(note)
        key = cache_key(s, messages, params)
        flight = (str(self.store.path) if self.store is not None else "", key)
        while True:
            if self.store is not None:
                hit = self.store.llm_cache.get(key)
                if hit is not None:
                    self.usage.cache_hits += 1
                    lps = _cached_logprobs(self.store, key) if params.get("logprobs") else None
                    return Completion(hit["text"], True, hit["prompt_tokens"], hit["completion_tokens"],
                                      logprobs=lps)
            with _inflight_lock:
                leader = flight not in _inflight
                if leader:
                    _inflight[flight] = concurrent.futures.Future()
                else:
                    _waiting[0] += 1
                future = _inflight[flight]
            if leader:
                break
            try:
                shared: Completion = await asyncio.wrap_future(future)
            except (CancelledRun, concurrent.futures.CancelledError, asyncio.CancelledError):
                if self.cancel is not None and self.cancel.is_set():
                    raise
                continue  # the caller we waited for was cancelled: try again ourselves
            finally:
                with _inflight_lock:
                    _waiting[0] -= 1
            self.usage.cache_hits += 1
            return Completion(shared.text, True, shared.prompt_tokens, shared.completion_tokens,
                              0.0, shared.finish_reason, shared.logprobs)
        claims, owner = (self.store.call_claims, new_owner()) if self.store is not None else (None, "")
        try:
            # Another process may be making this very call: wait for its answer (claims.py).
            hit = claims and await claims.claim_or_wait(key, owner, lambda: self.store.llm_cache.get(key))
            if hit:
                lps = _cached_logprobs(self.store, key) if params.get("logprobs") else None
                result = Completion(hit["text"], True, hit["prompt_tokens"], hit["completion_tokens"],
                                    logprobs=lps)
                self.usage.cache_hits += 1
                with _inflight_lock:
                    _inflight.pop(flight, None)
                future.set_result(result)
                return result
            async with self.semaphore:
                self.before_call()
                result = await self._call_with_retries(messages, params)
            self.usage.calls += 1
            counter = agent_calls.get()
            if counter is not None:
                counter[0] += 1
            self.usage.prompt_tokens += result.prompt_tokens
            self.usage.completion_tokens += result.completion_tokens
            self.usage.cost += result.cost
            if result.finish_reason == "content_filter" and not result.text.strip():
                raise ProviderError(f"model '{s.model}' refused to answer (content filter)",
                                    "Rephrase the inputs, or try another model.")
            # A base model writing to a stem stops at its token budget by design; for an
            # instruction model the same finish means a reply cut short.
            cut_off = result.finish_reason == "length" and not s.traits.ends_at_token_budget
            if cut_off:
                self._note(f"A reply of model '{s.model}' was cut off at its limit of {max_tokens:,} "
                           "tokens; it was used as it was and not cached.")
            usable = result.text.strip() and result.finish_reason != "content_filter" and not cut_off
            if self.store is not None and usable:
                # The log-probabilities first: whoever finds the text finds them too.
                if result.logprobs is not None:
                    self.store.llm_cache.put(key + LOGPROBS_SUFFIX, s.model,
                                             json.dumps(result.logprobs), 0, 0)
                self.store.llm_cache.put(key, s.model, result.text, result.prompt_tokens,
                                         result.completion_tokens)
            elif claims:
                claims.release(key, owner)
        except BaseException as exc:
            if claims:
                with contextlib.suppress(Exception):  # the store may be what failed
                    claims.release(key, owner)
            with _inflight_lock:
                _inflight.pop(flight, None)
            future.set_exception(exc if isinstance(exc, Exception) else CancelledRun("cancelled"))
            raise
        with _inflight_lock:
            _inflight.pop(flight, None)
        future.set_result(result)
        return result

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def litellm_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        s = self.settings
        kwargs.update(model=s.model, timeout=s.timeout)
        if router.serving(s.model) is not None:
            return kwargs  # the Router's deployments bring their own address, key and retries
        kwargs["num_retries"] = 0
        if s.api_key:
            kwargs["api_key"] = s.api_key
        elif s.base_url:
            # Never let litellm fill in the provider's environment variable for a base URL.
            kwargs["api_key"] = keys.NO_KEY
        if s.base_url:
            kwargs["api_base"] = s.base_url
        return kwargs

    async def _call_with_retries(self, messages: list[dict], params: dict) -> Completion:
        ensure_zero_price(self.settings.model)

        async def call() -> Completion:
            acompletion = router.function(self.settings.model, "acompletion")
            response = await acompletion(**self.litellm_kwargs(messages=messages, **params))
            if not getattr(response, "choices", None):
                raise EmptyReply("the reply held no choices")
            return self._to_completion(response)

        return await self.with_retries(call)

    async def with_retries(self, call: Callable[[], Any]) -> Any:
        """Await call() with bounded retries on litellm's transient errors (the shared
        RetryPolicy); everything else becomes an rt_core error at once."""
        lm = litellm()
        s = self.settings
        transient = (lm.RateLimitError, lm.Timeout, lm.APIConnectionError, lm.InternalServerError,
                     lm.ServiceUnavailableError, lm.BadGatewayError, EmptyReply)
        attempt = 0
        while True:
            try:
                return await asyncio.wait_for(call(), timeout=s.timeout + 5)
            except TimeoutError as exc:
                err: Exception = lm.Timeout(message="no answer in time", model=s.model,
                                            llm_provider=registry.provider_of(s.model))
                err.__cause__ = exc
            except Exception as exc:
                own = rt_error_in(exc)  # an in-process provider's own error: never retried
                if own is not None:
                    raise own from None
                if nothing_listening(exc):  # a refused connection stays refused: no retries
                    raise translate(exc, s) from None
                if not isinstance(exc, transient):
                    raise translate(exc, s) from None
                err = exc
            attempt += 1
            if not s.retry.should_retry(attempt):
                raise translate(err, s) from None
            try:
                delay = s.retry.delay(attempt, self._retry_after(err))
            except TooLongToWait as wait:
                # A provider asking us to wait an hour: say so now rather than hang the run.
                raise RateLimitError(f"model '{s.model}' asks to wait {wait.seconds:.0f}s before "
                                     "retrying", RateLimitError.hint) from None
            log.info("retrying %s after %s (attempt %d): %.1fs", s.model, type(err).__name__,
                     attempt, delay)
            await self._sleep(delay)

    @staticmethod
    def _retry_after(exc: Exception) -> float | None:
        headers = None
        response = getattr(exc, "response", None)
        if response is not None:
            headers = getattr(response, "headers", None)
        return retry_after_seconds(headers or getattr(exc, "litellm_response_headers", None))

    @staticmethod
    def _to_completion(response: Any) -> Completion:
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
        return Completion(text or "", False, pt, ct, cost, finish, _logprobs_of(response))


def _logprobs_of(response: Any) -> tuple[tuple[str, float], ...] | None:
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


async def embed_remote(model: str, texts: list[str], api_key: str = "", base_url: str = "",
                       timeout: float = 60.0, max_retries: int = 4,
                       sleep: Callable[[float], Any] | None = None) -> tuple[list[list[float]], int]:
    """Embeddings from a hosted model (OpenAI, Voyage, ... any litellm embedding model).

    Returns (vectors, tokens used). Same retries and error translation as chat calls.
    """
    client = LLMClient(ModelSettings(model=model, api_key=api_key, base_url=base_url,
                                     timeout=timeout, retry=RetryPolicy(max_retries=max_retries)),
                       sleep=sleep)
    response = await client.with_retries(
        lambda: router.function(model, "aembedding")(**client.litellm_kwargs(input=texts)))
    data = sorted(response.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
    vectors = [d["embedding"] if isinstance(d, dict) else d.embedding for d in data]
    if len(vectors) != len(texts):
        raise ProviderError(f"embedding model '{model}' returned {len(vectors)} vectors "
                            f"for {len(texts)} texts")
    tokens = int(getattr(getattr(response, "usage", None), "total_tokens", 0) or 0)
    return vectors, tokens
