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
from types import SimpleNamespace
from urllib.parse import urlparse

from tqdm import tqdm

from .. import keys
from ..community import ensure_loaded
from ..errors import ConfigError
from ..export import candidates as export_candidates
from ..run.candidates.judging import planned_calls
from ..run.pipeline import budget
from ..run.pipeline.simulation import Simulation
from ..store import open_store
from ..types import ProgressEvent, RunConfig
from . import settings


def add_parser(sub, budget_args, key_help: str) -> None:
    p = sub.add_parser("ideate", help="write several candidate proposals and rank them")
    p.add_argument("--researchers", help="comma-separated researcher ids (the authors)")
    p.add_argument("--papers", help="comma-separated paper ids")
    p.add_argument("--candidates", type=int, default=4, help="how many candidates (1 to 12)")
    p.add_argument("--judge-model", help="the model that judges pairs of candidates (default: the "
                   "run's model when it is an instruction model; else ranked by measured signals)")
    p.add_argument("--judge-base-url", help="API base URL of the judge model")
    p.add_argument("--judge-api-key-env", help="environment variable holding the judge's key for "
                   "its model and base URL")
    p.add_argument("--model", default=RunConfig.model, help="litellm model string for writing")
    p.add_argument("--base-url", help="API base URL of the run's model")
    p.add_argument("--api-key-env", help=key_help)
    p.add_argument("--reviewers", type=int, default=3, help="reviewers of every candidate")
    p.add_argument("--temperature", type=float, default=RunConfig.temperature)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--embedder", default=RunConfig.embedder)
    p.add_argument("--out-dir", required=True, help="folder for ranking.csv, candidates.md, ideate.json")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    budget_args(p)
    p.set_defaults(fn=cmd_ideate)


def _request(args):
    cfg = RunConfig(researcher_ids=settings.ids(args.researchers), paper_ids=settings.ids(args.papers),
                    model=args.model, base_url=args.base_url or "", num_reviewers=args.reviewers,
                    temperature=args.temperature, concurrency=args.concurrency, embedder=args.embedder,
                    candidates=args.candidates, judge_model=args.judge_model or "",
                    judge_base_url=args.judge_base_url or "", max_tokens=args.max_tokens,
                    max_cost=args.max_cost)
    request = settings.request_for(args, cfg)
    if cfg.judge_model:  # the judge's own key, by the one rule; never the run's
        typed = settings.typed_key(SimpleNamespace(api_key_env=args.judge_api_key_env),
                                   cfg.judge_model, cfg.judge_base_url)
        key = keys.resolve(cfg.judge_model, cfg.judge_base_url, typed)
        request.judge_key, request.judge_server_key = key.value, key.server
    return request


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
    store = open_store(db)
    ensure_loaded(store)
    for run_id in store.runs.reap_orphans():
        print(f"run {run_id} was left running by a process that has ended: marked interrupted "
              f"(resume it with: python -m rt_core resume {run_id})", file=sys.stderr)
    return store


def print_estimate(config: RunConfig, store) -> None:
    """The estimate (candidates and tournament included) and the cap, before any call."""
    print(budget.estimate(config, store).summary(), file=sys.stderr)
    if budget.cap_text(config):
        print(f"Budget: {budget.cap_text(config)}", file=sys.stderr)


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
    sim.start()
    print_estimate(c, store)
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
