"""Text embeddings: the bundled MiniLM by default, any hosted model by name.

`local/all-MiniLM-L6-v2` runs in-process (numpy, see minilm.py); Voyage models
(`voyage-3`, `voyage/voyage-3`: the paper's evaluator) go through Voyage AI's own
`voyageai` package; any other name is a litellm embedding model
(`text-embedding-3-large`, ...). Vectors are L2-normalised and cached in the store
by model and text.
"""
from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import numpy as np

from .. import redact
from ..config import LOCAL_EMBEDDER
from ..errors import AuthError, ConfigError, InputError, ProviderError, RateLimitError
from ..settings.endpoint import EMBEDDER
from . import kept_vectors, keys, registry
from .retry import RetryPolicy, TooLongToWait, retry_after_seconds

_local_models: dict[str, object] = {}
_local_lock = threading.Lock()
# One in-process embedding at a time, on one BLAS thread. On this shared 2-core machine
# OpenBLAS's own threads spin against llama.cpp, other embedding threads and other
# processes: 5 proposal answers took 3.3 s with 2 BLAS threads and 0.37 s with one
# (load average 9; docs/PERFORMANCE.md).
_local_compute = threading.Lock()


def local_minilm():
    with _local_lock:
        if "minilm" not in _local_models:
            from .minilm import MiniLM  # noqa: PLC0415

            _local_models["minilm"] = MiniLM()
        return _local_models["minilm"]


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


