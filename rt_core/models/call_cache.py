"""The persistent cache of model replies: an identical re-run makes no calls at all.

The key covers everything that changes the answer (model, base URL, messages and
parameters) and nothing secret: the API key never enters it. Only usable replies are
kept: an empty text, a refusal or a reply cut short is returned to its caller but never
stored, so the next run asks again instead of inheriting a broken answer.
"""
from __future__ import annotations

import hashlib
import json

from .completion import Completion
from .settings import ModelSettings

# A reply's log-probabilities are cached beside its text, under the reply's key plus this
# suffix (the key itself covers the `logprobs` request, so it stays honest either way).
LOGPROBS_SUFFIX = "#logprobs"


def cache_key(settings: ModelSettings, messages: list[dict], params: dict) -> str:
    """Everything that changes the answer, and nothing secret."""
    blob = json.dumps({"model": settings.model, "base_url": settings.base_url.rstrip("/"),
                       "messages": messages, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def worth_keeping(reply: Completion, cut_short: bool) -> bool:
    """Whether a fresh reply may answer the same question next time."""
    return bool(reply.text.strip()) and reply.finish_reason != "content_filter" and not cut_short


class CallCache:
    """The replies of one store (`store.llm_cache`), read and written as Completions.
    Without a store nothing is found and nothing kept."""

    def __init__(self, store=None):
        self.store = store

    def get(self, key: str, with_logprobs: bool = False) -> Completion | None:
        if self.store is None:
            return None
        row = self.store.llm_cache.get(key)
        if row is None:
            return None
        lps = self._logprobs(key) if with_logprobs else None
        return Completion(row["text"], True, row["prompt_tokens"], row["completion_tokens"],
                          logprobs=lps)

    def keep(self, key: str, model: str, reply: Completion, cut_short: bool = False) -> bool:
        """Store `reply` if it is worth keeping; True when stored (which also ends the
        call's claim, store/caches.py)."""
        if self.store is None or not worth_keeping(reply, cut_short):
            return False
        # The log-probabilities first: whoever finds the text finds them too.
        if reply.logprobs is not None:
            self.store.llm_cache.put(key + LOGPROBS_SUFFIX, model, json.dumps(reply.logprobs), 0, 0)
        self.store.llm_cache.put(key, model, reply.text, reply.prompt_tokens, reply.completion_tokens)
        return True

    def _logprobs(self, key: str) -> tuple[tuple[str, float], ...] | None:
        row = self.store.llm_cache.get(key + LOGPROBS_SUFFIX)
        if row is None:
            return None
        try:
            return tuple((str(t), float(v)) for t, v in json.loads(row["text"]))
        except (ValueError, TypeError):  # not what we wrote: treat as absent
            return None
