"""Benchmark throughput: `bench` tasks per minute against a loopback OpenAI-compatible
server that answers every chat call after a fixed latency L (default 0.5 s).

Runs the shipped task file (the starter community's replay targets) in all four modes,
with the local MiniLM evaluator, on a fresh store each repeat; reports the median
tasks/min over repeats and the model calls per task.

    .venv/bin/python bench/bench_replay.py [--latency 0.5] [--repeats 3] [--tasks-at-once 3]
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
from rt_core.models.client import run_async  # noqa: E402
from rt_core.models.scripted import demo_responder  # noqa: E402
from rt_core.run.replay import batch as bench  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tasks-at-once", type=int, default=3)
    ap.add_argument("--reviewers", type=int, default=0)
    ap.add_argument("--modes", default="self,agent,data,global")
    args = ap.parse_args()

    tasks = bench.load_tasks(ROOT / "bench/tasks/replay_targets.jsonl")
    server = OpenAIServer(responder=lambda msgs: demo_responder(msgs, {}), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    rates, calls = [], []
    try:
        for i in range(args.repeats + 1):  # the first repeat warms imports and is discarded
            store = Store(tmp / f"replay-{i}.sqlite3")
            community.ensure_loaded(store)
            cfg = RunConfig(model="openai/bench", base_url=server.base_url, num_reviewers=args.reviewers,
                            concurrency=8)
            before = len(server.requests)
            started = time.perf_counter()
            result = run_async(bench.run_bench(tasks, RunRequest.with_key(cfg, "sk-bench"), store,
                                               tmp / f"out-{i}", modes=args.modes.split(","),
                                               concurrency=args.tasks_at_once))
            wall = time.perf_counter() - started
            assert all(r["status"] == "done" for r in result.records), result.records
            if i:
                rates.append(len(tasks) / wall * 60)
                calls.append((len(server.requests) - before) / len(tasks))
    finally:
        server.close()
    print(f"L={args.latency}s, {len(tasks)} tasks x modes {args.modes}, {args.tasks_at_once} tasks at "
          f"once, {args.reviewers} reviewers, {args.repeats} repeats")
    print(f"tasks/min: median {statistics.median(rates):.2f} (min {min(rates):.2f}, max {max(rates):.2f})")
    print(f"model calls per task: {statistics.median(calls):.0f}")


if __name__ == "__main__":
    main()
