"""llama.cpp threads on a shared machine: the same prompt (242 tokens) and 64 generated
tokens with 1 and with all cores' threads, alternating, fresh model each time.

    .venv/bin/python bench/bench_threads.py [--repeats 2]

On a quiet machine more threads are faster; when other work holds the cores, llama.cpp's
threads wait for each other at every step and one thread wins by a wide margin. This is
why the embedded engine picks its thread count from the load average per call
(rt_core/models/local.py: threads_for_load).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.bundled import run_path as bundled_gguf_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    from llama_cpp import Llama

    path = str(bundled_gguf_path())
    cores = os.cpu_count() or 2
    times: dict[int, list[float]] = {1: [], cores: []}
    for _ in range(args.repeats):
        for n in (1, cores):
            llm = Llama(model_path=path, n_ctx=2048, n_threads=n, n_threads_batch=n, verbose=False, seed=0)
            load = os.getloadavg()[0]
            t = time.perf_counter()
            llm.create_completion("The history of astronomy " * 60, max_tokens=64, temperature=0.7, seed=1)
            times[n].append(time.perf_counter() - t)
            llm.close()
            print(f"threads {n}: {times[n][-1]:.2f}s (load average {load:.1f})", flush=True)
    med = {n: statistics.median(v) for n, v in times.items()}
    print(f"median: 1 thread {med[1]:.2f}s, {cores} threads {med[cores]:.2f}s; "
          f"ratio {med[cores] / med[1]:.2f}")


if __name__ == "__main__":
    main()
