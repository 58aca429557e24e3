"""Search latency on a store of N synthetic papers (default 100,000): full-text, and the
hybrid topic search (full-text fused with cosine over stored paper vectors).

    .venv/bin/python bench/bench_store.py [--papers 100000] [--queries 300] [--db URL]
Prints p50/p95 per query kind; the target is p95 < 50 ms. The synthetic papers' vectors
are random unit vectors (384-d, like MiniLM's), and a query's vector is the normalised
mean of three papers' vectors, so a few papers pass the similarity floor as real
queries do: timing does not depend on content. Embedding the query text with MiniLM
(~10-20 ms, once per distinct query, cached) is not included. `--db postgresql://...` (an empty
database) measures PostgreSQL's index instead of SQLite's; `--pg` starts a throwaway
PostgreSQL server for the run (tests/pgserver.py).

`--vectors topics` (the default) gives the papers topic structure, as sentence embeddings
have: 2,000 random topic directions, each paper's vector its topic's plus noise (cosine
~0.6 to the topic, ~0.36 between two papers of a topic), and a query's vector the mean of
three papers of one topic, so ~500 papers pass the similarity floor. `--vectors random`
is the older mix: isotropic random vectors, the query the mean of three random papers
(only those three pass the floor), the worst case for an approximate index. Above the
store's ANN threshold (paper_vectors.py) the bench waits for the index build, prints its
time and the recall of `nearest` against the exact scan for several nprobe values, then
times the query mix with `--nprobe`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from rt_core.sources.ids import normalise_title
from rt_core.store import Store
from rt_core.store.paper_vectors import bump_version, paper_text
from rt_core.store.search import fields_json
from rt_core.store.topics import CANDIDATES, MIN_SIMILARITY, Topics
from rt_core.types import Paper

DIM = 384

FIELDS = ["nlp", "astronomy", "biology", "criminology", "mathematics", "systems", "neuroscience",
          "materials", "economics", "climate", "public_health"]


def vocabulary(rng: random.Random, n: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 10))) for _ in range(n)]


def zipf_words(rng, vocab, k):
    # a few words are very common, most are rare, as in real abstracts
    return [vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)] for _ in range(k)]


def fill(store: Store, n: int, rng: random.Random, vocab: list[str]) -> float:
    started = time.perf_counter()
    batch = []
    with store.transaction():
        for p in synthetic(n, rng, vocab):
            batch.append(p)
            if len(batch) == 2000:
                store.corpus.upsert_papers(batch)
                batch = []
        store.corpus.upsert_papers(batch)
    return time.perf_counter() - started


def synthetic(n: int, rng: random.Random, vocab: list[str]):
    for i in range(n):
        # the serial number keeps titles distinct: else ~1 in 4 would merge as duplicates
        yield Paper(id=f"syn:{i}", title=" ".join(zipf_words(rng, vocab, 8)) + f" s{i}",
                    abstract=" ".join(zipf_words(rng, vocab, 120)),
                    authors=[f"Author {rng.randint(1, 20000)}" for _ in range(3)],
                    year=rng.randint(1990, 2025), fields=[rng.choice(FIELDS)])


BULK_COLS = ("id", "title", "abstract", "authors_json", "year", "norm_title", "fields_json")


def bulk_fill(store: Store, n: int, rng: random.Random, vocab: list[str]) -> float:
    """The same papers as `fill`, written as `upsert_papers` writes a new paper (same
    columns, same full-text rows) but in bulk: COPY on PostgreSQL, executemany on SQLite,
    without the per-paper duplicate look-ups (the synthetic papers have none). For sizes
    where the import path itself would take most of the time available."""
    started = time.perf_counter()
    batch: list[Paper] = []
    with store.transaction() as db:
        for p in synthetic(n, rng, vocab):
            batch.append(p)
            if len(batch) == 20000:
                _bulk_write(store, db, batch)
                batch = []
        _bulk_write(store, db, batch)
        # the links' copy of each paper's rowid, as upsert_papers writes it (m015)
        db.execute("UPDATE paper_fields SET paper_rowid=(SELECT rowid FROM papers "
                   "WHERE papers.id=paper_fields.paper_id)")
        bump_version(db)
    return time.perf_counter() - started


def _bulk_write(store: Store, db, batch: list[Paper]) -> None:
    rows = [(p.id, p.title, p.abstract, json.dumps(p.authors), p.year, normalise_title(p.title),
             fields_json(p.fields)) for p in batch]
    links = [(p.id, f) for p in batch for f in sorted(set(p.fields))]
    if store.dialect == "postgresql":
        with db.raw.cursor() as cur:
            with cur.copy(f"COPY papers ({', '.join(BULK_COLS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            with cur.copy("COPY paper_fields (paper_id, field_id) FROM STDIN") as copy:
                for row in links:
                    copy.write_row(row)
        return
    db.executemany(f"INSERT INTO papers ({', '.join(BULK_COLS)}) VALUES "
                   f"({', '.join('?' * len(BULK_COLS))})", rows)
    db.executemany("INSERT INTO papers_fts(rowid, title, abstract, authors) SELECT rowid, title, "
                   "abstract, ? FROM papers WHERE id=?", [("; ".join(p.authors), p.id) for p in batch])
    db.executemany("INSERT INTO paper_fields (paper_id, field_id) VALUES (?, ?)", links)


TOPICS = 2000
TOPIC_NOISE = 0.068  # per coordinate: cosine ~0.6 between a paper and its topic


def hybrid(store: Store, rng: random.Random, kind: str = "topics") -> Topics:
    """Unit vectors stored for every paper (see the module docstring), the matrix loaded
    once; a Topics whose query vectors sit near three papers (of one topic)."""
    gen = np.random.default_rng(0)
    started = time.perf_counter()
    rows = store.db.conn.execute("SELECT id, title, abstract FROM papers").fetchall()
    topic_of = gen.integers(0, TOPICS, len(rows))
    if kind == "topics":
        centres = gen.standard_normal((TOPICS, DIM)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        vecs = centres[topic_of] + TOPIC_NOISE * gen.standard_normal((len(rows), DIM),
                                                                     dtype=np.float32)
    else:
        vecs = gen.standard_normal((len(rows), DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    members = []  # paper rows of each topic
    if kind == "topics":
        order = np.argsort(topic_of, kind="stable")
        members = np.split(order, np.searchsorted(topic_of[order], np.arange(1, TOPICS)))
    store.corpus.vectors.put("bench-random", {r[0]: (paper_text(r[1], r[2]), vecs[i])
                                              for i, r in enumerate(rows)})
    print(f"stored {len(rows)} paper vectors in {time.perf_counter() - started:.1f}s")

    def embed(texts):
        if members:
            picks = np.stack([vecs[gen.choice(members[topic_of[gen.integers(len(rows))]], 3)].mean(axis=0)
                              for _ in texts])
        else:
            picks = vecs[gen.choice(len(rows), size=(len(texts), 3))].mean(axis=1)
        return picks / np.linalg.norm(picks, axis=1, keepdims=True)

    topics = Topics(store.corpus, store.corpus.vectors, "bench-random", embed)
    started = time.perf_counter()
    topics.prepare()
    store.corpus.vectors.matrix("bench-random")
    print(f"first query's setup (check for missing vectors, load the matrix): "
          f"{time.perf_counter() - started:.1f}s")
    return topics


def approximate(topics: Topics, nprobe: int, sweep: list[int], n_queries: int = 50) -> None:
    """Above the threshold: the index build's time, then recall of `nearest` against the
    exact scan (every paper of the exact top k found, and of those at or above the floor)
    at the two k the hybrid asks for, per nprobe; leaves `nprobe` set for the timings."""
    vectors, model = topics.vectors, topics.model
    ids, _ = vectors.matrix(model)
    if len(ids) < vectors.ann_threshold:
        print(f"{len(ids)} vectors < ann_threshold {vectors.ann_threshold}: exact scan only")
        return
    queries = [topics.query_vector(f"recall probe {i}") for i in range(n_queries)]
    started = time.perf_counter()
    vectors.nearest(model, queries[0], CANDIDATES, MIN_SIMILARITY)  # starts the build
    answered = (time.perf_counter() - started) * 1000
    vectors.wait_for_index(model)
    print(f"index build (background; the first query answered exactly in {answered:.0f} ms): "
          f"{time.perf_counter() - started:.1f}s, {vectors._ann[model][1].ntotal} vectors, "
          f"{vectors._ann[model][1].nlist} lists")
    for k in (CANDIDATES, CANDIDATES * 4):
        truth = [vectors.nearest(model, q, k, -1.0, exact=True) for q in queries]
        started = time.perf_counter()
        for q in queries[:10]:
            vectors.nearest(model, q, k, -1.0, exact=True)
        exact_ms = (time.perf_counter() - started) * 100
        for probes in sweep:
            vectors.ann_nprobe = probes
            top, floor, times = [], [], []
            for q, want in zip(queries, truth, strict=True):
                t = time.perf_counter()
                got = {pid for pid, _ in vectors.nearest(model, q, k, -1.0)}
                times.append((time.perf_counter() - t) * 1000)
                top.append(len(got & {pid for pid, _ in want}) / len(want))
                above = {pid for pid, s in want if s >= MIN_SIMILARITY}
                if above:
                    floor.append(len(got & above) / len(above))
            print(f"k={k} nprobe={probes:4}: recall@k {statistics.mean(top):.3f}, recall of the "
                  f"{statistics.mean(len([1 for _, s in w if s >= MIN_SIMILARITY]) for w in truth):.0f}"
                  f" above the floor {statistics.mean(floor) if floor else float('nan'):.3f}, "
                  f"median {statistics.median(times):.2f} ms (exact scan {exact_ms:.1f} ms)")
    vectors.ann_nprobe = nprobe
    print(f"timings below with nprobe={nprobe}")


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def profile(kinds: dict, n: int) -> None:
    """Where each kind's time goes: the store's and the vectors' functions by cumulative
    time (cProfile's overhead inflates Python-heavy parts a little)."""
    import cProfile
    import pstats

    for name, fn in kinds.items():
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(n):
            fn()
        prof.disable()
        print(f"--- profile: {name}, {n} queries (cumulative s)")
        stats = pstats.Stats(prof)
        rows = [(ct, f"{func[2]} ({Path(func[0]).name}:{func[1]})")
                for func, (_, _, _, ct, _) in stats.stats.items()
                if "rt_core" in func[0] or any(w in func[2] for w in ("execute", "fetch", "search"))]
        for ct, label in sorted(rows, reverse=True)[:14]:
            print(f"  {ct:7.3f}  {label}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--db", help="an empty PostgreSQL database (default: a new SQLite file)")
    ap.add_argument("--pg", action="store_true", help="start a throwaway PostgreSQL server")
    ap.add_argument("--shared-buffers", help="with --pg: PostgreSQL's shared_buffers, e.g. 3GB")
    ap.add_argument("--bulk", action="store_true",
                    help="fill with COPY / executemany instead of the import path (bulk_fill)")
    ap.add_argument("--vectors", choices=("topics", "random"), default="topics",
                    help="paper vectors with topic structure, or isotropic random (docstring)")
    ap.add_argument("--nprobe", type=int, default=None,
                    help="inverted lists visited per query (default: paper_vectors.ANN_NPROBE)")
    ap.add_argument("--sweep", default="8,16,32,64,128", help="nprobe values for the recall table")
    ap.add_argument("--profile", action="store_true",
                    help="after the timings, cProfile each hybrid kind (where its time goes)")
    ap.add_argument("--ann-threshold", type=int, default=None,
                    help="the store's ANN threshold (default: paper_vectors.ANN_THRESHOLD)")
    args = ap.parse_args()
    server = None
    if args.pg:
        from tests.pgserver import PgServer

        server = PgServer()
        if args.shared_buffers:  # what a lab would tune for a store larger than 128 MB
            server.admin.execute(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}'")
            server.halt()
            server.start()
        args.db = server.fresh_database(empty=True)
    try:
        run(args)
    finally:
        if server is not None:
            server.stop()


def run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="rt-bench-") as tmp:  # a 1M-paper SQLite file is ~3 GB
        measure(args, Path(tmp))


