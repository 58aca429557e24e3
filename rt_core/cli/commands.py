"""What each `python -m rt_core` command does; the parser (parser.py) maps names and
flags to these functions, settings.py turns flags into requests and keys."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tqdm import tqdm

from .. import topic_search
from ..community import loaded_store
from ..errors import InputError
from ..export.run import run_markdown
from ..fiveq import QUESTION_KEYS
from ..models.client import LLMClient, run_async
from ..models.embed import Embedder
from ..run.evidence.evaluate import judge, proposal_similarity, review_similarity
from ..run.pipeline import budget, timing, warmup
from ..run.pipeline.simulation import Simulation
from ..run.replay import batch as bench
from ..run.replay import batch_workers as bench_workers
from ..run.replay.paper import Replay, import_target
from ..run.revision import more as revise_more
from ..run.revision.report import stop_words
from ..run.styles.context import StageContext
from ..run.styles.parse import parse_five_questions, parse_review
from ..sources import clients
from ..store import open_store
from ..store.transfer import copy_store
from ..types import MODES, Given, Paper, ProgressEvent, Proposal, Researcher
from . import settings


def _read_text(arg: str) -> str:
    if arg == "-":
        return sys.stdin.read()
    path = Path(arg)
    if not path.exists():
        raise InputError(f"no such file: {arg}")
    return path.read_text("utf-8")


def _store(args):

    store = loaded_store(args.db)
    for run_id in store.runs.reap_orphans():  # runs whose process died: resumable
        print(f"run {run_id} was left running by a process that has ended: marked interrupted "
              f"(resume it with: python -m rt_core resume {run_id})", file=sys.stderr)
    return store


def _input_file(path: str) -> Given:
    """A JSON file {"papers": [...], "researchers": [...]}: records the run stores when it
    starts, their stored ids joining the neighbourhood (Given)."""
    data = json.loads(_read_text(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object with 'papers' and 'researchers'")
    return Given([Paper.from_dict(p) for p in data.get("papers") or []],
                 [Researcher.from_dict(r) for r in data.get("researchers") or []], origin="cli")


def _progress(event: ProgressEvent) -> None:
    if event.status in ("done", "cached", "failed"):
        tail = f": {event.partial[:90]}" if event.partial else ""
        print(f"[{event.stage}] {event.agent} {event.status} ({event.done}/{event.total}){tail}",
              file=sys.stderr)


def cmd_run(args) -> int:
    """Everything the command line decides first (ids, the --input file, keys), as one
    request; then the store, and the run's own start, estimate and end."""
    given = _input_file(args.input) if args.input else None
    request = settings.run_request(args, settings.ids(args.researchers), settings.ids(args.papers), given)
    store = _store(args)
    if args.from_idea:  # the idea must be in the bank; a deleted run's idea is one message
        from ..access import Viewer  # noqa: PLC0415  (the command line is the operator)
        from ..ideas.bank import Bank  # noqa: PLC0415
        from ..ideas.lineage import source  # noqa: PLC0415

        request.config.from_idea = source(Bank(store), Viewer(), args.from_idea).id
    sim = Simulation(request, store, on_progress=_progress)
    sim.start(calibrate=True)
    _print_estimate([sim.estimate], [sim.expected], budget.cap_text(sim.config))
    print(f"run {sim.run.id}: started", file=sys.stderr)
    return _finish(sim.run_sync(), args)


def cmd_resume(args) -> int:
    """Re-run a stored run (interrupted, failed or cancelled) with its own settings under
    its own id; every model call that had succeeded comes from the cache."""

    store = _store(args)
    old = store.runs.resumable(args.run_id)
    request = settings.request_for(args, settings.with_cap(args, old.config))
    sim = Simulation(request, store, on_progress=_progress, run_id=old.id, resume=True)
    sim.start(calibrate=True)
    _print_estimate([sim.estimate], [sim.expected], budget.cap_text(sim.config),
                    "(calls cached by the earlier attempt cost nothing)")
    print(f"run {sim.run.id}: resuming (was {old.status})", file=sys.stderr)
    return _finish(sim.run_sync(), args)


