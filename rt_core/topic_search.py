"""Search by topic with the bundled MiniLM: the store's hybrid search (store/topics.py)
given its embedder, one per store, so each query is embedded once per process."""
from __future__ import annotations

import threading
import weakref

from .config import LOCAL_EMBEDDER
from .models.embed import Embedder
from .store import Store
from .store.topics import EMPTY_HINT, PaperHit, ResearcherHit, Topics

__all__ = ["EMPTY_HINT", "PaperHit", "ResearcherHit", "Topics", "for_store"]

_by_store: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def for_store(store: Store, model: str = LOCAL_EMBEDDER) -> Topics:
    """The store's topic search with `model` (default: the bundled MiniLM, no network)."""
    with _lock:
        per_model = _by_store.setdefault(store, {})
        if model not in per_model:
            per_model[model] = Topics(store.corpus, store.corpus.vectors, model,
                                      Embedder(model).encode)
        return per_model[model]


def paper_reason(hit: PaperHit) -> str:
    """Why a paper is in the results, in words a reader can check."""
    if hit.by_meaning:
        return f"found by meaning, not by its words (similarity {hit.similarity:.2f})"
    return "matches your words" + (" and their meaning" if hit.similarity is not None else "")


def researcher_reason(hit: ResearcherHit) -> str:
    if hit.by_name:
        return "name or affiliation matches"
    n = f"{hit.papers} matching paper{'s' if hit.papers != 1 else ''}"
    how = ", found by meaning rather than words" if hit.by_meaning else ""
    return f"works on this: {n}, best “{hit.best_paper}”{how}"
