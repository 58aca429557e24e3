"""Where the credit bench's time goes: `bench_credit.py` run as it is, with timestamps
taken around the phases of `credit.leave_one_out` and at the loopback server.

Bench-only instrumentation (functions wrapped in this process, nothing changed in
rt_core). Every time is in seconds from the start of `leave_one_out`; the table gives
the median over the repeats. "sent" and "answered" are the server's view of the chat
calls (when a request arrived, when its reply went out after the latency L).

    .venv/bin/python bench/bench_credit_phases.py [--latency 0.5] [--repeats 5] [--authors 5]
"""
from __future__ import annotations

import functools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_credit

from rt_core.run.credit import variants as credit
from tests import loopback, openai_server

spans: list[tuple[str, float, float]] = []  # (phase, start, end), perf_counter seconds
posts: list[tuple[float, float]] = []  # chat requests: (arrived, answered)
accepts: list[float] = []  # TCP connections accepted by the server
rows: list[dict[str, float]] = []


def timed(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spans.append((name, start, time.perf_counter()))
    return wrapper


def _instrument() -> None:
    get_request = loopback._HTTPServer.get_request
    do_post = openai_server._PostHandler.do_POST

    def accept(self):
        out = get_request(self)
        accepts.append(time.perf_counter())
        return out

    def post(self):
        start = time.perf_counter()
        do_post(self)
        if self.path.endswith("/chat/completions"):
            posts.append((start, time.perf_counter()))

    loopback._HTTPServer.get_request = accept
    openai_server._PostHandler.do_POST = post
    for name in ("estimate", "_variant_sim", "run_async", "compare"):
        setattr(credit, name, timed(name, getattr(credit, name)))
    whole = credit.leave_one_out

    def leave_one_out(*args, **kwargs):
        spans.clear()
        posts.clear()
        accepts.clear()
        t0 = time.perf_counter()
        out = whole(*args, **kwargs)
        end = time.perf_counter() - t0
        last = lambda n: max(e for k, _, e in spans if k == n) - t0
        sent = sorted(s - t0 for s, _ in posts)
        done = sorted(e - t0 for _, e in posts)
        # One aggregate per variant left without an author (sent first); the rest are reviews.
        m = sum(k == "_variant_sim" for k, _, _ in spans) - 1
        rows.append({
            "estimate done": last("estimate"),
            "variants built": last("_variant_sim"),
            "first aggregate sent": sent[0],
            "last aggregate sent": sent[m - 1],
            "last aggregate answered": done[m - 1],
            "first review sent": sent[m],
            "last review sent": sent[-1],
            "last review answered": done[-1],
            "variants finished": last("run_async"),
            "comparison done": last("compare"),
            "leave_one_out returned": end,
            "connections accepted late (> 0.9 s after the first)": float(
                sum(a - accepts[0] > 0.9 for a in accepts)) if accepts else 0.0,
            "seconds comparing": sum(e - s for k, s, e in spans if k == "compare"),
        })
        return out

    credit.leave_one_out = leave_one_out


def main() -> None:
    _instrument()
    bench_credit.main()
    print(f"\nphase (s from the start of leave_one_out), median of {len(rows)} repeats:")
    for key in rows[0]:
        vals = [r[key] for r in rows]
        print(f"  {key:52s} {statistics.median(vals):7.3f}  (min {min(vals):.3f}, max {max(vals):.3f})")


if __name__ == "__main__":
    main()