def cmd_revise(args) -> int:
    """More revision rounds for a finished run with reviews (run/revise_more.py): the
    estimate of the new calls first, then the run resumed under its id, every earlier
    call from the cache; written like `resume`."""
    store = _store(args)
    run = store.runs.load(args.run_id)
    plan = revise_more.plan(run, args.rounds, store)
    expected = timing.for_config(plan.config, store, calibrate=True, counted=set(plan.stages))
    print(f"{plan.summary()} {expected.sentence()}", file=sys.stderr)
    sim = revise_more.simulation(store, run.id, args.rounds, on_progress=_progress,
                                 request_for=lambda config: settings.request_for(args, config),
                                 max_tokens=args.max_tokens, max_cost=args.max_cost)
    cap = budget.cap_text(sim.budget.config)
    if cap:
        print(f"Budget for the new calls: {cap}", file=sys.stderr)
    print(f"run {run.id}: revising ({len(plan.new_rounds)} more round"
          f"{'s' * (len(plan.new_rounds) > 1)})", file=sys.stderr)
    done = _finish(sim.run_sync(), args)
    for rnd in sim.run.rounds:
        mean = rnd.meta_review.score if rnd.meta_review and rnd.meta_review.score is not None else None
        print(f"round {rnd.number}: mean score {'-' if mean is None else f'{mean:.2f}'}"
              + (f" ({stop_words(rnd)})" if rnd.stopped else ""), file=sys.stderr)
    return done


def _print_estimate(estimates: list[budget.Estimate], expected: list[timing.Expected], cap: str,
                    note: str = "") -> None:
    """The estimate of calls, tokens, cost and wall time before anything starts (several
    runs' added up: a replay's modes), and the cap: printed as given (a run works its own
    out when it starts)."""
    total, wall = budget.combined(estimates), timing.combined(expected)
    print(f"{total.summary()}; {wall.text()}" + (f" {note}" if note else ""), file=sys.stderr)
    if cap:
        print(f"Budget: {cap}" + (" per mode" if len(estimates) > 1 else ""), file=sys.stderr)


def _finish(run, args) -> int:
    payload = json.dumps(run.to_dict(), indent=2)
    md = run_markdown(run)
    if args.out_json:
        Path(args.out_json).write_text(payload, "utf-8")
    if args.out_md:
        Path(args.out_md).write_text(md, "utf-8")
    if not args.out_json and not args.out_md:
        print(md)
    for note in run.notes:  # what the run could not use, said once (e.g. papers without abstracts)
        print(f"note: {note}", file=sys.stderr)
    for e in run.errors:
        if e.kind == budget.BudgetExceeded.__name__:
            print(f"{e.message}\n{e.hint}", file=sys.stderr)
    print(f"run {run.id}: {run.status}", file=sys.stderr)
    return 0 if run.status == "done" else 1


def cmd_similarity(args) -> int:

    if args.ref == "-" and args.gen == "-":
        raise InputError("only one of REF and GEN can be read from standard input")
    sides = {}
    for label, arg in (("reference", args.ref), ("generated", args.gen)):
        answers, missing = parse_five_questions(_read_text(arg))
        if len(missing) == 5:
            raise InputError(f"the {label} proposal ({arg}) has no recognisable questions",
                             "Use headings such as '[Question 1]', 'Q1' or '1.' for the five questions.")
        sides[label] = Proposal(**answers, missing=missing)
    store = open_store(args.db)
    # --api-key-env is the judge's key with --judge, else the embedder's.
    key = settings.key_for(args, args.embedder, typed=not args.judge)
    embedder = Embedder(args.embedder, store=store, api_key=key.value)
    sim = proposal_similarity(embedder, sides["generated"], sides["reference"])
    judged = _judge(args, store, sides) if args.judge else None
    if args.json:
        print(json.dumps({"per_question": sim.per_question, "mean": sim.mean,
                          "embedder": sim.embedder, "judge": judged,
                          "missing": {k: v.missing for k, v in sides.items()}}, indent=2))
    else:
        for k, v in sim.per_question.items():
            print(f"{k}\t{v:.4f}")
        print(f"mean\t{sim.mean:.4f}")
        for k, v in (judged or {}).items():
            print(f"judge {k}\t{v}")
        for label, side in sides.items():
            if side.missing:
                print(f"note: the {label} proposal lacks {', '.join(side.missing)}", file=sys.stderr)
    return 0


