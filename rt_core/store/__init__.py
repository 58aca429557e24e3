"""The store, opened through `open_store()`, which applies migrations: a SQLite file (the
zero-setup default) or a PostgreSQL database (`RT_DB=postgresql://...`), the same API on both.

A `Store` is the database plus one object per concern, so callers say what they
touch: `store.corpus` (papers, researchers, fields, search, imports),
`store.runs`, `store.comparisons` (a run compared afterwards with papers),
`store.studies` (human-evaluation studies), and the caches `store.llm_cache`, `store.embeddings`,
`store.http_cache` and `store.profiles`; `store.call_claims` makes an identical model call
from several processes once; `store.bench_tasks` is the queue benchmark workers share;
`store.neighbourhoods` keeps each browser's selection across a reload; `store.facets`
keeps what each paper states (purpose, mechanism, evaluation, gap), found once per paper.
"""
from __future__ import annotations

import threading
from pathlib import Path

from .. import config
from . import caches
from .caches import EmbeddingCache, HttpCache, LLMCache, ProfileCache
from .claims import CallClaims
from .comparisons import Comparisons
from .corpus import BundleSummary, Corpus, ImportSummary
from .db import Database, is_url
from .facets import PaperFacetStore
from .neighbourhoods import KeptNeighbourhoods
from .references import References
from .runs import Runs
from .speeds import CallSpeeds
from .studies import Studies
from .tasks import BenchTasks

__all__ = ["BundleSummary", "Corpus", "ImportSummary", "Store", "open_store"]


class Store:
    def __init__(self, location: Path | str):
        self.db = Database(location)
        self.corpus = Corpus(self.db)
        self.runs = Runs(self.db)
        self.comparisons = Comparisons(self.db)
        self.studies = Studies(self.db)
        self.llm_cache = LLMCache(self.db)
        self.call_claims = CallClaims(self.db)
        self.embeddings = EmbeddingCache(self.db)
        self.http_cache = HttpCache(self.db)
        self.profiles = ProfileCache(self.db)
        self.references = References(self.db)
        self.bench_tasks = BenchTasks(self.db)
        self.call_speeds = CallSpeeds(self.db)
        self.neighbourhoods = KeptNeighbourhoods(self.db)
        self.facets = PaperFacetStore(self.db)

    @property
    def path(self) -> Path | str:
        """The SQLite file, or the PostgreSQL URL without its password."""
        return self.db.path

    @property
    def dialect(self) -> str:
        return self.db.dialect

    def transaction(self):
        return self.db.transaction()

    def close(self) -> None:
        self.db.close()

    def counts(self) -> dict[str, int]:
        """Rows per table, for the Settings page and `init`."""
        conn = self.db.conn
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("papers", "researchers", "fields", "runs", "profiles", "llm_cache",
                          "embedding_cache", "http_cache")}

    def cache_sizes(self) -> dict[str, int]:
        return caches.cache_sizes(self.db)

    def clear_caches(self, which=caches.CACHE_TABLES) -> None:
        caches.clear_caches(self.db, which)


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def store_location(path: Path | str | None = None) -> Path | str:
    """A PostgreSQL URL as given, else a SQLite file (default: RT_DB, the user data folder)."""
    if not path:
        return config.db_path()
    return str(path) if is_url(path) else Path(path)


def open_store(path: Path | str | None = None) -> Store:
    """The store at `path` (a file or a postgresql:// URL; default: RT_DB or the user data
    folder), migrated and ready."""
    where = store_location(path)
    with _STORES_LOCK:
        key = where if isinstance(where, str) else str(where.resolve())
        if key not in _STORES:
            _STORES[key] = Store(where)
        return _STORES[key]
