"""Full-text search latency on a store of N synthetic papers (default 100,000).

    .venv/bin/python bench/bench_store.py [--papers 100000] [--queries 300] [--db URL]
Prints p50/p95 per query kind; the target is p95 < 50 ms. `--db postgresql://...` (an empty
database) measures PostgreSQL's index instead of SQLite's; `--pg` starts a throwaway
PostgreSQL server for the run (tests/pgserver.py).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rt_core.store import Store
from rt_core.types import Paper

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
        for i in range(n):
            batch.append(Paper(id=f"syn:{i}", title=" ".join(zipf_words(rng, vocab, 8)),
                               abstract=" ".join(zipf_words(rng, vocab, 120)),
                               authors=[f"Author {rng.randint(1, 20000)}" for _ in range(3)],
                               year=rng.randint(1990, 2025), fields=[rng.choice(FIELDS)]))
            if len(batch) == 2000:
                store.corpus.upsert_papers(batch)
                batch = []
        store.corpus.upsert_papers(batch)
    return time.perf_counter() - started


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--db", help="an empty PostgreSQL database (default: a new SQLite file)")
    ap.add_argument("--pg", action="store_true", help="start a throwaway PostgreSQL server")
    args = ap.parse_args()
    server = None
    if args.pg:
        from tests.pgserver import PgServer

        server = PgServer()
        args.db = server.fresh_database(empty=True)
    try:
        run(args)
    finally:
        if server is not None:
            server.stop()


def run(args) -> None:
    rng = random.Random(0)
    vocab = vocabulary(rng)
    store = Store(args.db or Path(tempfile.mkdtemp()) / "bench.sqlite3")
    print(f"store: {store.dialect}")
    fill_s = fill(store, args.papers, rng, vocab)
    print(f"filled {args.papers} papers in {fill_s:.1f}s ({args.papers / fill_s:.0f} papers/s)")
    if store.dialect == "postgresql":
        store.db.conn.execute("ANALYZE")  # what autovacuum does shortly after a bulk import
    kinds = {
        "one common word": lambda: store.corpus.search_papers(vocab[rng.randint(0, 20)], limit=50),
        "two words": lambda: store.corpus.search_papers(" ".join(rng.sample(vocab[:500], 2)), limit=50),
        "rare word": lambda: store.corpus.search_papers(rng.choice(vocab[1000:]), limit=50),
        "word + field filter": lambda: store.corpus.search_papers(vocab[rng.randint(0, 50)],
                                                           fields=[rng.choice(FIELDS)], limit=50),
        "field filter only": lambda: store.corpus.search_papers("", fields=[rng.choice(FIELDS)], limit=50),
        "researcher name": lambda: store.corpus.search_researchers("author", limit=50),
    }
    print(f"{'query':24} {'p50 ms':>8} {'p95 ms':>8}")
    for name, fn in kinds.items():
        times = []
        for _ in range(args.queries):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1000)
        print(f"{name:24} {statistics.median(times):8.2f} {percentile(times, 0.95):8.2f}")


if __name__ == "__main__":
    main()
