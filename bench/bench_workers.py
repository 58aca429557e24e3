"""Benchmark workers sharing one PostgreSQL store: throughput with 1, 2 and 4 workers.

    .venv/bin/python bench/bench_workers.py [--tasks 28] [--latency 0.5] [--json out.json]

A throwaway PostgreSQL server (tests/pgserver.py) and a loopback OpenAI-compatible model
server that answers like the demo model after `--latency` seconds (a provider's delay).
For each worker count: a fresh database (so every call is made: nothing is cached), N
`python -m rt_core bench TASKS --worker --tasks-at-once 1` processes started together,
timed until the last one exits. Tasks per minute, and scaling efficiency
(rate with N workers) / (N x rate with one). Process start-up (imports, the MiniLM
evaluator) is inside the time, as it is for a worker started on a lab machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.scripted import demo_responder  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402
from tests.pgserver import TEMPLATE, PgServer  # noqa: E402


def task_file(path: Path, n: int, store_url: str) -> Path:
    """n distinct tasks: each replay target with a different subset of its authors, so
    every task is its own neighbourhood and makes its own model calls. (Repeating the ten
    targets would let the store's call cache answer most tasks, and the figure would then
    measure cache reads, not workers.)"""
    from itertools import combinations

    from rt_core import community
    from rt_core.store import Store

    papers = [json.loads(line)["paper_id"] for line in (ROOT / "bench/tasks/replay_targets.jsonl").open()]
    store = Store(store_url)
    try:
        community.ensure_loaded(store)  # as each worker would on its first open
        authors = store.corpus.authors_of(papers)
    finally:
        store.close()
    variants = []
    for size in range(max(len(a) for a in authors.values()), 0, -1):  # whole author lists first
        for pid in papers:
            variants += [(pid, list(group)) for group in combinations(sorted(authors[pid]), size)]
    if n > len(variants):
        raise SystemExit(f"only {len(variants)} distinct tasks can be made from the replay targets")
    path.write_text("".join(json.dumps({"paper_id": pid, "authors": group, "id": f"w{i:02d}"}) + "\n"
                            for i, (pid, group) in enumerate(variants[:n])))
    return path


def children_cpu_seconds() -> float:
    """User + system CPU of every finished child process (the workers; the model
    server is a thread here and PostgreSQL is not our child), so a row can say whether
    the workers were waiting on the model or had the machine's cores full."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def start_workers(url: str, model: OpenAIServer, tasks: Path, workers: int, out: Path) -> dict:
    """N worker processes started together, timed until the last one exits. Each worker
    says on stderr when it is ready (imports and MiniLM loaded, before its first claim)
    and when it finishes a task; the lines are timestamped here as they arrive."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT),
               BENCH_KEY="sk-bench-FAKE")
    env.pop("RT_DB", None)
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "rt_core", "--db", url, "bench", str(tasks), "--worker",
                               "--name", "scale", "--model", f"openai/scale-{workers}", "--base-url",
                               model.base_url, "--api-key-env", "BENCH_KEY", "--tasks-at-once", "1",
                               "--out", str(out / f"w{workers}-{n}"), "--no-progress"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for n in range(workers)]
    ready: list[float] = []
    finished: list[float] = []

    def listen(proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            if line.startswith("worker ready"):
                ready.append(time.perf_counter() - t0)
            elif line.startswith("task "):
                finished.append(time.perf_counter() - t0)

    readers = [threading.Thread(target=listen, args=(p,)) for p in procs]
    for r in readers:
        r.start()
    codes = [p.wait() for p in procs]
    for r in readers:
        r.join()
    return {"seconds": time.perf_counter() - t0, "codes": codes, "ready": ready, "finished": sorted(finished)}


def run(pg: PgServer, model: OpenAIServer, tasks: Path, workers: int, out: Path) -> dict:
    """One worker count on a fresh database. Besides the wall time from launch to the last
    exit, the rate once every worker is ready: tasks finished after the last worker's
    warm-up, over the time from then to the last task (the part that a long bench on lab
    machines is made of; each worker's warm-up is paid once)."""
    url = pg.fresh_database()
    calls0 = len(model.chat_requests())
    cpu0 = children_cpu_seconds()
    got = start_workers(url, model, tasks, workers, out)
    cpu = children_cpu_seconds() - cpu0
    pg.drop(url)
    all_ready = max(got["ready"], default=0.0)
    after = [t for t in got["finished"] if t > all_ready]
    steady = (after[-1] - all_ready) if after else None
    return {"workers": workers, "seconds": round(got["seconds"], 1), "exit_codes": got["codes"],
            "worker_cpu_seconds": round(cpu, 1), "cores_busy": round(cpu / got["seconds"], 2),
            "all_ready_at": round(all_ready, 1), "tasks_after_ready": len(after),
            "steady_seconds": round(steady, 2) if steady else None,
            "model_calls": len(model.chat_requests()) - calls0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=28)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--json")
    args = ap.parse_args()
    pg = PgServer()
    model = OpenAIServer(responder=lambda messages: demo_responder(messages, {}), latency=args.latency)
    out = Path(pg.root.parent / "rt-bench-workers")
    out.mkdir(exist_ok=True)
    try:
        pg.create_template()
        tasks = task_file(out / "tasks.jsonl", args.tasks, pg.url(TEMPLATE))
        rows = [run(pg, model, tasks, n, out) for n in (1, 2, 4)]
    finally:
        model.close()
        pg.stop()
    base = args.tasks / rows[0]["seconds"] * 60
    for r in rows:
        r["tasks_per_minute"] = round(args.tasks / r["seconds"] * 60, 2)
        r["efficiency"] = round(r["tasks_per_minute"] / (r["workers"] * base), 2)
        r["steady_tasks_per_minute"] = (round(r["tasks_after_ready"] / r["steady_seconds"] * 60, 2)
                                        if r["steady_seconds"] else None)
    steady_base = rows[0]["steady_tasks_per_minute"]
    for r in rows:
        r["steady_efficiency"] = (round(r["steady_tasks_per_minute"] / (r["workers"] * steady_base), 2)
                                  if r["steady_tasks_per_minute"] and steady_base else None)
        print(f"{r['workers']} worker(s): {r['seconds']:6.1f} s, {r['tasks_per_minute']:5.2f} tasks/min, "
              f"efficiency {r['efficiency']:.2f}; all ready at {r['all_ready_at']} s, then "
              f"{r['tasks_after_ready']} tasks at {r['steady_tasks_per_minute']} tasks/min, "
              f"efficiency {r['steady_efficiency']}; {r['model_calls']} calls, worker CPU "
              f"{r['worker_cpu_seconds']} s ({r['cores_busy']} cores busy), exits {r['exit_codes']}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")
    if args.json:
        Path(args.json).write_text(json.dumps({"tasks": args.tasks, "latency": args.latency, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
