"""Benchmark workers sharing one PostgreSQL store: throughput with 1, 2 and 4 workers.

    .venv/bin/python bench/bench_workers.py [--tasks 8] [--latency 0.5] [--json out.json]

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
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.scripted import demo_responder  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402
from tests.pgserver import PgServer  # noqa: E402


def task_file(path: Path, n: int) -> Path:
    papers = [json.loads(line)["paper_id"] for line in (ROOT / "bench/tasks/replay_targets.jsonl").open()]
    path.write_text("".join(json.dumps({"paper_id": papers[i % len(papers)], "id": f"w{i:02d}"}) + "\n"
                            for i in range(n)))
    return path


def run(pg: PgServer, model: OpenAIServer, tasks: Path, workers: int, out: Path) -> dict:
    url = pg.fresh_database()
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT),
               BENCH_KEY="sk-bench-FAKE")
    env.pop("RT_DB", None)
    calls0 = len(model.chat_requests())
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "rt_core", "--db", url, "bench", str(tasks), "--worker",
                               "--name", "scale", "--model", f"openai/scale-{workers}", "--base-url",
                               model.base_url, "--api-key-env", "BENCH_KEY", "--tasks-at-once", "1",
                               "--out", str(out / f"w{workers}-{n}"), "--no-progress"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for n in range(workers)]
    codes = [p.wait() for p in procs]
    seconds = time.perf_counter() - t0
    pg.drop(url)
    return {"workers": workers, "seconds": round(seconds, 1), "exit_codes": codes,
            "model_calls": len(model.chat_requests()) - calls0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--json")
    args = ap.parse_args()
    pg = PgServer()
    model = OpenAIServer(responder=lambda messages: demo_responder(messages, {}), latency=args.latency)
    out = Path(pg.root.parent / "rt-bench-workers")
    out.mkdir(exist_ok=True)
    try:
        pg.create_template()
        tasks = task_file(out / "tasks.jsonl", args.tasks)
        rows = [run(pg, model, tasks, n, out) for n in (1, 2, 4)]
    finally:
        model.close()
        pg.stop()
    base = args.tasks / rows[0]["seconds"] * 60
    for r in rows:
        r["tasks_per_minute"] = round(args.tasks / r["seconds"] * 60, 2)
        r["efficiency"] = round(r["tasks_per_minute"] / (r["workers"] * base), 2)
        print(f"{r['workers']} worker(s): {r['seconds']:6.1f} s, {r['tasks_per_minute']:5.2f} tasks/min, "
              f"efficiency {r['efficiency']:.2f}, {r['model_calls']} calls, exits {r['exit_codes']}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")
    if args.json:
        Path(args.json).write_text(json.dumps({"tasks": args.tasks, "latency": args.latency, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
