"""The one place a paper source's client is made: every door (pages, CLI, runs, the novelty
check, suggestions) asks here, never calls a client's constructor itself.

Why one place: each client needs the same three things from outside, and a door that made
its own once forgot one of them. They are:
- the store's HTTP cache, so a question asked by the app, the CLI or a run is asked of the
  source once (a required argument here: a door cannot leave it out by accident);
- the source's address: the public API, or the server the operator names (RT_S2_URL,
  RT_OPENALEX_URL, RT_ARXIV_URL, read by the client itself) or a test passes in;
- its credentials: the operator's Semantic Scholar key (`keys.service_key`: environment,
  then the app's secrets), which rides only in that client's header to Semantic Scholar's
  address, never to OpenAlex or arXiv; and the OpenAlex contact address (OPENALEX_MAILTO),
  which only the OpenAlex client sends. Neither is logged or kept: the HTTP client keeps
  them out of its cache keys and its error messages (sources/http.py).
"""
from __future__ import annotations

import os
from typing import Any

from ..models.keys import Secrets, service_key
from .arxiv_source import ArxivSource
from .http import Cache
from .openalex import OpenAlex
from .semantic_scholar import SemanticScholar


def s2_key(secrets: Secrets | None = None) -> str | None:
    """The operator's Semantic Scholar key, or None when there is none."""
    return service_key("semantic_scholar", secrets).value or None


def openalex_mailto() -> str | None:
    """The address OpenAlex asks polite callers to give (OPENALEX_MAILTO), or None."""
    return os.environ.get("OPENALEX_MAILTO", "").strip() or None


def semantic_scholar(cache: Cache | None, *, secrets: Secrets | None = None,
                     key: str | None = None, base_url: str | None = None,
                     **client: Any) -> SemanticScholar:
    """A Semantic Scholar client on the store's cache, with the operator's key (or `key`,
    when the caller already holds the operator's key, e.g. a test)."""
    return SemanticScholar(key if key is not None else s2_key(secrets), base_url=base_url,
                           cache=cache, **client)


def openalex(cache: Cache | None, *, mailto: str | None = None, base_url: str | None = None,
             **client: Any) -> OpenAlex:
    """An OpenAlex client on the store's cache, giving the operator's contact address."""
    return OpenAlex(mailto=mailto if mailto is not None else openalex_mailto(),
                    base_url=base_url, cache=cache, **client)


def arxiv(cache: Cache | None, *, base_url: str | None = None, **client: Any) -> ArxivSource:
    """An arXiv client on the store's cache (arXiv takes no key)."""
    return ArxivSource(base_url, cache=cache, **client)


def clients_for(cache: Cache | None, *, secrets: Secrets | None = None,
                base_urls: dict[str, str] | None = None, **client: Any) -> dict[str, Any]:
    """All three, by source name, in the order the online literature asks them."""
    urls = base_urls or {}
    return {"semantic_scholar": semantic_scholar(cache, secrets=secrets,
                                                 base_url=urls.get("semantic_scholar"), **client),
            "openalex": openalex(cache, base_url=urls.get("openalex"), **client),
            "arxiv": arxiv(cache, base_url=urls.get("arxiv"), **client)}
