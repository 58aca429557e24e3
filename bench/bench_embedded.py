"""The embedded default on this machine: the default run (the NLP + Astronomy case study
as the preset loads it: 6 authors, 7 papers, 3 reviewers) on the bundled Gemma 3 270M,
against raw llama.cpp speed for the same model. Reports wall time, the process's CPU time
and the load average, since the machine is shared.

    .venv/bin/python bench/bench_embedded.py [--repeats 3]
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
from rt_core.models.local import BUNDLED_NAME, engine  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402


def raw_speed(repeats: int) -> tuple[float, float, float]:
    started = time.perf_counter()
    eng = engine(BUNDLED_NAME)
    load = time.perf_counter() - started
    prompt = "The history of astronomy " * 70
    pp, tg = [], []
    for i in range(repeats):
        eng.llm.reset()  # no prefix reuse between repeats
        t = time.perf_counter()
        out = eng.llm.create_completion(prompt + str(i), max_tokens=1, temperature=0)
        pp.append(out["usage"]["prompt_tokens"] / (time.perf_counter() - t))
        eng.llm.reset()
        t = time.perf_counter()
        out = eng.llm.create_completion("Once upon a time", max_tokens=128, temperature=0.7, seed=i)
        tg.append(out["usage"]["completion_tokens"] / (time.perf_counter() - t))
    return load, statistics.median(pp), statistics.median(tg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    load, pp, tg = raw_speed(args.repeats)
    print(f"model load {load:.1f}s; raw llama.cpp: prompt {pp:.0f} tok/s, generation {tg:.1f} tok/s")

    tmp = Path(tempfile.mkdtemp())
    walls, cpus, runs = [], [], []
    for i in range(args.repeats):
        store = Store(tmp / f"run-{i}.sqlite3")  # a fresh store: no cached calls or profiles
        community.ensure_loaded(store)
        p = community.preset("nlp-astronomy")
        cfg = RunConfig(researcher_ids=p["researcher_ids"], paper_ids=p["paper_ids"],
                        num_reviewers=3)
        load = os.getloadavg()[0]
        t, c = time.perf_counter(), time.process_time()
        run = Simulation(RunRequest(cfg), store).run_sync()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        runs.append(run)
        print(f"  run {i}: {walls[-1]:.1f}s wall, {cpus[-1]:.1f}s CPU, load {load:.1f}, "
              f"llama ms/token by threads {engine(BUNDLED_NAME).chooser.ms_per_token}; "
              f"status={run.status} calls={run.usage.calls} "
              f"tokens={run.usage.prompt_tokens}+{run.usage.completion_tokens} "
              f"stages={run.timings} missing={run.proposal.missing if run.proposal else '-'}")
    med = statistics.median(walls)
    r = runs[walls.index(med)]
    gen_rate = r.usage.completion_tokens / med
    print(f"default run (6 authors, 3 reviewers): median {med:.1f}s wall over {args.repeats} "
          f"(target <= 45 s), median CPU {statistics.median(cpus):.1f}s; {r.usage.calls} calls; "
          f"{r.usage.prompt_tokens} prompt + {r.usage.completion_tokens} completion tokens")
    print(f"effective generation {gen_rate:.1f} tok/s over the whole run = "
          f"{gen_rate / tg:.2f} x raw generation speed (the rest is prompt reading and overhead)")


if __name__ == "__main__":
    main()
