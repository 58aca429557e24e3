"""One small GET client shared by the paper sources.

Every source gets the same behaviour: an injectable base URL (tests point it
at a loopback server), bounded retries with exponential backoff on 429, 5xx
and connection failures, Retry-After honoured, an injectable `sleep` (tests
record waits instead of waiting), an optional response cache, and errors
that name the source but never carry an API key.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

from rt_core import redact
from rt_core.errors import NotFoundError, RateLimitError, SourceError
from rt_core.models.retry import RetryPolicy, TooLongToWait, retry_after_seconds

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "ResearchTownStudio/0.1 (+rt_core.sources)"


class Cache(Protocol):
    """What the client needs from a cache: text bodies keyed by request."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...


class MemoryCache:
    """A bounded in-process LRU cache; the default so repeated look-ups in one
    session do not spend the sources' rate limits."""

    def __init__(self, max_entries: int = 512):
        self.max_entries = max_entries
        self._data: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class _RedactSecrets(logging.Filter):
    """Masks secrets in httpx's own request log lines (it logs full URLs, and an
    API key sent as a query parameter would otherwise appear there)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            if any(s in message for s in self.secrets):
                for secret in self.secrets:
                    message = message.replace(secret, "***")
                record.msg, record.args = message, ()
        return True


_HTTPX_LOG_FILTER = _RedactSecrets()
logging.getLogger("httpx").addFilter(_HTTPX_LOG_FILTER)
_RETRYABLE_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


class HttpClient:
    """GET JSON or text from one source, with retries, cache and clean errors.

    `secret_headers` / `secret_params` are sent but kept out of cache keys,
    log lines and error messages, so an API key never leaks through them.
    """

    def __init__(
        self,
        source: str,
        base_url: str,
        *,
        timeout: float = 20.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        cache: Cache | None = None,
        use_cache: bool = True,
        headers: Mapping[str, str] | None = None,
        secret_headers: Mapping[str, str] | None = None,
        secret_params: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.source = source
        self.base_url = base_url.rstrip("/")
        self.retry = RetryPolicy(max_retries=max(0, int(max_retries)), base=backoff,
                                 cap=max_backoff, max_retry_after=max_retry_after)
        self.sleep = sleep
        self.cache: Cache | None = (cache if cache is not None else MemoryCache()) if use_cache else None
        self._secret_params = {k: v for k, v in (secret_params or {}).items() if v}
        self._secrets = [v for v in [*(secret_headers or {}).values(), *self._secret_params.values()] if v]
        _HTTPX_LOG_FILTER.secrets.update(self._secret_params.values())
        all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
        all_headers.update({k: v for k, v in (secret_headers or {}).items() if v})
        self._client = httpx.Client(timeout=timeout, headers=all_headers, transport=transport,
                                    follow_redirects=True)

    # -- public -----------------------------------------------------------
    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET and decode JSON; a body that is not JSON is a SourceError."""
        return self._get(path, params, _decode_json)

    def get_text(self, path: str, params: Mapping[str, Any] | None = None,
                 validate: Callable[[str, str], Any] | None = None) -> str:
        """GET text; `validate(text, label)` may raise SourceError to refuse (and not
        cache) a body, e.g. an HTML error page served with status 200."""
        def check(text: str, label: str) -> str:
            if validate is not None:
                validate(text, label)
            return text
        return self._get(path, params, check)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------
    def _get(self, path: str, params: Mapping[str, Any] | None, decode: Callable[[str, str], Any]) -> Any:
        clean = _clean_params(params)
        key = self._cache_key(path, clean)
        where = self._describe(path)
        label = f"{self.source} ({where})"
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            log.debug("%s cache hit: %s", self.source, where)
            return decode(cached, label)
        text = self._fetch(path, {**clean, **self._secret_params}, where)
        value = decode(text, label)
        if self.cache is not None:
            self.cache.set(key, text)
        return value

    def _fetch(self, path: str, params: dict[str, str], where: str) -> str:
        """Send the request, retrying transient failures up to max_retries times."""
        url = self.base_url + "/" + path.lstrip("/")
        for attempt in range(self.retry.max_retries + 1):
            last = attempt == self.retry.max_retries
            try:
                response = self._client.get(url, params=params)
            except _RETRYABLE_ERRORS as exc:
                if last:
                    raise SourceError(f"could not reach {self.source} ({where}) after "
                                      f"{attempt + 1} tries: {self._redact(str(exc))}",
                                      hint="Check the network connection, or try again later.") from None
                self._wait(attempt, None, where, "connection failed")
                continue
            except httpx.TimeoutException:
                raise SourceError(f"{self.source} did not answer within the time limit ({where})",
                                  hint="The source is slow right now; try again later.") from None
            except httpx.HTTPError as exc:
                raise SourceError(f"request to {self.source} failed ({where}): "
                                  f"{self._redact(str(exc))}") from None
            if response.status_code in RETRY_STATUSES and not last:
                self._wait(attempt, retry_after_seconds(response.headers), where,
                           f"HTTP {response.status_code}")
                continue
            return self._checked_text(response, where, attempt + 1)
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, retry_after: float | None, where: str, why: str) -> None:
        """Sleep before the next try, as the shared retry policy says."""
        try:
            delay = self.retry.delay(attempt + 1, retry_after)
        except TooLongToWait as exc:
            raise RateLimitError(f"{self.source} asks to wait {exc.seconds:.0f} s before the next "
                                 f"request ({where}); not waiting that long") from None
        log.info("%s: %s for %s; retrying in %.1f s", self.source, why, where, delay)
        self.sleep(delay)

    def _checked_text(self, response: httpx.Response, where: str, tries: int) -> str:
        status = response.status_code
        if 200 <= status < 300:
            return response.text
        detail = _short_detail(response, self._secrets)  # hidden before it is cut
        if status == 404:
            raise NotFoundError(f"{self.source} has no such record ({where}){detail}")
        if status == 429:
            raise RateLimitError(f"{self.source} is rate limiting requests (HTTP 429 after {tries} "
                                 f"tries, {where}){detail}")
        if status in (401, 403):
            raise SourceError(f"{self.source} refused the request (HTTP {status}, {where}){detail}",
                              hint="Check the API key for this source, or remove it.")
        suffix = f" after {tries} tries" if status in RETRY_STATUSES else ""
        raise SourceError(f"{self.source} answered HTTP {status}{suffix} ({where}){detail}")

    def _cache_key(self, path: str, params: dict[str, str]) -> str:
        """Base URL + path + sorted public params: secrets never enter the key."""
        query = urlencode(sorted(params.items()))
        return f"GET {self.base_url}/{path.lstrip('/')}?{query}"

    def _describe(self, path: str) -> str:
        return self._redact("/" + path.lstrip("/"))

    def _redact(self, text: str) -> str:
        return redact.hide(text, self._secrets)


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    """Drop None values and turn the rest into strings, so keys are stable."""
    return {k: str(v) for k, v in (params or {}).items() if v is not None and v != ""}


def _decode_json(text: str, label: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"malformed JSON from {label}: {exc.msg} at position {exc.pos}",
                          hint="The source sent a broken answer; try again later.") from None


def _short_detail(response: httpx.Response, secrets=()) -> str:
    """A one-line excerpt of the error body (JSON 'message'/'error' when present)."""
    text = response.text.strip()
    try:
        body = json.loads(text)
        if isinstance(body, dict):
            text = str(body.get("message") or body.get("error") or text)
    except ValueError:
        pass
    text = " ".join(redact.hide(text, secrets).split())
    if not text:
        return ""
    return ": " + (text[:200] + "..." if len(text) > 200 else text)


class SourceClient:
    """Base of the source clients: owns an HttpClient and closes it."""

    http: HttpClient

    def close(self) -> None:
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
