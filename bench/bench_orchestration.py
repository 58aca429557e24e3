"""Orchestration overhead: a full run against a loopback OpenAI-compatible server that
answers every chat call after a fixed latency L, with the local (in-process) embedder.

With M authors and k reviewers, and concurrency >= max(M, k), the dependent model rounds
are: read authors, write drafts, aggregate, read reviewers, review, meta-review: 6 rounds,
so the critical path is 6 x L. Reviewer choice must not add a round: the candidates are
embedded while the authors read and write, and only the proposal is embedded between the
stages. Also counts calls of a cold run and of a warm re-run (which must be 0).

Every run counts, the first of the process too: a run is timed from the request (Start
pressed) to the finished run saved. The bench starts like the app: the Run page warms
the model client when it is drawn (rt_core.run.pipeline.warmup), before anyone can press Start;
`--cold-process` skips that, as a one-shot CLI process does, so its first run also waits
for the imports.

    .venv/bin/python bench/bench_orchestration.py [--latency 0.5] [--repeats 5] [--cold-process]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core import community  # noqa: E402
from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.models.scripted import demo_responder  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.run.pipeline.warmup import warm_up  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402

ROUNDS = 6


def one_run(server, store, authors, papers, k):
    before = len(server.requests)
    started = time.perf_counter()
    cfg = RunConfig(researcher_ids=authors, paper_ids=papers, num_reviewers=k, concurrency=10,
                    model="openai/bench", base_url=server.base_url)
    request = RunRequest.with_key(cfg, "sk-bench")
    emb = Embedder(store=store)  # the local MiniLM, as in a default run
    run = Simulation(request, store, embedder=emb).run_sync()
    wall = time.perf_counter() - started
    assert run.status == "done", run.errors
    return wall, len(server.requests) - before, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--authors", type=int, default=5)
    ap.add_argument("--reviewers", type=int, default=5)
    ap.add_argument("--cold-process", action="store_true",
                    help="no warm-up before the first run (a one-shot CLI process)")
    args = ap.parse_args()
    if not args.cold_process:
        warm_up().join()  # the Run page was drawn before Start could be pressed

    server = OpenAIServer(responder=lambda msgs: demo_responder(msgs, {}), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    walls, calls = [], []
    try:
        for i in range(args.repeats):  # every run counts, the process's first too
            store = Store(tmp / f"bench-{i}.sqlite3")
            community.ensure_loaded(store)
            researchers = [r.id for r in store.corpus.search_researchers(fields=["nlp"], limit=50)]
            researchers += [r.id for r in store.corpus.search_researchers(fields=["astronomy"], limit=50)]
            authors = researchers[:args.authors]
            papers = [p.id for p in store.corpus.search_papers(fields=["nlp"], limit=3)] + \
                     [p.id for p in store.corpus.search_papers(fields=["astronomy"], limit=2)]
            wall, n, run = one_run(server, store, authors, papers, args.reviewers)
            last = run
            walls.append(wall)
            calls.append(n)
            _warm_wall, warm_calls, warm = one_run(server, store, authors, papers, args.reviewers)
            assert warm_calls == 0 and warm.usage.calls == 0
    finally:
        server.close()
    ideal = ROUNDS * args.latency
    med = statistics.median(walls)
    mean = statistics.mean(walls)
    print(f"latency L={args.latency}s, M={args.authors} authors, k={args.reviewers} reviewers, "
          f"{args.repeats} repeats, {'cold process' if args.cold_process else 'warmed as the app is'}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"cold run: median wall {med:.2f}s (min {min(walls):.2f}, max {max(walls):.2f}); "
          f"critical path {ROUNDS} x L = {ideal:.2f}s; ratio {med / ideal:.3f}")
    print(f"first run of the process {walls[0]:.2f}s (ratio {walls[0] / ideal:.3f}); "
          f"mean of all runs {mean:.2f}s (ratio {mean / ideal:.3f})")
    print(f"cold run HTTP requests: {statistics.median(calls):.0f} "
          f"(chat); warm re-run requests: 0, model calls: 0")
    print("per-run timings of the last run: " + ", ".join(f"{k} {v:.2f}s" for k, v in
                                                        last.timings.items()))


if __name__ == "__main__":
    main()
