"""The bank of ideas at 10,000 ideas: p50/p95 of a search and of the Ideas page's query.

    nice -n 19 .venv/bin/python bench/bench_ideas.py [--runs 2500] [--repeat 40] [--embed synthetic|minilm]
        [--db postgresql://...]

A store (a fresh SQLite file unless --db names an empty PostgreSQL database) gets N runs of
four candidates each (2,500 runs: 10,000 ideas), written through `Runs.create` as a run's
save writes them, from four owners (browsers) and three models. Each idea is made of words
of one of 60 topics and one of 40 methods, so searches match a few hundred ideas by words.

Then, every figure over `--repeat` queries:
- the first read: embedding every idea and recording seen-before (setup, printed apart);
- the page's query: a page, newest first, as the operator and as one visitor (the access
  rule applied to 2,500 runs), and with a field filter; and everything one draw of the Ideas
  page asks (a page, the 20 starred ideas, the open idea and its group of near-duplicates);
- a search by words and meaning (the query embedded: with `--embed minilm` MiniLM's own time
  is included; the default `synthetic` embedder gives topic-structured 384-d vectors without
  a model, so the figure is the bank's own work: at 10,000 ideas MiniLM would take minutes
  of setup on this machine).
Time figures on a loaded machine are indicative: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

from rt_core.access import Viewer  # noqa: E402
from rt_core.ideas.bank import Bank, Query  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import Candidate, Lead, MetaReview, Proposal, Run, RunConfig  # noqa: E402

TOPICS = [f"{a} {b}" for a in ("galaxy", "protein", "wheat", "songbird", "glacier", "courtroom", "jazz",
                               "coral", "volcano", "bus", "vaccine", "river")
          for b in ("surveys", "dynamics", "yields", "archives", "networks")]
METHODS = [f"{a} {b}" for a in ("graph", "bayesian", "transformer", "causal", "agent", "spectral", "survival",
                                "contrastive")
           for b in ("models", "inference", "simulation", "regression", "clustering")]
FIELDS = ["astronomy", "biology", "agriculture", "ecology", "geology", "law", "music", "nlp"]
OWNERS = ["owner-a", "owner-b", "owner-c", "owner-d"]
MODELS = ["scripted/demo", "gpt-4o-mini", "local/qwen"]
DIM = 384


def synthetic_embed(texts: list[str]) -> np.ndarray:
    """A vector near its topic's centre (the first topic named in the text), a little noise
    from the text itself: ideas of one topic are close, as MiniLM would place them."""
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(len(TOPICS) + 1, DIM)).astype(np.float32)
    out = []
    for t in texts:
        k = next((i for i, topic in enumerate(TOPICS) if topic in t), len(TOPICS))
        noise = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(size=DIM)
        v = centres[k] + 0.6 * noise.astype(np.float32)
        out.append(v / np.linalg.norm(v))
    return np.stack(out)


def fill(store: Store, runs: int) -> None:
    rng = np.random.default_rng(11)
    for n in range(runs):
        cands = []
        for c in range(4):
            topic, method = TOPICS[rng.integers(len(TOPICS))], METHODS[rng.integers(len(METHODS))]
            p = Proposal(q1=f"Can {topic} be explained with {method} (idea {n}.{c})?", q2="It matters.",
                         q3="Data are scarce.", q4="Nobody combined them.", q5=f"We apply {method} to {topic} data.")
            cands.append(Candidate(f"c{c + 1}", p, lead=Lead(fields=[FIELDS[rng.integers(len(FIELDS))]]),
                                   meta_review=MetaReview(score=float(rng.integers(3, 10)))))
        day = 1 + n * 300 // max(1, runs)
        run = Run(id=f"bench{n:06d}", config=RunConfig(model=MODELS[n % len(MODELS)]), status="done",
                  created_at=f"2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}T{n % 24:02d}:00:00+00:00",
                  candidates=cands, proposal=cands[0].proposal)
        store.runs.create(run, owner_hash=OWNERS[n % len(OWNERS)])


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for i in range(repeat):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times) * 1000, times[min(len(times) - 1, int(0.95 * len(times)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2500)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--embed", choices=("synthetic", "minilm"), default="synthetic")
    ap.add_argument("--db", help="an empty PostgreSQL database (default: a fresh SQLite file)")
    args = ap.parse_args()
    where = args.db or Path(tempfile.mkdtemp(prefix="bench-ideas-")) / "ideas.sqlite3"
    store = Store(where)
    t = time.perf_counter()
    fill(store, args.runs)
    print(f"store ({store.dialect}): {store.ideas.count()} ideas from {args.runs} runs, "
          f"written in {time.perf_counter() - t:.1f} s")
    bank = Bank(store) if args.embed == "minilm" else Bank(store, synthetic_embed, model="synthetic")
    t = time.perf_counter()
    bank.refresh()
    seen = sum(1 for r in store.ideas.select() if r["seen_before"])
    print(f"first read (embed {args.embed} + seen before): {time.perf_counter() - t:.1f} s; {seen} ideas seen before")
    operator, visitor = Viewer(shared=True, operator=True), Viewer(shared=True, owner_hash=OWNERS[1])
    texts = [f"{TOPICS[i * 7 % len(TOPICS)]} {METHODS[i * 3 % len(METHODS)].split()[0]}" for i in range(args.repeat)]
    def whole_page(i: int) -> None:
        """What one draw of the Ideas page asks: a page, the starred ideas, the open idea and its group."""
        page = bank.find(operator, Query(page=i % 5))
        bank.starred(operator)
        idea = bank.one(operator, page.ideas[0].id)
        bank.group(operator, idea)
        store.ideas.models()

    for iid in store.ideas.ids()[:20]:
        store.ideas.star(iid)
    figures = {
        "the whole page": whole_page,
        "page, operator": lambda i: bank.find(operator, Query(page=i % 5)),
        "page, visitor": lambda i: bank.find(visitor, Query(page=i % 5)),
        "page, field filter": lambda i: bank.find(operator, Query(field=FIELDS[i % len(FIELDS)])),
        "search, operator": lambda i: bank.find(operator, Query(text=texts[i])),
        "search, visitor": lambda i: bank.find(visitor, Query(text=texts[i])),
    }
    print(f"load average {os.getloadavg()[0]:.1f}; {args.repeat} queries each")
    for name, fn in figures.items():
        fn(0)  # the matrix of vectors read once
        p50, p95 = timed(fn, args.repeat)
        print(f"{name:22s} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
    store.close()


if __name__ == "__main__":
    main()
