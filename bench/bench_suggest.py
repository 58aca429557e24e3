"""Time of one suggestion (rt_core.suggest, offline), and its quality on the planted tests.

    nice -n 19 .venv/bin/python bench/bench_suggest.py [--papers 100000] [--queries 100]

1. Quality: the planted communities of tests/test_suggest.py (two fields that meet on a
   topic, a distractor field), precision@k of the researchers suggested (share working in
   one of the two fields) and whether both fields are in the first two.
2. The starter community with the bundled MiniLM: each topic below asked once (the query is
   embedded: MiniLM's ~10-40 ms is included) and then again (its vector cached), p50/p95.
3. A synthetic store of N papers (default 100,000) built as bench_store.py builds its own
   (bulk rows, topic-structured 384-d vectors; a query's vector sits near three papers of
   one topic, so a few hundred pass the similarity floor as real topics do), plus
   researchers (3 authors a paper from 20,000, each in the field of their first paper) and
   citations (5 a paper, mostly within the paper's topic): p50/p95 of `suggest` with no
   seed, with a seed, and with a field to avoid. The first query's setup (reading the field
   map, loading the vector matrix) is printed apart.
Time figures on a loaded machine are indicative: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_store as bs  # noqa: E402  (its synthetic store and vectors)
import numpy as np  # noqa: E402

from rt_core import community  # noqa: E402
from rt_core.errors import InputError  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.suggest import suggest  # noqa: E402

STARTER_TOPICS = [
    "language models for galaxy surveys", "machine learning for weather forecasting",
    "predicting crime with graph neural networks", "economics of climate policy",
    "protein structure from deep learning", "brain-inspired neural networks",
    "epidemic forecasting", "materials discovery with language models",
    "fairness of algorithmic decisions in courts", "efficient inference of large models",
    "theorem proving with language models", "dopamine and reward learning",
    "phylogenetic trees from genomes", "dark matter simulations", "labour markets and automation",
]
COMPUTING = {"nlp", "systems"}
# topics between two starter fields, chosen before looking at any result: (topic, side, side)
BETWEEN = [
    ("language models for galaxy surveys", {"nlp"}, {"astronomy"}),
    ("machine learning for weather forecasting", COMPUTING, {"climate"}),
    ("neural networks as models of the brain", COMPUTING, {"neuroscience"}),
    ("forecasting epidemics from climate data", {"public_health"}, {"climate"}),
    ("economic inequality and climate policy", {"economics"}, {"climate"}),
    ("language models that prove theorems", {"nlp"}, {"mathematics"}),
]
RESEARCHERS = 20_000
REFS = 5


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def timed(fn) -> float:
    """Milliseconds of one call; a topic that matches nothing (its message) counts too."""
    started = time.perf_counter()
    try:
        fn()
    except InputError as exc:
        print(f"  ({exc})")
    return (time.perf_counter() - started) * 1000


def line(name: str, times: list[float]) -> None:
    print(f"  {name:34} n={len(times):4} p50 {statistics.median(times):7.1f} ms  "
          f"p95 {percentile(times, 0.95):7.1f} ms")


def quality(tmp: Path) -> None:
    from tests.test_suggest import TOPIC, plant, precision_at  # the planted community

    print("quality on the planted communities (tests/test_suggest.py):")
    for bridge in (True, False):
        store = plant(Store(tmp / f"planted-{bridge}.sqlite3"), bridge=bridge)
        result = suggest(store, TOPIC, limit=6)
        firsts = [set(s.fields) for s in result.researchers[:2]]
        both = {"astro", "nlp"} <= set().union(*firsts)
        print(f"  {'with' if bridge else 'without'} the shared paper: precision@3 "
              f"{precision_at(result, 3):.2f}, precision@6 {precision_at(result, 6):.2f} "
              f"({len(result.researchers)} suggested), both fields in the first two: {both}")
        far = suggest(store, TOPIC, far_from="nlp", limit=10)
        only = sum(set(s.fields) == {"nlp"} for s in far.researchers + far.papers)
        print(f"    far from nlp: {only} of {len(far.researchers) + len(far.papers)} "
              "suggestions work only in nlp")
        store.close()


def starter_quality(store: Store, k: int = 4) -> None:
    """For topics between two starter fields: are both sides among the first k researchers,
    and what share of the first k works on either side (precision@k)."""
    print(f"quality on the starter community (first {k} researchers):")
    hits = []
    for topic, one, other in BETWEEN:
        top = [set(s.fields) for s in suggest(store, topic, limit=k).researchers]
        both = any(f & one for f in top) and any(f & other for f in top)
        right = sum(bool(f & (one | other)) for f in top) / max(1, len(top))
        hits.append(both)
        print(f"  {topic:44} both sides: {str(both):5}  precision@{k} {right:.2f}")
    print(f"  both sides among the first {k}: {sum(hits)} of {len(hits)} topics")


def starter(tmp: Path) -> None:
    store = Store(tmp / "starter.sqlite3")
    community.ensure_loaded(store)
    setup = timed(lambda: suggest(store, "galaxy surveys"))
    print(f"starter community ({len(STARTER_TOPICS)} topics; first call embeds every paper: "
          f"{setup / 1000:.1f} s):")
    first = [timed(lambda t=t: suggest(store, t)) for t in STARTER_TOPICS]
    again = [timed(lambda t=t: suggest(store, t)) for t in STARTER_TOPICS for _ in range(3)]
    line("new topic (MiniLM embeds the query)", first)
    line("topic asked before", again)
    starter_quality(store)
    store.close()


def synthetic_people(store: Store, rng: random.Random, topic_of: np.ndarray) -> None:
    """Researchers, authorship and citations for the synthetic papers, in bulk."""
    ids = [r[0] for r in store.db.conn.execute("SELECT id FROM papers ORDER BY rowid")]
    fields = dict(store.db.conn.execute("SELECT paper_id, field_id FROM paper_fields").fetchall())
    by_topic: dict[int, list[str]] = {}
    for pid, t in zip(ids, topic_of, strict=True):
        by_topic.setdefault(int(t), []).append(pid)
    authorship, first_field = [], {}
    for pid in ids:
        for rid in {f"res:{rng.randint(1, RESEARCHERS)}" for _ in range(3)}:
            authorship.append((rid, pid))
            first_field.setdefault(rid, fields.get(pid, "nlp"))
    cites = set()
    for pid, t in zip(ids, topic_of, strict=True):
        near = by_topic[int(t)]
        for _ in range(REFS):
            other = rng.choice(near) if rng.random() < 0.8 else rng.choice(ids)
            if other != pid:
                cites.add((pid, other))
    with store.transaction() as db:
        db.executemany("INSERT INTO researchers(id, name) VALUES (?, ?)",
                       [(rid, f"Researcher {rid[4:]}") for rid in first_field])
        db.executemany("INSERT INTO researcher_fields VALUES (?, ?)", list(first_field.items()))
        db.executemany("INSERT INTO authorship VALUES (?, ?)", authorship)
        db.executemany("INSERT INTO citations VALUES (?, ?)", sorted(cites))
    print(f"  {len(first_field)} researchers, {len(authorship)} authorships, {len(cites)} citations")


def large(tmp: Path, n: int, queries: int) -> None:
    rng = random.Random(0)
    vocab = bs.vocabulary(rng)
    store = Store(tmp / "large.sqlite3")
    store.corpus.upsert_fields(json.loads((community.ASSETS / "fields.json").read_text("utf-8")))
    print(f"synthetic store of {n} papers:")
    print(f"  filled in {bs.bulk_fill(store, n, rng, vocab):.1f}s")
    topics = bs.hybrid(store, rng, "topics")
    gen = np.random.default_rng(0)  # the topic of each paper, as bs.hybrid drew it
    synthetic_people(store, rng, gen.integers(0, bs.TOPICS, n))
    seed = store.db.conn.execute("SELECT id FROM researchers LIMIT 1").fetchone()[0]
    setup = timed(lambda: suggest(store, "first", topics=topics))
    print(f"  first query's setup (field map, vectors): {setup / 1000:.2f} s")
    words = [" ".join(rng.sample(vocab[:500], 3)) for _ in range(queries)]
    line("no seed", [timed(lambda w=w: suggest(store, w, topics=topics)) for w in words])
    line("with a seed researcher", [timed(lambda w=w: suggest(store, w, seed=seed, topics=topics))
                                    for w in words])
    line("far from a field", [timed(lambda w=w: suggest(store, w, far_from="nlp", topics=topics))
                              for w in words])
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--skip-large", action="store_true", help="quality and starter store only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rt-bench-suggest-") as tmp:
        quality(Path(tmp))
        starter(Path(tmp))
        if not args.skip_large:
            large(Path(tmp), args.papers, args.queries)
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
