"""`python -m rt_core ideate`: several candidates for one neighbourhood, ranked.

It prints the estimate first (candidates and the tournament included), shows a progress
bar while the run goes, and writes ranking.csv, candidates.md and ideate.json into
--out-dir. Bad input gets one message before any call: a number of candidates out of
range or a judge that cannot judge (validation), a judge whose address answers nothing
(a connection is tried first), a budget smaller than one call (the budget's check).
"""
from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from urllib.parse import urlparse

from tqdm import tqdm

from ..community import loaded_store
from ..errors import ConfigError
from ..export import candidates as export_candidates
from ..run.candidates.judging import planned_calls
from ..run.pipeline import budget
from ..run.pipeline.simulation import Simulation
from ..types import ProgressEvent
from . import options, settings


def add_parser(sub) -> None:
    """Every run option (rt_core/settings/schema.py), as `run` has them; four candidates
    by default, as ranking one would be no tournament."""
    p = sub.add_parser("ideate", help="write several candidate proposals and rank them")
    p.add_argument("--researchers", help="comma-separated researcher ids (the authors)")
    p.add_argument("--papers", help="comma-separated paper ids")
    options.add(p, defaults={"candidates": 4})
    p.add_argument("--out-dir", required=True, help="folder for ranking.csv, candidates.md, ideate.json")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_ideate)


def _request(args):
    return settings.run_request(args, settings.ids(args.researchers), settings.ids(args.papers))


def check_reachable(model: str, base_url: str, timeout: float = 3.0) -> None:
    """A judge at a base URL must answer a connection before the run spends anything."""
    if not base_url:
        return
    u = urlparse(base_url)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        socket.create_connection((u.hostname or "", port), timeout=timeout).close()
    except OSError:
        raise ConfigError(f"the judge model '{model}' cannot be reached: nothing answers at {base_url}",
                          "Start the judge's server, correct --judge-base-url, or leave --judge-model "
                          "out to let the run's model judge.") from None


def open_community(db: str | None):
    """The store with the starter community, runs left by dead processes marked interrupted."""
    store = loaded_store(db)
    for run_id in store.runs.reap_orphans():
        print(f"run {run_id} was left running by a process that has ended: marked interrupted "
              f"(resume it with: python -m rt_core resume {run_id})", file=sys.stderr)
    return store


def print_estimate(sim: Simulation) -> None:
    """The run's estimate (candidates and tournament included) and the cap, before any call."""
    print(f"{sim.estimate.summary()}; {sim.expected.text()}", file=sys.stderr)
    if budget.cap_text(sim.config):
        print(f"Budget: {budget.cap_text(sim.config)}", file=sys.stderr)


def _bar(args, sim: Simulation):
    """A bar over the run's agents (profiles, drafts, candidates, reviews, judge rounds)."""
    c = sim.config
    n, k, m = c.candidates, c.num_reviewers, len(c.researcher_ids)
    total = 2 * m + n + 1 + k + n * k + n + planned_calls(n) + 1
    return tqdm(total=total, desc="ideate", unit="step", file=sys.stderr, disable=args.no_progress)


def cmd_ideate(args) -> int:
    store = open_community(args.db)
    request = _request(args)
    c = request.config
    if c.judge_model:
        check_reachable(c.judge_model, c.judge_base_url)
    sim = Simulation(request, store)
    sim.start(calibrate=True)
    print_estimate(sim)
    bar = _bar(args, sim)

    def progress(e: ProgressEvent) -> None:
        if e.status in ("done", "cached", "failed"):
            bar.total = max(bar.total, bar.n + 1)
            bar.set_description(f"ideate: {e.stage}")
            bar.update(1)

    sim.on_progress = progress
    print(f"run {sim.run.id}: {c.candidates} candidates", file=sys.stderr)
    try:
        run = sim.run_sync()
        if run.status == "done":
            bar.total = bar.n  # the count of steps was an estimate: a finished run is 100%
            bar.refresh()
    finally:
        bar.close()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ideate.json").write_text(json.dumps(run.to_dict(), indent=2), "utf-8")
    names = export_candidates.names_for(store, run)
    (out / "ranking.csv").write_bytes(export_candidates.ranking_csv(run, names))
    (out / "candidates.md").write_text(export_candidates.ranking_markdown(run, names), "utf-8")
    for e in run.errors:
        print(f"[{e.stage}] {e.agent}: {e.message}" + (f"\n  hint: {e.hint}" if e.hint else ""),
              file=sys.stderr)
    t = run.tournament
    if t is not None and t.order:
        print(f"best: {t.order[0]} of {len(t.order)} ranked ({t.method}); {t.merged} merged; "
              f"written to {out}", file=sys.stderr)
    print(f"run {run.id}: {run.status}", file=sys.stderr)
    return 0 if run.status == "done" else 1
