"""Paper embeddings, stored once and held in memory as one matrix per process.

Why: a search by meaning must not embed papers at query time (MiniLM takes ~40 ms per
abstract here), and at 100k papers it must not read 100k rows per query either. So each
paper's vector is stored (float16, `paper_vectors`, m013) when it is first needed, and
the whole set is loaded once into a float32 matrix: a query is then one matrix-vector
product (~15 ms at 100k x 384). The matrix is reloaded when the meta counter
`paper_vectors_version` moves; the corpus bumps it whenever a paper is added or its text
changes, and `put` bumps it, so every process sees new papers on its next query.

Above ANN_THRESHOLD vectors the product itself is the cost (1M x 384 float32 is 1.5 GB
read per query, 35-100 ms here depending on the load), so `nearest` narrows the search with
an approximate index (faiss IVF, built in a background thread per model and version) and
then ranks the few hundred candidates it returns exactly against the float32 rows: cosines
and the floor stay exact, only a paper the index fails to propose can be missed (see
docs/PERFORMANCE.md).
"""
from __future__ import annotations

import hashlib
import logging
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
log = logging.getLogger(__name__)

ANN_THRESHOLD = 200_000
"""Below this many vectors `nearest` scans every row exactly, as it always has: the scan is
~8 ms median at 200k here, well inside the search budget, and an index would only add a
build (seconds to tens of seconds), memory and approximation for nothing. Above it the scan
grows towards the budget (35-100 ms at 1M) while the index search stays ~1-3 ms. Per store:
`PaperVectors.ann_threshold` (tests lower it to try the index on a small store)."""
ANN_OVERFETCH = 4  # the index proposes this many times k papers, ranked exactly afterwards
ANN_NPROBE = 64  # inverted lists visited per query; see the recall table bench_store.py prints


def ann_lists(n: int) -> int:
    """Inverted lists for n vectors: ~2 sqrt(n) (2,000 at 1M), the usual IVF rule, so a
    list holds ~500 vectors and training stays tens of seconds on two cores."""
    return max(16, min(65_536, int(2 * n ** 0.5)))


def build_ann_index(m: np.ndarray):
    """An IVF index over the rows of `m` (unit vectors, inner product), 8-bit scalar
    quantised (a quarter of the float32 matrix's memory; the exact re-ranking repairs the
    quantisation error), trained on a sample of the rows."""
    import faiss  # noqa: PLC0415  (large and slow to load; only stores above the threshold use it)

    n, dim = m.shape
    nlist = ann_lists(n)
    index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist,
                                          faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = 10  # k-means iterations: more barely moves recall, costs build time
    sample = np.random.default_rng(0).choice(n, size=min(n, nlist * 40), replace=False)
    index.train(np.ascontiguousarray(m[np.sort(sample)]))
    index.add(np.ascontiguousarray(m))
    return index


def paper_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract or ''}".strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def bump_version(db) -> None:
    """Mark every process's matrix stale (call inside the transaction that changed papers)."""
    db.execute("INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
               "value=CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)", (VERSION_KEY,))


