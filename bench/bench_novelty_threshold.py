"""Where "close prior work" starts: a real paper's own five answers against its own text
and against the other papers of the shipped store (MiniLM, the default embedder).

For each replay target of the starter community (assets/community/replay_targets.json,
ten papers, seven fields) its Q1 (problem) and Q5 (method) are embedded like a proposal's
facet and compared with every paper of the store as the novelty check compares them
(title + abstract, rt_core.store.paper_vectors.paper_text). "own" is the paper itself:
what a proposal that restates published work scores. "nearest other" is the best paper
that is not the target; "others p95" the 95th percentile of all the rest (unrelated).

    PYTHONPATH=$PWD .venv/bin/python bench/bench_novelty_threshold.py

It also times the offline check (two facets, no model): the first on a fresh store, then
the median per proposal.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from rt_core import community
from rt_core.models.embed import Embedder
from rt_core.run.novelty import THRESHOLD, assess
from rt_core.store import Store
from rt_core.store.paper_vectors import paper_text
from rt_core.types import Proposal


def main() -> None:
    store = Store(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    community.ensure_loaded(store)
    papers = store.corpus.get_papers(r[0] for r in store.db.conn.execute("SELECT id FROM papers"))
    ids = [p.id for p in papers]
    embed = Embedder().encode
    matrix = embed([paper_text(p.title, p.abstract) for p in papers])
    rows = {"q1": [], "q5": []}
    for target in community.replay_targets():
        if target["paper_id"] not in ids:
            continue
        i = ids.index(target["paper_id"])
        for key in rows:
            sims = matrix @ embed([target["five_q"][key]])[0]
            others = np.delete(sims, i)
            rows[key].append((float(sims[i]), float(others.max()), float(np.percentile(others, 95))))
    print(f"{len(papers)} papers; {len(rows['q1'])} targets")
    for key, vals in rows.items():
        own, near, p95 = (sorted(v[j] for v in vals) for j in range(3))
        print(f"{key}: own median {statistics.median(own):.3f} (min {own[0]:.3f}, max {own[-1]:.3f}); "
              f"nearest other median {statistics.median(near):.3f} (max {near[-1]:.3f}); "
              f"others p95 median {statistics.median(p95):.3f} (max {p95[-1]:.3f})")
        print(f"   at {THRESHOLD}: own flagged {sum(o >= THRESHOLD for o in own)}/{len(own)}, "
              f"nearest other above {sum(n >= THRESHOLD for n in near)}/{len(near)}, "
              f"p95 of the others above {sum(x >= THRESHOLD for x in p95)}/{len(p95)}")

    timings(store)


def timings(store: Store) -> None:
    """Seconds per offline check: the first one (embeds the store's papers once, stored),
    then the median over the ten targets' proposals."""
    targets = community.replay_targets()
    embedder = Embedder(store=store)
    t0 = time.perf_counter()
    assess(Proposal(**targets[0]["five_q"]), store, embedder)
    first = time.perf_counter() - t0
    times = []
    for t in targets:
        t0 = time.perf_counter()
        assess(Proposal(**t["five_q"]), store, embedder)
        times.append(time.perf_counter() - t0)
    print(f"offline check: first {first:.1f} s (embeds the store once), "
          f"then median {statistics.median(times):.3f} s per proposal (n = {len(times)})")


if __name__ == "__main__":
    main()
