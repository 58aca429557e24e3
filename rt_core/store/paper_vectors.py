"""Paper embeddings, stored once and held in memory as one matrix per process.

Why: a search by meaning must not embed papers at query time (MiniLM takes ~40 ms per
abstract here), and at 100k papers it must not read 100k rows per query either. So each
paper's vector is stored (float16, `paper_vectors`, m013) when it is first needed, and
the whole set is loaded once into a float32 matrix: a query is then one matrix-vector
product (~15 ms at 100k x 384). The matrix is reloaded when the meta counter
`paper_vectors_version` moves; the corpus bumps it whenever a paper is added or its text
changes, and `put` bumps it, so every process sees new papers on its next query.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable

import numpy as np

from .db import Database

VERSION_KEY = "paper_vectors_version"
FILL_BATCH = 32
_MEMO_LIMIT = 50_000
# text hash -> vector, across stores of this process: a store reopened (or a second
# store of the same papers) need not embed the same abstracts again.
_memo: dict[tuple[str, str], np.ndarray] = {}
_memo_lock = threading.Lock()


def paper_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract or ''}".strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def bump_version(db) -> None:
    """Mark every process's matrix stale (call inside the transaction that changed papers)."""
    db.execute("INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
               "value=CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)", (VERSION_KEY,))


class PaperVectors:
    def __init__(self, db: Database):
        self.db = db
        self._lock = threading.Lock()
        self._fill_lock = threading.Lock()  # two sessions of one process embed a paper once
        self._cached: dict[str, tuple[str, list[str], np.ndarray]] = {}  # model -> (version, ids, M)
        self._complete: dict[str, str] = {}  # model -> version at which nothing was missing

    def version(self) -> str:
        return self.db.get_meta(VERSION_KEY) or "0"

    def missing(self, model: str, limit: int) -> list[tuple[str, str]]:
        """(paper id, text) of papers with no current vector from `model`, newest first."""
        rows = self.db.conn.execute(
            "SELECT p.id, p.title, p.abstract, v.text_hash FROM papers p LEFT JOIN paper_vectors v "
            "ON v.paper_id=p.id AND v.model=? ORDER BY p.rowid DESC", (model,)).fetchall()
        out = []
        for pid, title, abstract, stored in rows:
            text = paper_text(title, abstract)
            if stored != text_hash(text):
                out.append((pid, text))
                if len(out) >= limit:
                    break
        return out

    def put(self, model: str, vectors: dict[str, tuple[str, np.ndarray]]) -> None:
        """paper id -> (text embedded, unit vector)."""
        if not vectors:
            return
        with self.db.transaction() as db:
            for pid, (text, vec) in vectors.items():
                v = np.asarray(vec, dtype=np.float16)
                db.execute("INSERT INTO paper_vectors(paper_id, model, text_hash, dim, vector) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT(paper_id) DO UPDATE SET "
                           "model=excluded.model, text_hash=excluded.text_hash, dim=excluded.dim, "
                           "vector=excluded.vector", (pid, model, text_hash(text), int(v.shape[0]),
                                                     v.tobytes()))
            bump_version(db)

    def fill(self, model: str, embed: Callable[[list[str]], np.ndarray],
             limit: int | None = FILL_BATCH * 8) -> int:
        """Embed up to `limit` papers that lack a vector (all when None), in batches; the
        number embedded. Cheap when nothing changed since the last complete fill."""
        with self._fill_lock:
            return self._fill(model, embed, limit)

    def _fill(self, model: str, embed: Callable[[list[str]], np.ndarray], limit: int | None) -> int:
        version = self.version()
        if limit == 0 or self._complete.get(model) == version:
            return 0
        todo = self.missing(model, limit if limit is not None else 10**9)
        done = 0
        for i in range(0, len(todo), FILL_BATCH):
            batch = todo[i:i + FILL_BATCH]
            vecs = _embed(model, embed, batch)
            self.put(model, {pid: (t, v) for (pid, t), v in zip(batch, vecs, strict=True)})
            done += len(batch)
        if limit is None or len(todo) < limit:
            self._complete[model] = self.version()
        return done

    def matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        """(paper ids, float32 matrix of their unit vectors, one row each), loaded once
        per version of the store's papers."""
        version = self.version()
        with self._lock:
            cached = self._cached.get(model)
            if cached and cached[0] == version:
                return cached[1], cached[2]
            rows = self.db.conn.execute("SELECT paper_id, vector FROM paper_vectors WHERE model=? "
                                        "ORDER BY paper_id", (model,)).fetchall()
            ids = [r[0] for r in rows]
            m = (np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float16)
                 .reshape(len(rows), -1).astype(np.float32) if rows else np.zeros((0, 0), np.float32))
            self._cached[model] = (version, ids, m)
            return ids, m

    def nearest(self, model: str, query: np.ndarray, k: int,
                floor: float) -> list[tuple[str, float]]:
        """The `k` papers most similar to a unit `query` vector with cosine >= `floor`."""
        ids, m = self.matrix(model)
        if not ids:
            return []
        sims = m @ np.asarray(query, dtype=np.float32)
        k = min(k, len(ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(ids[i], float(sims[i])) for i in top if sims[i] >= floor]


def _embed(model: str, embed: Callable[[list[str]], np.ndarray],
           batch: list[tuple[str, str]]) -> list[np.ndarray]:
    keys = [(model, text_hash(t)) for _, t in batch]
    with _memo_lock:
        known = {k: _memo[k] for k in keys if k in _memo}
    todo = [t for (_, t), k in zip(batch, keys, strict=True) if k not in known]
    if todo:
        fresh = embed(todo)
        with _memo_lock:
            if len(_memo) > _MEMO_LIMIT:
                _memo.clear()
            for t, v in zip(todo, fresh, strict=True):
                _memo[(model, text_hash(t))] = known[(model, text_hash(t))] = np.asarray(v)
    return [known[k] for k in keys]