class PaperVectors:
    def __init__(self, db: Database, ann_threshold: int = ANN_THRESHOLD):
        self.db = db
        self.ann_threshold = ann_threshold
        self.ann_nprobe = ANN_NPROBE
        # matrix -> index; replaceable so a test can hold a build back
        self.ann_builder: Callable[[np.ndarray], object] = build_ann_index
        self._ann_lock = threading.Lock()
        self._ann: dict[str, tuple[str, object]] = {}  # model -> (version, index or None if failed)
        self._ann_wanted: dict[str, tuple[str, np.ndarray]] = {}  # model -> next build's input
        self._ann_building: dict[str, str] = {}  # model -> version its build thread works on
        self._ann_threads: dict[str, threading.Thread] = {}
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
        _, ids, m = self._current(model)
        return ids, m

    def _current(self, model: str) -> tuple[str, list[str], np.ndarray]:
        version = self.version()
        with self._lock:
            cached = self._cached.get(model)
            if cached and cached[0] == version:
                return cached
            rows = self.db.conn.execute("SELECT paper_id, vector FROM paper_vectors WHERE model=? "
                                        "ORDER BY paper_id", (model,)).fetchall()
            ids = [r[0] for r in rows]
            m = (np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float16)
                 .reshape(len(rows), -1).astype(np.float32) if rows else np.zeros((0, 0), np.float32))
            self._cached[model] = (version, ids, m)
            return self._cached[model]

    def nearest(self, model: str, query: np.ndarray, k: int, floor: float,
                exact: bool = False) -> list[tuple[str, float]]:
        """The `k` papers most similar to a unit `query` vector with cosine >= `floor`.
        Exact below `ann_threshold` vectors, while the index for the current version is
        being built, and when `exact` (the bench's reference); else through the index."""
        version, ids, m = self._current(model)
        if not ids:
            return []
        query = np.asarray(query, dtype=np.float32)
        if not exact and len(ids) >= self.ann_threshold:
            index = self._index(model, version, m)
            if index is not None:
                return self._approximate(index, ids, m, query, k, floor)
        sims = m @ query
        k = min(k, len(ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(ids[i], float(sims[i])) for i in top if sims[i] >= floor]

    def _approximate(self, index, ids: list[str], m: np.ndarray, query: np.ndarray, k: int,
                     floor: float) -> list[tuple[str, float]]:
        import faiss  # noqa: PLC0415  (see build_ann_index)

        params = faiss.SearchParametersIVF(nprobe=self.ann_nprobe)
        _, labels = index.search(query[None, :], min(len(ids), k * ANN_OVERFETCH), params=params)
        rows = labels[0][labels[0] >= 0]
        # exact cosines from the float32 rows, not the 8-bit codes; einsum, not BLAS: a few
        # hundred rows are too few to share, and waking OpenBLAS's second thread on a busy
        # machine cost ~7 ms a query (measured at 1,600 rows)
        sims = np.einsum("ij,j->i", m[rows], query)
        order = np.argsort(-sims, kind="stable")[:k]
        return [(ids[rows[i]], float(sims[i])) for i in order if sims[i] >= floor]

    def _index(self, model: str, version: str, m: np.ndarray):
        """The index for `version` if it is built; else None, after making sure a build for
        it is under way. One build thread per model: it builds the newest version asked
        for, so papers arriving during a build cost one more build, not one per arrival."""
        with self._ann_lock:
            ready = self._ann.get(model)
            if ready is not None and ready[0] == version:
                return ready[1]
            pending = self._ann_wanted.get(model)
            if self._ann_building.get(model) != version and (pending is None
                                                             or pending[0] != version):
                self._ann_wanted[model] = (version, m)
                if model not in self._ann_threads:
                    thread = threading.Thread(target=self._build_loop, args=(model,),
                                              name=f"ann-index-{model}", daemon=True)
                    self._ann_threads[model] = thread
                    thread.start()
            return None

    def _build_loop(self, model: str) -> None:
        while True:
            with self._ann_lock:
                wanted = self._ann_wanted.pop(model, None)
                if wanted is None:
                    self._ann_building.pop(model, None)
                    del self._ann_threads[model]
                    return
                version, m = wanted
                self._ann_building[model] = version
            try:
                index = self.ann_builder(m)
            except Exception:  # no faiss, no memory: searches stay exact, just slower
                log.exception("approximate index for %s failed; searching exactly", model)
                index = None
            with self._ann_lock:
                self._ann[model] = (version, index)

    def wait_for_index(self, model: str, timeout: float | None = None) -> bool:
        """Wait for the model's index build (if one runs); whether an index for the current
        version is ready. For the bench and tests; queries never wait."""
        with self._ann_lock:
            thread = self._ann_threads.get(model)
        if thread is not None:
            thread.join(timeout)
        with self._ann_lock:
            ready = self._ann.get(model)
        return ready is not None and ready[0] == self.version() and ready[1] is not None


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
