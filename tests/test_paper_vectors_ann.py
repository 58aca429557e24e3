"""The approximate index behind `PaperVectors.nearest` for large stores, tried on a small
one by lowering the threshold: results match the exact scan, the exact scan answers while
the index is built, a new version of the papers is never searched with the old index, and
below the threshold nothing changes."""
from __future__ import annotations

import threading

import numpy as np

from rt_core.store.paper_vectors import PaperVectors, build_ann_index
from rt_core.types import Paper

MODEL = "test-random"
N, DIM, K, FLOOR = 2000, 32, 50, 0.2


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 40 topics, as sentence embeddings of papers group by subject."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((40, DIM)))
    return unit(centres[rng.integers(0, 40, n)] + 0.15 * rng.standard_normal((n, DIM)))


def stored(store, vecs: np.ndarray, first: int = 0, **kwargs) -> PaperVectors:
    ids = [f"p{first + i:05d}" for i in range(len(vecs))]
    with store.transaction():
        store.corpus.upsert_papers([Paper(id=pid, title=f"Paper {pid}") for pid in ids])
    vectors = PaperVectors(store.db, **kwargs)
    vectors.put(MODEL, {pid: (pid, v) for pid, v in zip(ids, vecs, strict=True)})
    return vectors


def exact(vectors: PaperVectors, query: np.ndarray, k: int = K) -> list[tuple[str, float]]:
    """The reference: every stored row's cosine, best k at or above the floor."""
    ids, m = vectors.matrix(MODEL)
    sims = m @ query
    order = np.argsort(-sims, kind="stable")[:k]
    return [(ids[i], float(sims[i])) for i in order if sims[i] >= FLOOR]


def queries(vecs: np.ndarray, n: int = 20) -> np.ndarray:
    rng = np.random.default_rng(1)
    return unit(vecs[rng.integers(0, len(vecs), (n, 2))].mean(axis=1))


def same(got, want) -> bool:
    return ([p for p, _ in got] == [p for p, _ in want]
            and np.allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-5))


def test_below_the_threshold_the_scan_is_exact_and_no_index_is_built(store):
    vecs = clustered(N)
    vectors = stored(store, vecs)  # default threshold, far above N

    def no_build(m):
        raise AssertionError("no index below the threshold")

    vectors.ann_builder = no_build
    for q in queries(vecs):
        assert same(vectors.nearest(MODEL, q, K, FLOOR), exact(vectors, q))
    assert not vectors._ann_threads and not vectors.wait_for_index(MODEL, timeout=0)


def test_after_the_build_the_index_finds_the_exact_top_k_with_exact_cosines(store):
    vecs = clustered(N)
    vectors = stored(store, vecs, ann_threshold=500)
    qs = queries(vecs)
    vectors.nearest(MODEL, qs[0], K, FLOOR)  # starts the build
    assert vectors.wait_for_index(MODEL, timeout=60)
    ids, m = vectors.matrix(MODEL)
    row = {pid: i for i, pid in enumerate(ids)}
    recalls = []
    for q in qs:
        got, want = vectors.nearest(MODEL, q, K, FLOOR), exact(vectors, q)
        assert want and len(got) <= K
        recalls.append(len({p for p, _ in got} & {p for p, _ in want}) / len(want))
        for pid, sim in got:  # each cosine is the float32 row's, never the 8-bit code's
            assert sim >= FLOOR and abs(sim - float(m[row[pid]] @ q)) < 1e-6
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert np.mean(recalls) >= 0.9


def test_the_exact_scan_answers_while_the_index_is_being_built(store):
    vecs = clustered(N)
    vectors = stored(store, vecs, ann_threshold=500)
    started, release = threading.Event(), threading.Event()

    def held(m):
        started.set()
        assert release.wait(60)
        return build_ann_index(m)

    vectors.ann_builder = held
    try:
        qs = queries(vecs)
        assert same(vectors.nearest(MODEL, qs[0], K, FLOOR), exact(vectors, qs[0]))
        assert started.wait(60)  # the build is under way and held
        for q in qs[1:]:
            assert same(vectors.nearest(MODEL, q, K, FLOOR), exact(vectors, q))
        assert not vectors.wait_for_index(MODEL, timeout=0)
    finally:
        release.set()
    assert vectors.wait_for_index(MODEL, timeout=60)


def test_new_papers_are_never_searched_with_the_old_index(store):
    vecs = clustered(N)
    vectors = stored(store, vecs, ann_threshold=500)
    builds: list[int] = []
    release = threading.Event()
    release.set()

    def counted(m):
        builds.append(len(m))
        assert release.wait(60)
        return build_ann_index(m)

    vectors.ann_builder = counted
    q = queries(vecs)[0]
    vectors.nearest(MODEL, q, K, FLOOR)
    assert vectors.wait_for_index(MODEL, timeout=60) and builds == [N]
    # a new paper whose vector is the query itself: the best match of the new version
    release.clear()
    with store.transaction():
        store.corpus.upsert_papers([Paper(id="new", title="A paper that arrives later")])
    vectors.put(MODEL, {"new": ("new", q)})
    try:
        got = vectors.nearest(MODEL, q, K, FLOOR)  # old index ready, new one held
        assert got[0][0] == "new" and abs(got[0][1] - 1.0) < 1e-3
        assert same(got, exact(vectors, q))
        assert not vectors.wait_for_index(MODEL, timeout=0)
    finally:
        release.set()
    assert vectors.wait_for_index(MODEL, timeout=60) and builds == [N, N + 1]
    got = vectors.nearest(MODEL, q, K, FLOOR)  # now through the new index
    assert got[0][0] == "new" and abs(got[0][1] - 1.0) < 1e-3
