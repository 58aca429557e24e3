"""Revision rounds on the embedded base model over the starter presets: how many automatic-
check failures (rt_core/run/styles/stem_checks.py: Q1 names no concept of a chosen field, Q5 names
no data or no metric, two answers repeat, a part is missing) the rounds remove.

Each preset runs once on a fresh store with R revision rounds (default 1); the checks are
counted on round 0's proposal, on the last round's text and on what the run shows (its
best-scored round, which is round 0 when the reviewers scored the revision lower), with the
run's own key concepts (the same Grounding the stages used). Also: the questions rewritten, the mean
score per round, why the rounds stopped, and the wall time. Slow (a whole embedded run per
preset); `--presets` runs a subset.

    .venv/bin/python bench/bench_revise_presets.py [--presets a,b] [--rounds 1] [--reviewers 3] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
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
from rt_core.run.styles.stem_checks import proposal_checks  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="", help="comma-separated ids (default: all 13)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--reviewers", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    engine(BUNDLED_NAME)
    wanted = [p for p in args.presets.split(",") if p]
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for preset in community.presets():
        if wanted and preset["id"] not in wanted:
            continue
        store = Store(tmp / f"{preset['id']}.sqlite3")
        community.ensure_loaded(store)
        cfg = RunConfig(researcher_ids=preset["researcher_ids"], paper_ids=preset["paper_ids"],
                        num_reviewers=args.reviewers, revision_rounds=args.rounds)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        sim = Simulation(RunRequest(cfg), store)
        run = sim.run_sync()
        wall = time.perf_counter() - t
        g = sim.state.ctx.grounding
        first = run.rounds[0].proposal if run.rounds else run.proposal
        before = proposal_checks(first, g)[1] if first else []
        after = proposal_checks(run.proposal, g)[1] if run.proposal else []
        last = run.rounds[-1].proposal if run.rounds else run.proposal
        revised = proposal_checks(last, g)[1] if last else []
        row = {"preset": preset["id"], "status": run.status, "failures_before": before,
               "failures_after": after, "failures_last_round": revised,
               "rewritten": [[c.question for c in r.changes] for r in run.rounds[1:]],
               "means": [r.meta_review.score if r.meta_review else None for r in run.rounds],
               "stopped": next((r.stopped for r in run.rounds if r.stopped), ""),
               "wall_s": round(wall, 1), "load": round(load, 2),
               "errors": [e.message for e in run.errors]}
        rows.append(row)
        print(f"{preset['id']:36s} {wall:6.1f}s checks failed {len(before)} -> {len(after)} shown "
              f"({len(revised)} in the last round's text); "
              f"rewritten {row['rewritten']}; means {row['means']}; load {load:.1f}\n"
              f"    stopped: {row['stopped']}", flush=True)
        store.close()
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    b = sum(len(r["failures_before"]) for r in rows)
    a = sum(len(r["failures_after"]) for r in rows)
    last = sum(len(r["failures_last_round"]) for r in rows)
    rose = sum(1 for r in rows if len(r["means"]) > 1 and None not in r["means"][:2]
               and r["means"][1] > r["means"][0])
    print(f"\n{len(rows)} presets, {args.rounds} round(s): automatic-check failures {b} before, "
          f"{last} in the last round's text, {a} in what the run shows (it keeps its best-scored "
          f"round; {b - a} removed there); mean score rose in round 1 for {rose} of {len(rows)}")


if __name__ == "__main__":
    main()