def _judge(args, store, sides) -> dict:
    """LLM-judge scores; needs an instruction-following model (not the tiny base model)."""

    ctx = StageContext(LLMClient(settings.judge_settings(args), store=store))
    return run_async(judge(ctx, sides["reference"], sides["generated"]))


def cmd_review_similarity(args) -> int:
    """Bullet recall of strengths and weaknesses, and Delta S, between two reviews."""

    sides = {}
    for label, arg in (("reference", args.ref), ("generated", args.gen)):
        data, missing = parse_review(_read_text(arg))
        if "strengths" in missing and "weaknesses" in missing:
            raise InputError(f"the {label} review ({arg}) has no Strengths or Weaknesses part",
                             "Label the parts 'Strengths:' and 'Weaknesses:' (and 'Score:').")
        sides[label] = data
    embedder = Embedder(args.embedder, store=open_store(args.db),
                        api_key=settings.key_for(args, args.embedder, typed=False).value)
    out = run_async(review_similarity(None, embedder, sides["generated"], sides["reference"]))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}\t{'-' if v is None else f'{v:.4f}'}")
    return 0


def _modes(text: str) -> list[str]:
    modes = settings.ids(text)
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise InputError(f"unknown mode(s): {', '.join(bad) or '(none)'}",
                         f"Use a comma-separated list of: {', '.join(MODES)}.")
    return modes


def _fmt(v) -> str:
    return "missing" if v is None else f"{v:.3f}"


def cmd_replay(args) -> int:
    """Hide a paper, let its neighbourhood write in each mode, compare with the paper."""

    store = _store(args)
    pasted = _read_text(args.reference_text) if args.reference_text else ""
    paper_id = args.paper_id
    if args.import_paper:

        with clients.semantic_scholar(store.http_cache) as s2:
            paper_id = import_target(store, args.paper_id, s2)
        print(f"imported {paper_id}", file=sys.stderr)
    replay = Replay(settings.replay_request(args), store, paper_id, modes=_modes(args.modes),
                    pasted=pasted, on_progress=_progress)
    configs = [sim.config for sim in replay.sims.values()]
    _print_estimate([budget.estimate(c, store) for c in configs],
                    [timing.for_config(c, store, calibrate=True) for c in configs],
                    budget.cap_text(configs[0]) if configs else "")
    result = replay.run_sync()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0 if all(r["status"] == "done" for r in result.rows()) else 1
    print(f"replay of {result.target_id}: {result.title}")
    for note in result.neighbourhood["notes"]:
        print(f"note: {note}")
    print(f"evaluator: {result.evaluator}")
    print("mode	" + "	".join((*QUESTION_KEYS, "mean")) + "	status")
    for row in result.rows():
        print(row["mode"] + "	" + "	".join(_fmt(row[k]) for k in QUESTION_KEYS)
              + f"	{_fmt(row['mean'])}	{row['status']}" + (f"  {row['error']}" if row["error"] else ""))
    band = result.chance
    if band:
        print(f"chance	median {band.median:.3f}, 90% of unrelated papers in "
              f"[{band.low:.3f}, {band.high:.3f}] (n = {band.n})")
    else:
        print("chance	not available: fewer than 3 unrelated papers with five answers in the store")
    return 0 if all(r["status"] == "done" for r in result.rows()) else 1


