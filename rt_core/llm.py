"""The one door to chat models: every call goes through `litellm.acompletion` here.

What this module adds on top of litellm:
- a persistent cache (SQLite) keyed by model, messages and parameters, so an
  identical re-run makes no calls at all;
- bounded retries with exponential backoff on litellm's typed transient errors,
  honouring Retry-After;
- translation of litellm's exceptions into rt_core's small error hierarchy;
- usage and cost accounting per run;
- registration of in-process providers (the embedded local model, and the
  scripted model used by tests) through litellm's custom-provider map, so they
  go through exactly the same dispatch path as hosted models.

API keys are passed per call and never stored, cached, logged or hashed.
"""
from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from . import config
from .config import ModelSettings
from .errors import (AuthError, CancelledRun, ConfigError, ProviderError, ProviderTimeout,
                     RateLimitError)
from .types import Usage

log = logging.getLogger(__name__)

_litellm = None
_lock = threading.Lock()
_providers: dict[str, Any] = {}
_zero_priced: set[str] = set()


def litellm():
    """Import litellm lazily (it takes seconds) with its network lookups turned off."""
    global _litellm
    if _litellm is None:
        with _lock:
            if _litellm is None:
                import litellm as _l  # noqa: PLC0415

                _l.telemetry = False
                _l.suppress_debug_info = True
                _l.drop_params = True  # providers that lack e.g. frequency_penalty ignore it
                _litellm = _l
                _register_builtin_providers()
    return _litellm


def register_provider(prefix: str, handler: Any) -> None:
    """Make `prefix/<model>` strings dispatch to `handler` (a litellm.CustomLLM)."""
    lm = litellm()
    with _lock:
        _providers[prefix] = handler
        lm.custom_provider_map = [m for m in lm.custom_provider_map if m["provider"] != prefix]
        lm.custom_provider_map.append({"provider": prefix, "custom_handler": handler})
        from litellm.utils import custom_llm_setup  # noqa: PLC0415

        custom_llm_setup()


def _register_builtin_providers() -> None:
    from .local_model import LocalGGUF  # noqa: PLC0415

    _providers["local"] = LocalGGUF()
    _litellm.custom_provider_map.append({"provider": "local", "custom_handler": _providers["local"]})
    from litellm.utils import custom_llm_setup  # noqa: PLC0415

    custom_llm_setup()


def provider_handler(prefix: str) -> Any:
    litellm()
    return _providers.get(prefix)


def _ensure_zero_price(model: str) -> None:
    """In-process providers cost nothing; tell litellm so its cost lookup does not fail."""
    prefix = model.split("/", 1)[0]
    if prefix not in _providers or model in _zero_priced:
        return
    litellm().register_model({model: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                      "litellm_provider": prefix, "mode": "chat",
                                      "max_tokens": 8192}})
    _zero_priced.add(model)


def passthrough(error: Exception) -> Exception:
    """Wrap an rt_core error raised inside an in-process provider so litellm hands it
    back unchanged (as a non-retryable BadRequestError) and callers see the original."""
    lm = litellm()

    class _Passthrough(lm.BadRequestError):
        pass

    exc = _Passthrough(message=str(error), model="", llm_provider="custom")
    exc.rt_error = error  # type: ignore[attr-defined]
    return exc


def run_async(coro):
    """asyncio.run for our coroutines, stopping litellm's background logging task on the
    way out so a finished loop leaves no pending task behind."""

    async def wrapper():
        try:
            return await coro
        finally:
            await _stop_logging_worker()

    return asyncio.run(wrapper())


