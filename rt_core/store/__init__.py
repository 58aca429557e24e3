"""The store, opened through `open_store()`, which applies migrations: a SQLite file (the
zero-setup default) or a PostgreSQL database (`RT_DB=postgresql://...`), the same API on both.

A `Store` is the database plus one object per concern, so callers say what they
touch: `store.corpus` (papers, researchers, fields, search, imports),
`store.runs`, `store.ideas` (the bank of every run's ideas),
`store.comparisons` (a run compared afterwards with papers),
`store.studies` (human-evaluation studies), and the caches `store.llm_cache`, `store.embeddings`,
`store.http_cache` and `store.profiles`; `store.call_claims` makes an identical model call
from several processes once; `store.bench_tasks` is the queue benchmark workers share;
`store.neighbourhoods` keeps each browser's selection across a reload;
`store.demo_spending` counts what the shared demo's visitors spent today (rt_core.allowance);
`store.operator_sessions` lists the operator's signed-in browsers.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
from collections import OrderedDict
from pathlib import Path

from .. import config
from ..access import RecordScope
from . import caches
from .allowances import DemoSpending
from .caches import EmbeddingCache, HttpCache, LLMCache, ProfileCache
from .claims import CallClaims
from .comparisons import Comparisons
from .corpus import BundleSummary, Corpus, ImportSummary
from .db import Database, is_url
from .ideas import Ideas
from .neighbourhoods import KeptNeighbourhoods
from .operator_sessions import OperatorSessions
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
        self.ideas = Ideas(self.db)
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
        self.operator_sessions = OperatorSessions(self.db)
        self.demo_spending = DemoSpending(self.db)
        self._views: OrderedDict[str, Store] = OrderedDict()
        self._views_lock = threading.Lock()

    def seen_by(self, scope: RecordScope) -> Store:
        """This store as `scope` sees the corpus (rt_core.access.record_scope): the same
        database and objects, but a corpus that reads and adds as that viewer, so a page and
        any run it starts can only use the records the viewer may see. One view per visitor
        is kept (the newest few hundred), so its topic search and caches last across reruns."""
        if scope == self.corpus.scope:
            return self
        with self._views_lock:
            view = self._views.get(scope.owner_hash)
            if view is None or view.corpus.scope != scope:
                view = copy.copy(self)
                view.corpus = self.corpus.seen_by(scope)
                self._views[scope.owner_hash] = view
            self._views.move_to_end(scope.owner_hash)
            while len(self._views) > VIEWS_KEPT:
                self._views.popitem(last=False)
        return view

    def for_run(self, run_id: str) -> Store:
        """This store as the browser that started run `run_id` sees the corpus: a run was
        built from its owner's records, so whoever may resume, revise, steer or credit it
        (its owner, the operator) continues it with those, never with their own."""
        scope = self.corpus.scope
        owner = self.runs.owner_hash(run_id) or ""
        if scope.everything or not owner or owner == scope.owner_hash:
            return self
        return self.seen_by(dataclasses.replace(scope, owner_hash=owner))

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


VIEWS_KEPT = 512
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
