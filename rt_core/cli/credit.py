"""`python -m rt_core credit RUN_ID [--papers]`: what each researcher (or paper) brought.

The estimate of the new calls is printed before anything starts (the re-writings reuse
every cached call), then a progress bar over the re-writings; the credits are stored on
the run and written as credit.csv and credit.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tqdm import tqdm

from ..community import loaded_store
from ..export.run import Names
from ..export.sources import credit_csv, credit_rows
from ..models import registry
from ..run.credit import variants as credit
from ..run.pipeline import timing
from ..settings import schema
from . import options, settings


def add_parser(sub) -> None:
    c = sub.add_parser("credit", help="leave-one-out: what each researcher (or paper) of a run brought")
    c.add_argument("run_id")
    c.add_argument("--papers", action="store_true", help="leave out each chosen paper instead")
    c.add_argument("--out-dir", default=".", help="where credit.csv and credit.json go")
    options.add(c, schema.AGAIN, cap_note=" in all (refused or stopped beyond it)")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    c.set_defaults(fn=cmd_credit)


def _formula_text(run, papers: bool) -> str:
    cfg = run.config
    style = registry.prompt_style(cfg.model, cfg.prompt_style)
    if not registry.traits(style).follows_instructions:
        return ""
    m, r, p = len(cfg.researcher_ids), len(credit.reviewers_of(run)), len(cfg.paper_ids)
    n = credit.formula(style, m, r, p, papers)
    shape = f"P*(M+agg(M)+R), P={p}" if papers else "M*(agg(M-1)+R)"
    return f" [formula {shape}, M={m}, R={r}: {n}]"


def cmd_credit(args) -> int:
    store = loaded_store(args.db)
    run = store.runs.load(args.run_id)
    credit.check_comparable(run, args.papers)
    est = credit.estimate(run, store, args.papers)
    expected = timing.for_credit(run.config, est.calls, est.variants, len(credit.reviewers_of(run)),
                                 store, calibrate=True)
    print(f"{est.summary()}; {expected.text()}" + _formula_text(run, args.papers), file=sys.stderr)
    request = settings.request_for(args, run.config)
    bar = tqdm(total=est.variants + 1, desc="re-writings", unit="run", file=sys.stderr,
               disable=args.no_progress)
    try:
        result = credit.leave_one_out(run, store, request, papers=args.papers,
                                      max_tokens=args.max_tokens, max_cost=args.max_cost,
                                      on_variant=bar.update)
    finally:
        bar.close()
    names = Names.for_runs(store, [run])
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "credit.csv").write_bytes(credit_csv(run, names.person, names.paper))
    doc = {"run_id": run.id, "by": "paper" if args.papers else "author",
           "calls": result.usage.calls, "cache_hits": result.usage.cache_hits,
           "estimated_calls": est.calls.calls, "credit": credit_rows(run, names.person, names.paper)}
    (out / "credit.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")
    for c in result.credits:
        print(c.sentence)
    print(f"{result.usage.calls} new model calls ({result.usage.cache_hits} from the cache); "
          f"wrote {out / 'credit.csv'} and {out / 'credit.json'}", file=sys.stderr)
    return 0