class Embedder:
    """Embeds texts with one model; remembers vectors in the store when given one."""

    def __init__(self, name: str = LOCAL_EMBEDDER, store=None, api_key: str = "",
                 base_url: str = "", batch_size: int = 64, retry: RetryPolicy | None = None,
                 sleep: Callable[[float], object] = time.sleep, timeout: float = 60.0):
        self.name = name
        self.store = store
        self._api_key = api_key
        self.base_url = base_url
        self.batch_size = batch_size
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.timeout = timeout
        self.tokens = 0

    @classmethod
    def for_request(cls, request, store=None) -> Embedder:
        """The embedder a RunRequest names, with the key typed for it (if any)."""
        return cls(request.config.embedder, store=store,
                   api_key=request.endpoint(EMBEDDER).key.value)

    @property
    def is_local(self) -> bool:
        """Computed in this process (the bundled MiniLM): no key, no network."""
        return registry.in_process(self.name)

    @property
    def voyage_model(self) -> str:
        """The Voyage model name when this is a Voyage embedder ('voyage-3'), else ''."""
        voyage = registry.capabilities(self.name).client == "voyageai"
        return registry.model_name(self.name) if voyage else ""

    def compute(self, texts: list[str]) -> np.ndarray:
        """The model's own vectors for these texts, as the store keeps them: neither looked
        up nor kept (what the setup's kept vectors are made of: models/kept_vectors.py)."""
        return self._compute(list(texts))

    def _compute(self, texts: list[str]) -> np.ndarray:
        if self.is_local:
            if self.name != LOCAL_EMBEDDER:
                raise InputError(f"unknown local embedder '{self.name}'",
                                 f"Use {LOCAL_EMBEDDER} or a hosted model name.")
            from threadpoolctl import threadpool_limits  # noqa: PLC0415

            model = local_minilm()
            with _local_compute, threadpool_limits(limits=1, user_api="blas"):
                return model.encode(texts)
        out = []
        for i in range(0, len(texts), self.batch_size):
            batch = texts[i:i + self.batch_size]
            if self.voyage_model:
                vecs, tokens = self._voyage(batch)
            else:
                from .client import embed_remote  # noqa: PLC0415

                vecs, tokens = _run(embed_remote(self.name, batch, self._api_key, self.base_url,
                                                 timeout=self.timeout,
                                                 max_retries=self.retry.max_retries,
                                                 sleep=_async_sleep(self.sleep)))
            if len(vecs) != len(batch):
                raise ProviderError(f"embedding model '{self.name}' returned {len(vecs)} vectors "
                                    f"for {len(batch)} texts")
            self.tokens += tokens
            out.extend(vecs)
        return _normalise(np.array(out, dtype=np.float32))

    def _voyage(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """One batch through the `voyageai` client (its own retries off: the shared
        RetryPolicy decides, so waits are the same as for every other provider)."""
        try:
            import voyageai  # noqa: PLC0415
            import voyageai.error as verr  # noqa: PLC0415
        except ImportError:
            raise ConfigError("the voyageai package is not installed",
                              "pip install voyageai (see requirements.txt).") from None
        key = self._api_key or keys.resolve(self.name, self.base_url).value
        if not key:
            raise AuthError(f"no API key for embedder '{self.name}'",
                            "Set VOYAGE_API_KEY or type the embedder key in Settings.")
        client = voyageai.Client(api_key=key, max_retries=0, timeout=self.timeout,
                                 base_url=self.base_url or None)
        transient = (verr.RateLimitError, verr.ServiceUnavailableError, verr.Timeout,
                     verr.APIConnectionError, verr.ServerError, verr.TryAgain)
        where = f"embedder '{self.name}'" + (f" at {redact.hide_url(self.base_url)}" if self.base_url else "")
        attempt = 0
        while True:
            try:
                result = client.embed(texts, model=self.voyage_model, truncation=True)
                return [list(v) for v in result.embeddings], int(result.total_tokens or 0)
            except verr.AuthenticationError:
                raise AuthError(f"{where} rejected the API key", AuthError.hint) from None
            except transient as exc:
                attempt += 1
                if not self.retry.should_retry(attempt):
                    if isinstance(exc, verr.RateLimitError):
                        raise RateLimitError(f"{where} kept rate limiting after "
                                             f"{self.retry.max_retries} retries",
                                             RateLimitError.hint) from None
                    raise ProviderError(f"{where} failed: {_voyage_detail(exc, key)}",
                                        "The provider had an error; try again.") from None
                try:
                    delay = self.retry.delay(attempt, retry_after_seconds(getattr(exc, "headers", None)))
                except TooLongToWait as wait:
                    raise RateLimitError(f"{where} asks to wait {wait.seconds:.0f}s",
                                         RateLimitError.hint) from None
                self.sleep(delay)
            except verr.VoyageError as exc:  # bad request, malformed input, other API errors
                raise ProviderError(f"{where} refused the request: {_voyage_detail(exc, key)}",
                                    "Check the embedder name and the base URL.") from None

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) unit vectors; blank texts embed like any other string."""
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        cache_name = f"{self.name}@{self.base_url}" if self.base_url else self.name
        cached = self.store.embeddings.get(cache_name, texts) if self.store is not None else {}
        todo = list(dict.fromkeys(t for t in texts if t not in cached))
        if todo:
            # The bundled papers' texts were embedded once, by the setup (models/kept_vectors.py).
            new = kept_vectors.lookup(self.name, todo) if self.is_local else {}
            rest = [t for t in todo if t not in new]
            if rest:
                fresh = self._compute(rest)
                new.update((t, fresh[i]) for i, t in enumerate(rest))
            if self.store is not None:
                self.store.embeddings.put(cache_name, new)
            cached.update(new)
        return _normalise(np.stack([cached[t] for t in texts]))


def _voyage_detail(exc: Exception, key: str) -> str:
    return redact.cut(str(getattr(exc, "user_message", "") or exc), 300, [key])


def _async_sleep(sleep: Callable[[float], object]):
    """The embedder's (sync) sleep for the async litellm path; real waits stay async."""
    if sleep is time.sleep:
        return None

    async def wait(seconds: float) -> None:
        result = sleep(seconds)
        if hasattr(result, "__await__"):
            await result

    return wait


def _run(coro):
    """Run a coroutine from sync code, also when called inside a running loop's thread."""
    from .registry import run_async  # noqa: PLC0415  (keeps litellm out until a call)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_async(coro)
    result: dict = {}

    def target():
        try:
            result["value"] = run_async(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in result:
        raise result["error"]
    return result["value"]
