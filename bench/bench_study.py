"""Human-evaluation studies: how long the organiser waits, and what ten raters at once do to SQLite.

Measures, over several repeats, each on a fresh store file:
  1. create: a 10-item pairwise study (two modes on four reference papers plus the real paper
     for two of them) from eight stored runs, as the create page does it (`create_from_runs`);
  2. ten raters at once: ten threads, each with its own Store (own SQLite connection) on one
     file, join and submit all of their tasks (8 each, 5 criteria), every task twice (the second
     is refused); reports the wall time and answers per second, and checks nothing was lost;
  3. results: `results.summary` with 500 bootstrap resamples per BT fit (what the results page
     computes, before its cache) on the finished ten-rater study.
Prints medians (and min/max). Run:

    .venv/bin/python bench/bench_study.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.store import Store  # noqa: E402
from rt_core.study import results  # noqa: E402
from rt_core.study.create import create_from_runs  # noqa: E402
from rt_core.study.design import DEFAULT_CRITERIA, StudySettings  # noqa: E402
from tests.test_study import pick, seed_runs  # noqa: E402


def once() -> dict[str, float]:
    path = Path(tempfile.mkdtemp(prefix="rt-bench-study-")) / "studio.sqlite3"
    store = Store(path)
    ids = seed_runs(store)
    t0 = time.perf_counter()
    study = create_from_runs(store, ids, StudySettings("bench", criteria=DEFAULT_CRITERIA, raters_per_unit=10,
                                                       minutes_per_rater=240))
    create_s = time.perf_counter() - t0
    sid, crit = study["id"], study["settings"].criteria
    barrier = threading.Barrier(10)
    failures: list[BaseException] = []

    def rater(n: int) -> None:
        s = Store(path)
        try:
            barrier.wait()
            s.studies.join(sid, f"r{n}")
            while (t := s.studies.next_task(sid, f"r{n}")) is not None:
                for _ in range(2):
                    s.studies.submit(sid, f"r{n}", t.position, pick(("left", "right", "tie")[n % 3], crit),
                                     rationale=f"r{n}")
        except BaseException as exc:
            failures.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=rater, args=(n,)) for n in range(10)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate_s = time.perf_counter() - t0
    rows = store.studies.answer_rows(sid)
    assert not failures and len(rows) == 10 * 8 * len(crit), (failures, len(rows))
    t0 = time.perf_counter()
    results.summary(store, sid, n_boot=500)
    summary_s = time.perf_counter() - t0
    store.close()
    return {"create": create_s, "rate": rate_s, "per_s": 10 * 8 / rate_s, "summary": summary_s}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    runs = [once() for _ in range(ap.parse_args().repeats)]
    print("| measure | median | min | max |\n|---|---|---|---|")
    for key, label, unit in (("create", "create a 10-item pairwise study (8 pairs)", "s"),
                             ("rate", "10 raters at once: 80 tasks (400 answers) + 80 refused repeats", "s"),
                             ("per_s", "tasks saved per second under that load", "/s"),
                             ("summary", "results summary (BT 500 + 5 x 200 resamples, alpha, kappa)", "s")):
        xs = [r[key] for r in runs]
        print(f"| {label} | {statistics.median(xs):.3f} {unit} | {min(xs):.3f} | {max(xs):.3f} |")


if __name__ == "__main__":
    main()
