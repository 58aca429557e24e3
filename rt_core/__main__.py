"""Command line: `python -m rt_core run|replay|bench|similarity|search|init ...`.

API keys are read from the environment only (never a command-line argument,
which other users can see in the process list).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tqdm import tqdm

from . import config
from .community import ensure_loaded
from .config import LOCAL_EMBEDDER, LOCAL_MODEL
from .errors import InputError, RTError
from .export import run_markdown
from .models.client import LLMClient, ModelSettings, run_async
from .models.embed import Embedder
from .models.scripted import maybe_install_from_env
from .run import bench
from .run.context import StageContext
from .run.evaluate import judge, proposal_similarity, review_similarity
from .run.parse import parse_five_questions, parse_review
from .run.replay import Replay, import_target
from .run.simulation import Simulation
from .sources import SemanticScholar
from .store import open_store
from .types import MODES, Paper, ProgressEvent, Proposal, Researcher, RunConfig, RunRequest


def _ids(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _read_text(arg: str) -> str:
    if arg == "-":
        return sys.stdin.read()
    path = Path(arg)
    if not path.exists():
        raise InputError(f"no such file: {arg}")
    return path.read_text("utf-8")


def _store(args):

    store = open_store(args.db)
    ensure_loaded(store)
    for run_id in store.runs.reap_orphans():  # runs whose process died: resumable
        print(f"run {run_id} was left running by a process that has ended: marked interrupted "
              f"(resume it with: python -m rt_core resume {run_id})", file=sys.stderr)
    return store


def _api_key(args) -> str:
    """The key from --api-key-env, else the provider's usual environment variable."""
    return os.environ.get(args.api_key_env, "") if args.api_key_env else config.env_key_for(args.model)


def _settings(args):
    """Model settings for commands that call a model without a run (the judge)."""

    return ModelSettings(model=args.model, api_key=_api_key(args), base_url=args.base_url or "",
                         temperature=args.temperature, timeout=args.timeout)


