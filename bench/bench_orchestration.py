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

`--one-shot` is the way users and scripts run it: each repeat is a fresh
`python -m rt_core run` process against the same loopback server, on a fresh store. Its
process start-up (imports, the store) is not orchestration, so the figure is the server's
view: from the first chat request's arrival to the last one's, plus the last call's L,
against the critical path 6 x L. Each child runs under bench/thread_cpu.py, and the bench
prints the CPU each of its threads spent between the first and the last request: CPU time
says where that time goes even on a loaded machine, where wall-clock ratios do not (a
thread importing or loading weights there takes the interpreter from the event loop).
`--profile DIR` also writes a cProfile of each child (its main thread) there.

    .venv/bin/python bench/bench_orchestration.py [--latency 0.5] [--repeats 5] [--cold-process]
    .venv/bin/python bench/bench_orchestration.py --one-shot [--repeats 3] [--profile DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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


def neighbourhood(store, n_authors):
    """The bench's authors and papers: NLP and astronomy researchers, 3 + 2 papers."""
    researchers = [r.id for r in store.corpus.search_researchers(fields=["nlp"], limit=50)]
    researchers += [r.id for r in store.corpus.search_researchers(fields=["astronomy"], limit=50)]
    papers = [p.id for p in store.corpus.search_papers(fields=["nlp"], limit=3)] + \
             [p.id for p in store.corpus.search_papers(fields=["astronomy"], limit=2)]
    return researchers[:n_authors], papers


def cpu_in_window(path: Path, start: float, end: float) -> dict[str, float]:
    """CPU seconds per thread (the pool's threads together) between two monotonic times."""
    data = json.loads(path.read_text())
    out: dict[str, float] = {}
    for t, name, ticks in data["samples"]:
        if start <= t <= end:
            key = "thread pool" if name.startswith("asyncio_") else name
            out[key] = out.get(key, 0.0) + ticks / data["ticks_per_second"]
    return {k: round(v, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v}


def one_shot_run(server, db: Path, authors, papers, k, profile: Path | None,
                 tree: Path = ROOT) -> tuple[float, int, dict]:
    """A fresh `python -m rt_core run` process: (first-to-last request + L, chat requests,
    CPU seconds per thread between the first and the last request). `tree` is the checkout
    whose rt_core the child runs: another commit's, to measure before and after in one
    sitting with the same server and the same timing."""
    arrivals: list[float] = []
    answer = server.responder

    def timed(msgs):  # called as each request arrives (under the server's lock)
        arrivals.append(time.monotonic())  # the child's clock too (bench/thread_cpu.py)
        return answer(msgs)

    server.responder = timed
    cpu = db.with_suffix(".cpu.json")
    cli = [str(ROOT / "bench" / "thread_cpu.py"), str(cpu), "--db", str(db), "run", "--researchers", ",".join(authors),
           "--papers", ",".join(papers), "--reviewers", str(k), "--concurrency", "10",
           "--model", "openai/bench", "--base-url", server.base_url, "--api-key-env", "BENCH_KEY",
           "--out-json", str(db.with_suffix(".json"))]
    if profile is not None:
        cli = ["-m", "cProfile", "-o", str(profile / f"{db.stem}.prof"), *cli]
    env = {**os.environ, "BENCH_KEY": "sk-bench", "PYTHONPATH": str(tree)}
    try:
        done = subprocess.run([sys.executable, *cli], env=env, cwd=tree, capture_output=True, text=True)
    finally:
        server.responder = answer
    if done.returncode != 0 or not arrivals:
        raise SystemExit(f"the run failed:\n{done.stderr[-2000:]}")
    return (arrivals[-1] - arrivals[0] + server.latency, len(arrivals),
            cpu_in_window(cpu, arrivals[0], arrivals[-1]))


def one_shot(args) -> None:
    server = OpenAIServer(responder=lambda msgs: demo_responder(msgs, {}), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    profile = Path(args.profile) if args.profile else None
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    seed = Store(tmp / "ids.sqlite3")
    community.ensure_loaded(seed)
    authors, papers = neighbourhood(seed, args.authors)
    windows, calls = [], []
    try:
        for i in range(args.repeats):
            window, n, cpu = one_shot_run(server, tmp / f"one-shot-{i}.sqlite3", authors, papers,
                                          args.reviewers, profile, Path(args.tree or ROOT))
            windows.append(window)
            calls.append(n)
            print(f"process {i + 1}: first request to last reply {window:.2f}s; CPU seconds inside "
                  f"it by thread: {cpu}")
    finally:
        server.close()
    ideal = ROUNDS * args.latency
    med = statistics.median(windows)
    print(f"rt_core from {args.tree or ROOT}")
    print(f"one-shot CLI processes: latency L={args.latency}s, M={args.authors} authors, "
          f"k={args.reviewers} reviewers, {args.repeats} processes; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"first request to last reply: median {med:.2f}s (min {min(windows):.2f}, max "
          f"{max(windows):.2f}); critical path {ROUNDS} x L = {ideal:.2f}s; ratio {med / ideal:.3f}; "
          f"chat requests {statistics.median(calls):.0f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--authors", type=int, default=5)
    ap.add_argument("--reviewers", type=int, default=5)
    ap.add_argument("--cold-process", action="store_true",
                    help="no warm-up before the first run (a one-shot CLI process)")
    ap.add_argument("--one-shot", action="store_true",
                    help="each run a fresh `python -m rt_core run` process (timed by the server)")
    ap.add_argument("--profile", help="with --one-shot: write each process's cProfile to this folder")
    ap.add_argument("--tree", help="with --one-shot: the checkout whose rt_core the processes run "
                    "(another commit's worktree, for before and after in one sitting)")
    args = ap.parse_args()
    if args.one_shot:
        return one_shot(args)
    if not args.cold_process:
        warm_up().join()  # the Run page was drawn before Start could be pressed

    server = OpenAIServer(responder=lambda msgs: demo_responder(msgs, {}), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    walls, calls = [], []
    try:
        for i in range(args.repeats):  # every run counts, the process's first too
            store = Store(tmp / f"bench-{i}.sqlite3")
            community.ensure_loaded(store)
            authors, papers = neighbourhood(store, args.authors)
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
