"""The wall time stated before Start against the time taken, on the embedded model.

Issue 26, point 2: the estimate should be within 25% of the actual for the app's
default run and for leave-one-out credit, on a quiet machine. In a fresh store (no
cached call, no recorded speed), as a newcomer meets it:

1. the model is loaded (timed apart: a process pays it once, the estimate leaves it out);
2. the app's default run (the NLP + Astronomy preset, 4 candidates, the novelty check,
   1 revision round) is estimated from the short calibration alone, then run;
3. credit on that run is estimated from the speeds the run just measured, then run;
4. unless --once: the app's default again with the call cache emptied (so every call is
   made again; another temperature would make it another run, with other re-asks), now
   estimated from the calls measured so far and the first run's bias, then run.

    .venv/bin/python bench/bench_estimate.py            # on a quiet machine
    .venv/bin/python bench/bench_estimate.py --once     # steps 1-3 only

Each line gives estimate, actual, their ratio and the 1-minute load average before and
after, since the machine is shared.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())
# A machine that has not timed the model yet (models/machine_speeds.py): the first estimate
# comes from a calibration made now, as on a newcomer's first run.
os.environ.setdefault("RT_MACHINE_SPEEDS", str(Path(os.environ["RT_DATA_DIR"]) / "machine-speeds.json"))

from rt_core import community  # noqa: E402
from rt_core.config import LOCAL_MODEL  # noqa: E402
from rt_core.models import registry  # noqa: E402
from rt_core.models.local import engine  # noqa: E402
from rt_core.run.credit import variants as credit  # noqa: E402
from rt_core.run.pipeline import budget, timing  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402


def app_default(temperature: float | None = None) -> RunConfig:
    """The Run page's defaults (studio/loop_settings.py) on the preset the README starts with."""
    p = community.preset("nlp-astronomy")
    cfg = RunConfig(model=LOCAL_MODEL, researcher_ids=p["researcher_ids"], paper_ids=p["paper_ids"],
                    num_reviewers=3, candidates=4, check_novelty=True, revision_rounds=1)
    return cfg if temperature is None else dataclasses.replace(cfg, temperature=temperature)


def load() -> float:
    return os.getloadavg()[0]


def speed_text(expected: timing.Expected) -> str:
    s = expected.speed
    if s is None:
        return "no speed"
    at_once = f"{s.at_once:.2f}" if s.at_once else "unknown"
    return (f"{s.source()}; {s.calls} calls in flight {at_once} on average, crowding {s.crowding:.1f}; "
            f"bias x{expected.factor:.2f} from {expected.runs} run(s)")


def line(what: str, expected: timing.Expected, seconds: float, before: float, extra: str = "") -> None:
    est = expected.seconds or 0.0
    ratio = est / seconds if seconds else float("nan")
    print(f"{what}: estimated {est:.1f} s ({speed_text(expected)}), "
          f"took {seconds:.1f} s, estimate/actual {ratio:.2f} "
          f"({'within' if abs(ratio - 1) <= 0.25 else 'OUTSIDE'} 25%; without the bias "
          f"{ratio / (expected.factor or 1.0):.2f}); load {before:.1f} -> {load():.1f}"
          + (f"; {extra}" if extra else ""), flush=True)


def timed_run(store: Store, cfg: RunConfig, what: str, expected: timing.Expected):
    before, t = load(), time.perf_counter()
    run = Simulation(RunRequest(cfg), store).run_sync()
    line(what, expected, time.perf_counter() - t, before,
         f"{run.status}, {run.usage.calls} calls, {run.usage.prompt_tokens:,}+"
         f"{run.usage.completion_tokens:,} tokens (estimated {budget.estimate(cfg, store).total.calls} "
         f"calls, {budget.estimate(cfg, store).total.tokens:,} tokens); stages {run.timings}")
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--once", action="store_true", help="skip the second app-default run")
    args = ap.parse_args()
    store = Store(Path(tempfile.mkdtemp()) / "estimate.sqlite3")
    community.ensure_loaded(store)
    t = time.perf_counter()
    engine(registry.model_name(LOCAL_MODEL))
    print(f"model load {time.perf_counter() - t:.1f} s (paid once per process; not in the estimates)")

    cfg = app_default()
    first = timing.for_config(cfg, store, calibrate=True)  # the calibration call, as the CLI makes it
    run = timed_run(store, cfg, "app default, first run", first)

    est = credit.estimate(run, store)
    expected = timing.for_credit(run.config, est.calls, est.variants, len(credit.reviewers_of(run)), store)
    before, t = load(), time.perf_counter()
    result = credit.leave_one_out(run, store, RunRequest(run.config))
    line("credit (leave one author out)", expected, time.perf_counter() - t, before,
         f"{result.usage.calls} calls (estimated {est.calls.calls})")

    if not args.once:
        store.clear_caches(("llm_cache",))
        timed_run(store, cfg, "app default, second run (measured speeds)", timing.for_config(cfg, store))
    print("recorded with the runs (estimate, actual seconds):",
          store.runs.wall_times([r["id"] for r in store.runs.list()]))


if __name__ == "__main__":
    main()