def _load_input_file(store, path: str) -> tuple[list[str], list[str]]:
    """A JSON file {"papers": [...], "researchers": [...]} imported into the store."""
    data = json.loads(_read_text(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object with 'papers' and 'researchers'")
    papers = [Paper.from_dict(p) for p in data.get("papers") or []]
    researchers = [Researcher.from_dict(r) for r in data.get("researchers") or []]
    bundle = store.corpus.import_bundle(papers, researchers, origin="cli")
    return bundle.researcher_ids, bundle.paper_ids


def _progress(event: ProgressEvent) -> None:
    if event.status in ("done", "cached", "failed"):
        tail = f": {event.partial[:90]}" if event.partial else ""
        print(f"[{event.stage}] {event.agent} {event.status} ({event.done}/{event.total}){tail}",
              file=sys.stderr)


def cmd_run(args) -> int:

    store = _store(args)
    researchers, papers = _ids(args.researchers), _ids(args.papers)
    if args.input:
        r2, p2 = _load_input_file(store, args.input)
        researchers, papers = researchers + r2, papers + p2
    cfg = RunConfig(researcher_ids=researchers, paper_ids=papers, model=args.model, mode=args.mode,
                    num_reviewers=args.reviewers, reviewer_ids=_ids(args.reviewer_ids),
                    cutoff_year=args.cutoff, reference_paper_id=args.reference or "",
                    embedder=args.embedder, temperature=args.temperature,
                    base_url=args.base_url or "", concurrency=args.concurrency)
    request = RunRequest(cfg, api_key=_api_key(args), timeout=args.timeout)
    sim = Simulation(request, store, on_progress=_progress)
    print(f"run {sim.run.id}: started", file=sys.stderr)
    return _finish(sim.run_sync(), args)


def cmd_resume(args) -> int:
    """Re-run a stored run (interrupted, failed or cancelled) with its own settings under
    its own id; every model call that had succeeded comes from the cache."""

    store = _store(args)
    old = store.runs.load(args.run_id)
    if old.status == "running":
        raise InputError(f"run {args.run_id} is still running in a live process",
                         "Wait for it to finish; interrupted, failed or cancelled runs resume.")
    key = (os.environ.get(args.api_key_env, "") if args.api_key_env
           else config.env_key_for(old.config.model))
    request = RunRequest(old.config, api_key=key, timeout=args.timeout)
    sim = Simulation(request, store, on_progress=_progress, run_id=old.id, resume=True)
    print(f"run {sim.run.id}: resuming (was {old.status})", file=sys.stderr)
    return _finish(sim.run_sync(), args)


def _finish(run, args) -> int:
    payload = json.dumps(run.to_dict(), indent=2)
    md = run_markdown(run)
    if args.out_json:
        Path(args.out_json).write_text(payload, "utf-8")
    if args.out_md:
        Path(args.out_md).write_text(md, "utf-8")
    if not args.out_json and not args.out_md:
        print(md)
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
    key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    store = open_store(args.db)
    embedder = Embedder(args.embedder, store=store, api_key=key if not args.judge else "")
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

    ctx = StageContext(LLMClient(_settings(args), store=store))
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
    embedder = Embedder(args.embedder, store=open_store(args.db))
    out = run_async(review_similarity(None, embedder, sides["generated"], sides["reference"]))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}\t{'-' if v is None else f'{v:.4f}'}")
    return 0


def _replay_request(args) -> RunRequest:
    """One RunRequest for replay and bench: the run's model and the evaluator, keys from
    the environment only."""
    cfg = RunConfig(model=args.model, base_url=args.base_url or "", temperature=args.temperature,
                    num_reviewers=args.reviewers, embedder=args.embedder,
                    concurrency=args.concurrency, evaluator_model=args.evaluator_model or "",
                    evaluator_base_url=args.evaluator_base_url or "",
                    keep_undated=args.keep_undated)
    return RunRequest(cfg, api_key=_api_key(args), timeout=args.timeout,
                      embedder_key=config.env_key_for(args.embedder),
                      evaluator_key=config.env_key_for(args.evaluator_model or ""))


def _modes(text: str) -> list[str]:
    modes = _ids(text)
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

        with SemanticScholar(api_key=os.environ.get("S2_API_KEY") or None,
                             cache=store.http_cache) as s2:
            paper_id = import_target(store, args.paper_id, s2)
        print(f"imported {paper_id}", file=sys.stderr)
    result = Replay(_replay_request(args), store, paper_id, modes=_modes(args.modes),
                    pasted=pasted, on_progress=_progress).run_sync()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0 if all(r["status"] == "done" for r in result.rows()) else 1
    print(f"replay of {result.target_id}: {result.title}")
    for note in result.neighbourhood["notes"]:
        print(f"note: {note}")
    print(f"evaluator: {result.evaluator}")
    print("mode	" + "	".join(("q1", "q2", "q3", "q4", "q5", "mean")) + "	status")
    for row in result.rows():
        print(row["mode"] + "	" + "	".join(_fmt(row[k]) for k in ("q1", "q2", "q3", "q4", "q5"))
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
        result = run_async(bench.run_bench(tasks, _replay_request(args), store, out,
                                           modes=_modes(args.modes), concurrency=args.tasks_at_once,
                                           on_task_done=tick, fresh=args.fresh))
    finally:
        bar.close()
    print(bench.table(result))
    print(f"\n{len(tasks)} tasks ({result.skipped} resumed from {out / 'results.jsonl'}) in "
          f"{result.seconds:.1f} s; wrote {out / 'summary.csv'} and {out / 'summary.json'}",
          file=sys.stderr)
    return 0 if all(r["status"] == "done" for r in result.records) else 1


def _replay_args(p) -> None:
    p.add_argument("--modes", default="self,agent,data,global",
                   help="comma-separated modes to run side by side")
    p.add_argument("--model", default=LOCAL_MODEL, help="litellm model string for the run")
    p.add_argument("--base-url", help="API base URL of the run's model")
    p.add_argument("--api-key-env", help="name of the environment variable holding the API key")
    p.add_argument("--temperature", type=float, default=RunConfig.temperature)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--reviewers", type=int, default=0,
                   help="reviewers per mode (similarity does not need them)")
    p.add_argument("--concurrency", type=int, default=4, help="model calls at once per mode")
    p.add_argument("--embedder", default=LOCAL_EMBEDDER, help="the evaluator's embedder")
    p.add_argument("--evaluator-model", help="a capable model that restates a reference in five "
                   "questions once (stored); default: pasted text or shipped summaries")
    p.add_argument("--evaluator-base-url")
    p.add_argument("--keep-undated", action="store_true",
                   help="let authors read their papers that have no year")


def cmd_search(args) -> int:
    store = _store(args)
    fields = _ids(args.fields)
    if args.researchers:
        for r in store.corpus.search_researchers(args.query, fields, args.limit):
            print(f"{r.id}\t{r.name}\t{', '.join(r.fields)}\t{len(r.publication_ids)} papers")
    else:
        for p in store.corpus.search_papers(args.query, fields, args.limit):
            print(f"{p.id}\t{p.year or ''}\t{', '.join(p.fields)}\t{p.title}")
    return 0


def cmd_init(args) -> int:
    store = _store(args)
    print(json.dumps({"database": str(store.path), **store.counts()}, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m rt_core", description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="SQLite store path (default: the user data folder)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="simulate read -> write -> review on a neighbourhood")
    r.add_argument("--researchers", help="comma-separated researcher ids (the authors)")
    r.add_argument("--papers", help="comma-separated paper ids")
    r.add_argument("--input", help="JSON file with 'papers' and 'researchers' to import and use")
    r.add_argument("--model", default=LOCAL_MODEL, help="litellm model string")
    r.add_argument("--base-url", help="API base URL (Ollama, vLLM, any OpenAI-compatible server)")
    r.add_argument("--api-key-env", help="name of the environment variable holding the API key")
    r.add_argument("--temperature", type=float, default=RunConfig.temperature)
    r.add_argument("--timeout", type=float, default=120.0)
    r.add_argument("--mode", choices=MODES, default="global")
    r.add_argument("--reviewers", type=int, default=3, help="number of reviewers")
    r.add_argument("--reviewer-ids", help="comma-separated reviewer ids (instead of choosing)")
    r.add_argument("--cutoff", type=int, help="profile cut-off year")
    r.add_argument("--reference", help="paper id to compare the proposal with")
    r.add_argument("--embedder", default=LOCAL_EMBEDDER)
    r.add_argument("--concurrency", type=int, default=4)
    r.add_argument("--out-json")
    r.add_argument("--out-md")
    r.set_defaults(fn=cmd_run)

    rs = sub.add_parser("resume", help="resume an interrupted, failed or cancelled run under its id")
    rs.add_argument("run_id")
    rs.add_argument("--api-key-env", help="name of the environment variable holding the API key")
    rs.add_argument("--timeout", type=float, default=120.0)
    rs.add_argument("--out-json")
    rs.add_argument("--out-md")
    rs.set_defaults(fn=cmd_resume)

    s = sub.add_parser("similarity", help="per-question similarity of two 5Q proposals")
    s.add_argument("ref", help="reference proposal file, or - for stdin")
    s.add_argument("gen", help="generated proposal file, or - for stdin")
    s.add_argument("--embedder", default=LOCAL_EMBEDDER)
    s.add_argument("--api-key-env")
    s.add_argument("--json", action="store_true")
    s.add_argument("--judge", action="store_true",
                   help="also ask an LLM judge for consistency, novelty and feasibility (1-10)")
    s.add_argument("--model", default=LOCAL_MODEL, help="judge model (litellm string)")
    s.add_argument("--base-url", help="judge model base URL")
    s.add_argument("--temperature", type=float, default=0.0)
    s.add_argument("--timeout", type=float, default=120.0)
    s.set_defaults(fn=cmd_similarity)

    rv = sub.add_parser("review-similarity",
                        help="strength/weakness bullet recall and Delta S of two reviews")
    rv.add_argument("ref", help="reference review (Strengths:/Weaknesses:/Score:), file or -")
    rv.add_argument("gen", help="generated review, file or -")
    rv.add_argument("--embedder", default=LOCAL_EMBEDDER)
    rv.add_argument("--json", action="store_true")
    rv.set_defaults(fn=cmd_review_similarity)

    rp = sub.add_parser("replay", help="hide a real paper and let its neighbourhood re-create it")
    rp.add_argument("paper_id", help="a paper id in the store (see `search`), or with --import "
                    "an arXiv id or DOI")
    rp.add_argument("--import", dest="import_paper", action="store_true",
                    help="first import the paper and the papers it cites from Semantic Scholar "
                         "(needs internet; RT_S2_URL points at another server)")
    rp.add_argument("--reference-text", help="the paper's own five answers (file or -)")
    rp.add_argument("--json", action="store_true")
    _replay_args(rp)
    rp.set_defaults(fn=cmd_replay)

    b = sub.add_parser("bench", help="replay every paper of a task file (JSON lines)")
    b.add_argument("tasks", help='JSON lines, one {"paper_id": ...} per line '
                   "(bench/tasks/replay_targets.jsonl ships with the starter community)")
    b.add_argument("--out", help="output folder (default bench-results/<task file name>)")
    b.add_argument("--tasks-at-once", type=int, default=2, help="tasks run concurrently")
    b.add_argument("--fresh", action="store_true", help="start over instead of resuming")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    _replay_args(b)
    b.set_defaults(fn=cmd_bench)

    q = sub.add_parser("search", help="search the store")
    q.add_argument("query", nargs="?", default="")
    q.add_argument("--fields", help="comma-separated field ids")
    q.add_argument("--researchers", action="store_true", help="search researchers, not papers")
    q.add_argument("--limit", type=int, default=20)
    q.set_defaults(fn=cmd_search)

    i = sub.add_parser("init", help="create the store and load the starter community")
    i.set_defaults(fn=cmd_init)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    maybe_install_from_env()
    try:
        return args.fn(args)
    except RTError as exc:
        print(f"error: {exc}" + (f"\nhint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"error: not valid JSON: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