def cmd_bench(args) -> int:
    """Replay every task of a JSON-lines file; per-mode similarity with bootstrap intervals."""
    if args.worker or args.report:
        return _bench_shared(args)
    if not args.tasks:
        raise InputError("give a task file (JSON lines), or --report NAME")

    store = _store(args)
    tasks = bench.load_tasks(args.tasks)
    out = Path(args.out or Path("bench-results") / Path(args.tasks).stem)
    bar = tqdm(total=len(tasks), desc="tasks", unit="task", file=sys.stderr,
               disable=args.no_progress)
    done_before = bench.read_results(out / "results.jsonl") if not args.fresh else {}
    bar.update(sum(1 for t in tasks if t.id in done_before))

    def tick(rec: dict) -> None:
        bar.update(1)
        if rec["status"] != "done":
            bar.write(f"task {rec['task_id']} failed: {rec.get('error', '')}")

    try:
        result = run_async(bench.run_bench(tasks, settings.replay_request(args), store, out,
                                           modes=_modes(args.modes), concurrency=args.tasks_at_once,
                                           on_task_done=tick, fresh=args.fresh))
    finally:
        bar.close()
    print(bench.table(result))
    print(f"\n{len(tasks)} tasks ({result.skipped} resumed from {out / 'results.jsonl'}) in "
          f"{result.seconds:.1f} s; wrote {out / 'summary.csv'} and {out / 'summary.json'}",
          file=sys.stderr)
    return 0 if all(r["status"] == "done" for r in result.records) else 1


def _bench_shared(args) -> int:
    """Workers sharing one bench through the store, or the report of what they finished."""
    store = _store(args)
    name = args.report or args.name or Path(args.tasks).stem
    out = Path(args.out or Path("bench-results") / name)
    if args.worker:
        # import the model client and load MiniLM before claiming, not while holding a
        # task's lease: a lab machine's worker pays this once, a few CPU-seconds
        warmup.warm_up().join()
        print("worker ready", file=sys.stderr, flush=True)
        done = run_async(bench_workers.run_worker(
            bench.load_tasks(args.tasks), settings.replay_request(args), store, name,
            modes=_modes(args.modes), concurrency=args.tasks_at_once,
            on_task_done=lambda rec: print(f"task {rec['task_id']}: {rec['status']}", file=sys.stderr, flush=True)))
        print(f"this worker finished {done} task(s) of bench {name}", file=sys.stderr)
    result = bench_workers.report(store, name, out)
    print(bench.table(result))
    print(f"\n{len(result.records)} finished task(s) of bench {name} "
          f"({store.bench_tasks.counts(name)}); wrote {out / 'summary.csv'} and "
          f"{out / 'summary.json'}", file=sys.stderr)
    return 0 if all(r["status"] == "done" for r in result.records) else 1


def cmd_search(args) -> int:
    """Papers (or researchers) by words and meaning; with no query, everything in the
    fields. Each hit says why it matched; nothing found is a message, not an error."""
    store = _store(args)
    fields = settings.ids(args.fields)
    if not args.query.strip():
        if args.researchers:
            for r in store.corpus.search_researchers("", fields, args.limit):
                print(f"{r.id}\t{r.name}\t{', '.join(r.fields)}\t{len(r.publication_ids)} papers")
        else:
            for p in store.corpus.search_papers("", fields, args.limit):
                print(f"{p.id}\t{p.year or ''}\t{', '.join(p.fields)}\t{p.title}")
        return 0
    topics = topic_search.for_store(store)
    if embedded := topics.prepare(limit=2000):  # kept in the store: the next search goes on
        print(f"({embedded} papers embedded for search by meaning)", file=sys.stderr)
    if args.researchers:
        r_hits = topics.researchers(args.query, fields, args.limit)
        for h in r_hits:
            r = h.researcher
            print(f"{r.id}\t{r.name}\t{', '.join(r.fields)}\t{topic_search.researcher_reason(h)}")
        found = bool(r_hits)
    else:
        p_hits = topics.papers(args.query, fields, args.limit)
        for h in p_hits:
            p = h.paper
            print(f"{p.id}\t{p.year or ''}\t{', '.join(p.fields)}\t{p.title}\t"
                  f"{topic_search.paper_reason(h)}")
        found = bool(p_hits)
    if not found:
        print(topic_search.EMPTY_HINT, file=sys.stderr)
    return 0


def cmd_init(args) -> int:
    store = _store(args)
    print(json.dumps({"database": str(store.path), **store.counts()}, indent=2))
    return 0


def cmd_migrate_store(args) -> int:
    print(json.dumps({"copied": copy_store(args.source, args.target)}, indent=2))
    return 0
