"""The one door to chat and embedding models: every call goes through litellm here.

`LLMClient.complete` composes small pieces, each in its own module and tested alone:
- the prompt fitted to the model's context window (`fitting.py`), with a note saying what
  was cut, and the sampling defaults the model declares in the registry (both read from
  the model's facts, `facts.py`, which a run hands in: asked once at its start);
- the persistent cache of usable replies (`call_cache.py`), so an identical re-run makes
  no calls at all;
- call sharing (`call_sharing.py`): identical calls made at the same time, in this process
  or another on the same store, share one model call;
- bounded retries on litellm's typed transient errors, honouring Retry-After, and the
  translation of everything else into rt_core's errors (`call_retry.py`, `translate.py`);
- usage and cost accounting per run (`accounting.py`), and each call's time kept for the
  estimate of how long the next run takes (`speeds.py`).

Only usable replies are cached: a reply with no choices is retried like a transient
fault; an empty text, a refusal (finish_reason "content_filter") or a reply cut off at
the token limit ("length", for instruction models; a base model completing a stem stops
at its budget by design) is returned but never written to the cache.

API keys are passed per call and never stored, cached, logged or hashed. Which key a
call carries was decided by `rt_core.models.keys.resolve`; the client only re-checks that a key
held by the server (`server_key`) goes where rt_core.models.keys allows (`keys.guard`).
"""
from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import ProviderError
from ..types import Usage
from . import accounting, call_retry, call_sharing, keys, registry, router, speeds
from .accounting import agent_calls
from .call_cache import LOGPROBS_SUFFIX, CallCache, cache_key
from .completion import Completion, cut_short, from_response, refused
from .facts import ModelFacts, facts_alone
from .fitting import fit_messages
from .registry import ensure_zero_price, litellm, run_async
from .retry import RetryPolicy
from .settings import ModelSettings
from .translate import EmptyReply

__all__ = ["LOGPROBS_SUFFIX", "Completion", "LLMClient", "ModelSettings", "agent_calls", "cache_key",
           "embed_remote", "inflight_count", "run_async"]


def inflight_count() -> tuple[int, int]:
    """(calls in flight, callers waiting for one of them): for the tests of single flight."""
    return call_sharing.FLIGHTS.count()


def supports_json_schema(model: str) -> bool:
    try:
        return bool(litellm().supports_response_schema(model=model))
    except Exception:  # unknown models: litellm raises; plain text parsing handles them
        return False


class LLMClient:
    """Calls one configured model for one run, with cache, call sharing, retries and usage."""

    def __init__(self, settings: ModelSettings, store=None, usage: Usage | None = None,
                 concurrency: int = 4, sleep: Callable[[float], Any] | None = None,
                 cancel: threading.Event | None = None, facts: ModelFacts | None = None):
        """`facts`: what the registry says of the model, as a run resolved it at its start
        (models/facts.py); a caller without a run (a judge, a study) leaves it out and the
        client asks once, here."""
        self.settings = settings
        self.facts = facts or facts_alone(settings.model, concurrency, settings.prompt_style)
        self.store = store
        self.usage = usage if usage is not None else Usage()
        # A serial model (the embedded one) takes as many as its engine batches.
        limit = self.facts.at_once
        self.semaphore_limit = limit
        self.semaphore = asyncio.Semaphore(limit)
        self.cancel = cancel
        self._sleep = sleep or call_retry.sleep_unless_cancelled(cancel)
        self.notes: list[str] = []  # what was cut or not cached, for the run's notes
        # Asked before every call the cache does not answer; raises to stop the run (the
        # run's budget, run.budget.Budget.check_call).
        self.before_call: Callable[[], None] = lambda: None
        # Told after every call that reached the model, once its usage is counted (a shared
        # demo's allowance records it then: rt_core.allowance.Meter).
        self.after_call: Callable[[], None] = lambda: None
        keys.guard(settings.model, settings.base_url, settings.api_key, settings.server_key)

    @property
    def style(self) -> str:
        """The prompt style the model is written for (`ModelFacts.style`)."""
        return self.facts.style

    @property
    def traits(self) -> registry.StyleTraits:
        """What that style can do (`ModelFacts.traits`): stages ask this, never the name."""
        return self.facts.traits

    async def complete(self, messages: list[dict], *, max_tokens: int = 800,
                       stop: list[str] | None = None, temperature: float | None = None,
                       extra: dict | None = None, json_schema: dict | None = None) -> Completion:
        params = self._params(max_tokens, stop, temperature, extra, json_schema)
        messages = self._fit(messages, max_tokens)
        key = cache_key(self.settings, messages, params)
        cache = CallCache(self.store)

        async def make() -> Completion:
            async with self.semaphore:
                self.before_call()
                started = time.perf_counter()
                reply = await self._call(messages, params)
                speeds.record(self.store, self.settings.model, reply, time.perf_counter() - started)
            accounting.count_call(self.usage, reply)
            self.after_call()
            return self._checked(reply, max_tokens)

        reply = await call_sharing.share(
            (str(self.store.path) if self.store is not None else "", key), make,
            cached=lambda: cache.get(key, with_logprobs=bool(params.get("logprobs"))),
            keep=lambda r: cache.keep(key, self.settings.model, r, cut_short(r, self.facts.traits)),
            claims=self.store.call_claims if self.store is not None else None,
            cancelled=lambda: self.cancel is not None and self.cancel.is_set())
        if reply.cached:
            accounting.count_hit(self.usage)
        return reply

    def _params(self, max_tokens: int, stop: list[str] | None, temperature: float | None,
                extra: dict | None, json_schema: dict | None) -> dict[str, Any]:
        """Everything sent besides the messages: the model's declared sampling defaults first,
        then what this call asks for."""
        s = self.settings
        params: dict[str, Any] = {**self.facts.sampling, "max_tokens": max_tokens,
                                  "temperature": s.temperature if temperature is None else temperature}
        if stop:
            params["stop"] = stop
        if extra:
            params.update(extra)
        if json_schema and supports_json_schema(s.model):
            params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        return params

    def _fit(self, messages: list[dict], max_tokens: int) -> list[dict]:
        messages, note = fit_messages(messages, self.facts.context, max_tokens)
        if note:
            self._note(note)
        return messages

    def _checked(self, reply: Completion, max_tokens: int) -> Completion:
        """A refusal is an error; a reply cut short is used as it is, with a note."""
        model = self.settings.model
        if refused(reply):
            raise ProviderError(f"model '{model}' refused to answer (content filter)",
                                "Rephrase the inputs, or try another model.")
        if cut_short(reply, self.facts.traits):
            self._note(f"A reply of model '{model}' was cut off at its limit of {max_tokens:,} "
                       "tokens; it was used as it was and not cached.")
        return reply

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

    async def _call(self, messages: list[dict], params: dict) -> Completion:
        """One chat call through litellm, with retries."""
        ensure_zero_price(self.settings.model)

        async def call() -> Completion:
            acompletion = router.function(self.settings.model, "acompletion")
            response = await acompletion(**self.litellm_kwargs(messages=messages, **params))
            if not getattr(response, "choices", None):
                raise EmptyReply("the reply held no choices")
            return from_response(response)

        return await self.with_retries(call)

    async def with_retries(self, call: Callable[[], Any]) -> Any:
        """Await call() with bounded retries on litellm's transient errors (call_retry.py)."""
        return await call_retry.with_retries(call, self.settings, self._sleep)


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