def measure(args, tmp: Path) -> None:
    rng = random.Random(0)
    vocab = vocabulary(rng)
    store = Store(args.db or tmp / "bench.sqlite3")
    print(f"store: {store.dialect}")
    if store.dialect == "postgresql":
        print("shared_buffers:", store.db.conn.execute("SHOW shared_buffers").fetchone()[0])
    fill_s = (bulk_fill if args.bulk else fill)(store, args.papers, rng, vocab)
    stored = store.db.conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    print(f"filled {args.papers} papers ({stored} stored) in {fill_s:.1f}s ({args.papers / fill_s:.0f} papers/s)")
    if store.dialect == "postgresql":
        # what autovacuum does shortly after a bulk import: statistics, and the visibility
        # hints that the first reads would otherwise write back page by page
        store.db.conn.execute("VACUUM ANALYZE")
    topics = hybrid(store, rng, args.vectors)
    if args.ann_threshold is not None:
        topics.vectors.ann_threshold = args.ann_threshold
    approximate(topics, args.nprobe or topics.vectors.ann_nprobe,
                [int(x) for x in args.sweep.split(",") if x])
    kinds = {
        "one common word": lambda: store.corpus.search_papers(vocab[rng.randint(0, 20)], limit=50),
        "two words": lambda: store.corpus.search_papers(" ".join(rng.sample(vocab[:500], 2)), limit=50),
        "rare word": lambda: store.corpus.search_papers(rng.choice(vocab[1000:]), limit=50),
        "word + field filter": lambda: store.corpus.search_papers(vocab[rng.randint(0, 50)],
                                                           fields=[rng.choice(FIELDS)], limit=50),
        "field filter only": lambda: store.corpus.search_papers("", fields=[rng.choice(FIELDS)], limit=50),
        "researcher name": lambda: store.corpus.search_researchers("author", limit=50),
        "hybrid: one common word": lambda: topics.papers(vocab[rng.randint(0, 20)], limit=50),
        "hybrid: two words": lambda: topics.papers(" ".join(rng.sample(vocab[:500], 2)), limit=50),
        "hybrid: rare word": lambda: topics.papers(rng.choice(vocab[1000:]), limit=50),
        "hybrid: word + field": lambda: topics.papers(vocab[rng.randint(0, 50)],
                                                      fields=[rng.choice(FIELDS)], limit=50),
        "topic researchers": lambda: topics.researchers(" ".join(rng.sample(vocab[:500], 2)),
                                                        limit=50),
    }
    print(f"{'query':24} {'p50 ms':>8} {'p95 ms':>8}")
    for name, fn in kinds.items():
        times = []
        for _ in range(args.queries):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1000)
        print(f"{name:24} {statistics.median(times):8.2f} {percentile(times, 0.95):8.2f}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.profile:
        profile({name: fn for name, fn in kinds.items() if "hybrid" in name or "topic" in name},
                args.queries)
    print(f"peak memory of the bench process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
