"""Run `python -m rt_core ...` and write where its CPU went, thread by thread, over time.

    python bench/thread_cpu.py OUT.json [rt_core arguments...]

Every 5 ms a background thread reads each thread's CPU ticks from /proc (Linux) and keeps
(monotonic time, thread name, ticks since the last reading). bench_orchestration.py
--one-shot sums them between the first and the last request its server saw: CPU time, not
wall time, so the figure means something on a loaded machine, where wall-clock ratios do
not. The process's own time.monotonic() is the server's clock (same machine).
"""
from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import time


def _ticks(native_id: int) -> int | None:
    try:
        with open(f"/proc/self/task/{native_id}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


def _sample(samples: list, stop: threading.Event) -> None:
    last: dict[int, int] = {}
    me = threading.get_ident()
    while not stop.wait(0.005):
        now = time.monotonic()
        for t in threading.enumerate():
            if t.ident == me or t.native_id is None:
                continue
            ticks = _ticks(t.native_id)
            if ticks is None:
                continue
            prev = last.get(t.native_id)
            # A new thread counts from its first reading; an id the system gave again, from 0.
            delta = 0 if prev is None else ticks - prev if ticks >= prev else ticks
            samples.append((now, t.name, delta))
            last[t.native_id] = ticks


def main() -> None:
    out, sys.argv = sys.argv[1], ["rt_core", *sys.argv[2:]]
    samples: list = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(samples, stop), name="cpu-sampler", daemon=True)
    sampler.start()
    try:
        runpy.run_module("rt_core", run_name="__main__", alter_sys=True)
    finally:
        stop.set()
        sampler.join()
        with open(out, "w") as f:
            json.dump({"ticks_per_second": os.sysconf("SC_CLK_TCK"), "samples": samples}, f)


if __name__ == "__main__":
    main()