async def _stop_logging_worker() -> None:
    if _litellm is None:
        return
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER as worker  # noqa: PLC0415

        if getattr(worker, "_bound_loop", None) is asyncio.get_running_loop():
            await asyncio.wait_for(worker.flush(), timeout=2)
            await worker.stop()
    except Exception:  # best effort: only tidies up
        log.debug("could not stop litellm's logging worker", exc_info=True)


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
        # The in-process model runs one request at a time anyway.
        limit = 1 if settings.style == "stem" else max(1, concurrency)
        self.semaphore = asyncio.Semaphore(limit)
        self.cancel = cancel
        self._sleep = sleep or self._sleep_unless_cancelled

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
        params: dict[str, Any] = {"max_tokens": max_tokens,
                                  "temperature": s.temperature if temperature is None else temperature}
        if stop:
            params["stop"] = stop
        if extra:
            params.update(extra)
        if json_schema and supports_json_schema(s.model):
            params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        key = cache_key(s, messages, params)
        if self.store is not None:
            hit = self.store.llm_cache_get(key)
            if hit is not None:
                self.usage.cache_hits += 1
                return Completion(hit["text"], True, hit["prompt_tokens"], hit["completion_tokens"])
        async with self.semaphore:
            result = await self._call_with_retries(messages, params)
        self.usage.calls += 1
        counter = agent_calls.get()
        if counter is not None:
            counter[0] += 1
        self.usage.prompt_tokens += result.prompt_tokens
        self.usage.completion_tokens += result.completion_tokens
        self.usage.cost += result.cost
        if self.store is not None:
            self.store.llm_cache_put(key, s.model, result.text, result.prompt_tokens,
                                     result.completion_tokens)
        return result

    def _litellm_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        s = self.settings
        kwargs.update(model=s.model, timeout=s.timeout, num_retries=0)
        if s.api_key:
            kwargs["api_key"] = s.api_key
        if s.base_url:
            kwargs["api_base"] = s.base_url
        return kwargs

    async def _call_with_retries(self, messages: list[dict], params: dict) -> Completion:
        _ensure_zero_price(self.settings.model)
        response = await self.with_retries(
            lambda: litellm().acompletion(**self._litellm_kwargs(messages=messages, **params)))
        return self._to_completion(response)

    async def with_retries(self, call: Callable[[], Any]) -> Any:
        """Await call() with bounded retries on litellm's transient errors (honouring a
        Retry-After up to the cap); everything else becomes an rt_core error at once."""
        lm = litellm()
        s = self.settings
        transient = (lm.RateLimitError, lm.Timeout, lm.APIConnectionError, lm.InternalServerError,
                     lm.ServiceUnavailableError, lm.BadGatewayError)
        attempt = 0
        while True:
            try:
                return await asyncio.wait_for(call(), timeout=s.timeout + 5)
            except asyncio.TimeoutError as exc:
                err: Exception = lm.Timeout(message="no answer in time", model=s.model,
                                            llm_provider=config.provider_of(s.model))
                err.__cause__ = exc
            except transient as exc:
                err = exc
            except Exception as exc:
                raise self._translate(exc) from None
            attempt += 1
            if attempt > s.max_retries:
                raise self._translate(err) from None
            delay = self._retry_after(err)
            if delay is not None and delay > s.backoff_cap:
                # A provider asking us to wait an hour: say so now rather than hang the run.
                raise RateLimitError(f"model '{s.model}' asks to wait {delay:.0f}s before retrying",
                                     RateLimitError.hint) from None
            if delay is None:
                delay = min(s.backoff_cap, s.backoff_base * (2 ** (attempt - 1)))
            log.info("retrying %s after %s (attempt %d): %.1fs", s.model, type(err).__name__,
                     attempt, delay)
            await self._sleep(delay)

    @staticmethod
    def _retry_after(exc: Exception) -> float | None:
        headers = None
        response = getattr(exc, "response", None)
        if response is not None:
            headers = getattr(response, "headers", None)
        headers = headers or getattr(exc, "litellm_response_headers", None)
        if not headers:
            return None
        value = headers.get("retry-after") or headers.get("Retry-After")
        try:
            return max(0.0, float(value)) if value is not None else None
        except (TypeError, ValueError):
            return None

    def _translate(self, exc: Exception) -> Exception:
        """litellm's typed exceptions -> rt_core errors with a hint. Never matches text."""
        lm = litellm()
        if getattr(exc, "rt_error", None) is not None:
            return exc.rt_error  # type: ignore[attr-defined]
        model = self.settings.model
        where = f"model '{model}'" + (f" at {self.settings.base_url}" if self.settings.base_url else "")
        detail = _short(exc)
        if self.settings.api_key:  # some providers echo the key (e.g. in a URL) in errors
            detail = detail.replace(self.settings.api_key, "***")
        status = getattr(exc, "status_code", None)
        if isinstance(exc, (lm.AuthenticationError, lm.PermissionDeniedError)) or status in (401, 403):
            return AuthError(f"{where} rejected the API key", AuthError.hint)
        if isinstance(exc, lm.RateLimitError):
            return RateLimitError(f"{where} kept rate limiting after {self.settings.max_retries} "
                                  f"retries", RateLimitError.hint)
        if isinstance(exc, lm.Timeout):
            return ProviderTimeout(f"{where} did not answer within {self.settings.timeout:.0f}s",
                                   ProviderTimeout.hint)
        if isinstance(exc, lm.NotFoundError):
            return ConfigError(f"{where} was not found: {detail}",
                               "Check the model name and the base URL.")
        if isinstance(exc, lm.ContextWindowExceededError):
            return ProviderError(f"{where}: the prompt is too long for this model",
                                 "Pick fewer papers or a model with a longer context.")
        if isinstance(exc, lm.BadRequestError):
            return ProviderError(f"{where} refused the request: {detail}",
                                 "Check the model name, provider prefix and settings.")
        if isinstance(exc, lm.APIConnectionError):
            return ProviderError(f"could not reach {where}: {detail}",
                                 "Check the base URL and that the server is running.")
        if isinstance(exc, (lm.InternalServerError, lm.ServiceUnavailableError, lm.APIError)):
            return ProviderError(f"{where} failed: {detail}", "The provider had an error; try again.")
        return ProviderError(f"{where}: unexpected {type(exc).__name__}: {detail}",
                             "See the log for details.")

    @staticmethod
    def _to_completion(response: Any) -> Completion:
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError, KeyError, TypeError):
            text = None
        usage = getattr(response, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        try:
            cost = float(litellm().completion_cost(completion_response=response) or 0.0)
        except Exception:  # unknown price: count tokens, show cost as 0
            cost = 0.0
        return Completion(text or "", False, pt, ct, cost)


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text[:limit]


async def embed_remote(model: str, texts: list[str], api_key: str = "", base_url: str = "",
                       timeout: float = 60.0, max_retries: int = 4,
                       sleep: Callable[[float], Any] | None = None) -> tuple[list[list[float]], int]:
    """Embeddings from a hosted model (OpenAI, Voyage, ... any litellm embedding model).

    Returns (vectors, tokens used). Same retries and error translation as chat calls.
    """
    client = LLMClient(ModelSettings(model=model, api_key=api_key, base_url=base_url,
                                     timeout=timeout, max_retries=max_retries), sleep=sleep)
    response = await client.with_retries(
        lambda: litellm().aembedding(**client._litellm_kwargs(input=texts)))
    data = sorted(response.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
    vectors = [d["embedding"] if isinstance(d, dict) else d.embedding for d in data]
    if len(vectors) != len(texts):
        raise ProviderError(f"embedding model '{model}' returned {len(vectors)} vectors "
                            f"for {len(texts)} texts")
    tokens = int(getattr(getattr(response, "usage", None), "total_tokens", 0) or 0)
    return vectors, tokens
