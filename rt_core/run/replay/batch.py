"""Batch benchmark: replay many papers in several modes; similarity with bootstrap intervals.

A task file is JSON lines, one task per line:
    {"paper_id": "arxiv:2410.16179"}
    {"paper_id": "...", "authors": ["r-..."], "references": ["..."], "reference_text": "..."}
`authors` (researcher ids) and `references` (paper ids) default to the store's graph;
`reference_text` is the paper's own five answers, when the user has them.

Finished tasks are appended to `results.jsonl` in the output folder as they finish, so an
interrupted benchmark resumes without redoing them. The summary (per mode, per question
and the mean, with bootstrap 95% intervals, and paired differences to `self`) is written
as `summary.csv` and `summary.json` and printed as a table. Scores are pooled only
within one evaluator; a benchmark whose tasks were scored by different evaluators (say
a shipped summary for one paper and the abstract for another) reports each group apart.
"""
from __future__ import annotations

import asyncio
import csv
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import InputError, RTError
from ...types import QUESTION_KEYS, RunRequest
from .paper import MODE_ORDER, Replay

METRICS = (*QUESTION_KEYS, "mean")


@dataclass
class Task:
    paper_id: str
    authors: list[str] | None = None
    references: list[str] | None = None
    reference_text: str = ""
    id: str = ""

    def __post_init__(self):
        self.id = self.id or self.paper_id


def load_tasks(path: Path | str) -> list[Task]:
    path = Path(path)
    if not path.exists():
        raise InputError(f"no such task file: {path}")
    tasks, seen = [], set()
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict) or not str(data.get("paper_id") or "").strip():
            raise InputError(f"{path}:{n}: each task needs a 'paper_id'",
                             'Write one object per line, e.g. {"paper_id": "arxiv:2410.16179"}.')
        task = Task(str(data["paper_id"]).strip(), data.get("authors"), data.get("references"),
                    str(data.get("reference_text") or ""), str(data.get("id") or ""))
        if task.id in seen:
            raise InputError(f"{path}:{n}: task '{task.id}' appears twice",
                             "Give repeated papers distinct 'id' values.")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise InputError(f"{path} holds no tasks")
    return tasks


def read_results(path: Path) -> dict[str, dict]:
    """Finished tasks from an earlier (perhaps interrupted) benchmark: task id -> record.
    A half-written last line (the process died mid-write) is ignored."""
    done = {}
    if path.exists():
        for line in path.read_text("utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[rec["task_id"]] = rec
    return done


@dataclass
class BenchResult:
    records: list[dict]
    summary: list[dict]  # one row per evaluator x mode x metric
    differences: list[dict] = field(default_factory=list)  # paired mode - self
    skipped: int = 0  # tasks resumed from an earlier run
    seconds: float = 0.0


def bootstrap_ci(values: list[float], seed: int = 0) -> tuple[float | None, float | None]:
    """95% percentile-bootstrap interval of the mean (scipy); None with fewer than 2 values
    or no spread."""
    if len(values) < 2 or np.ptp(values) == 0:
        return (None, None) if len(values) < 2 else (float(values[0]), float(values[0]))
    from scipy import stats  # noqa: PLC0415

    res = stats.bootstrap((np.asarray(values, dtype=float),), np.mean, n_resamples=2000,
                          confidence_level=0.95, method="percentile",
                          rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarise(records: list[dict], modes: list[str]) -> tuple[list[dict], list[dict]]:
    """Per evaluator, mode and metric: mean over tasks and its bootstrap interval. A
    question a proposal left out counts 0, as in the per-task mean."""
    summary, diffs = [], []
    groups: dict[str, list[dict]] = {}
    for rec in records:
        for row in rec["rows"]:
            if row.get("mean") is not None:
                groups.setdefault(rec["evaluator"], []).append({**row, "task_id": rec["task_id"]})
    for evaluator, rows in groups.items():
        by_mode = {m: {r["task_id"]: r for r in rows if r["mode"] == m} for m in modes}
        for mode in modes:
            got = list(by_mode[mode].values())
            if not got:
                continue
            for metric in METRICS:
                vals = [float(r.get(metric) or 0.0) for r in got]
                lo, hi = bootstrap_ci(vals)
                summary.append({"evaluator": evaluator, "mode": mode, "metric": metric,
                                "n": len(vals), "mean": round(float(np.mean(vals)), 4),
                                "ci_low": None if lo is None else round(lo, 4),
                                "ci_high": None if hi is None else round(hi, 4)})
        base = by_mode.get("self") or {}
        for mode in modes:
            if mode == "self":
                continue
            paired = [(by_mode[mode][t]["mean"] - base[t]["mean"]) for t in by_mode[mode]
                      if t in base]
            if paired:
                lo, hi = bootstrap_ci(paired)
                diffs.append({"evaluator": evaluator, "comparison": f"{mode} - self",
                              "n": len(paired), "mean": round(float(np.mean(paired)), 4),
                              "ci_low": None if lo is None else round(lo, 4),
                              "ci_high": None if hi is None else round(hi, 4),
                              "wins": sum(d > 0 for d in paired)})
    return summary, diffs


async def run_bench(tasks: list[Task], request: RunRequest, store, out_dir: Path | str,
                    modes: tuple[str, ...] | list[str] = MODE_ORDER, concurrency: int = 2,
                    on_task_done: Callable[[dict], None] | None = None,
                    fresh: bool = False) -> BenchResult:
    """Run every task not already in out_dir/results.jsonl, at most `concurrency` at a
    time; each task replays its paper in `modes` side by side."""
    modes = [m for m in MODE_ORDER if m in modes]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    if fresh and results_path.exists():
        results_path.unlink()
    done = read_results(results_path)
    if results_path.exists() and not results_path.read_bytes().endswith(b"\n") \
            and results_path.stat().st_size:
        with results_path.open("a", encoding="utf-8") as fh:  # end a half-written line
            fh.write("\n")
    # A finished record counts only if it covers the modes asked for now.
    finished = {t: r for t, r in done.items() if set(modes) <= {row["mode"] for row in r["rows"]}}
    todo = [t for t in tasks if t.id not in finished]
    sem = asyncio.Semaphore(max(1, concurrency))
    lock = asyncio.Lock()
    started = time.perf_counter()

    async def one(task: Task) -> None:
        async with sem:
            rec = await task_record(task, request, store, modes)
            async with lock:
                with results_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")
                finished[task.id] = rec
            if on_task_done:
                on_task_done(rec)

    await asyncio.gather(*(one(t) for t in todo))
    records = [finished[t.id] for t in tasks if t.id in finished]
    summary, diffs = summarise([r for r in records if r["status"] == "done"], modes)
    result = BenchResult(records, summary, diffs, skipped=len(tasks) - len(todo),
                         seconds=round(time.perf_counter() - started, 2))
    write_outputs(result, out)
    return result


async def task_record(task: Task, request: RunRequest, store, modes: list[str]) -> dict:
    """Replay one task's paper in `modes`: its result record, "done" or "failed"."""
    try:
        replay = Replay(request, store, task.paper_id, modes=modes, pasted=task.reference_text,
                        authors=task.authors, references=task.references)
        result = await replay.arun()
        return {"task_id": task.id, "paper_id": task.paper_id, "status": "done", **result.to_dict()}
    except RTError as exc:
        return {"task_id": task.id, "paper_id": task.paper_id, "status": "failed",
                "error": f"{exc} {exc.hint}".strip(), "evaluator": "", "rows": []}


def write_outputs(result: BenchResult, out: Path) -> None:
    fields = ["evaluator", "mode", "metric", "n", "mean", "ci_low", "ci_high"]
    with (out / "summary.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(result.summary)
    (out / "summary.json").write_text(json.dumps(
        {"summary": result.summary, "differences": result.differences,
         "tasks": [{k: v for k, v in r.items() if k in ("task_id", "paper_id", "status", "error",
                                                         "evaluator", "reference_source", "rows")}
                   for r in result.records]}, indent=2), "utf-8")


def table(result: BenchResult) -> str:
    """The summary as a fixed-width table: one block per evaluator, modes as rows."""
    def cell(row: dict | None) -> str:
        if row is None:
            return "-"
        if row["ci_low"] is None:
            return f"{row['mean']:.3f}"
        return f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"

    lines = []
    for evaluator in dict.fromkeys(r["evaluator"] for r in result.summary):
        rows = [r for r in result.summary if r["evaluator"] == evaluator]
        modes = list(dict.fromkeys(r["mode"] for r in rows))
        n = max(r["n"] for r in rows)
        lines.append(f"evaluator: {evaluator}  (tasks: {n}; mean and bootstrap 95% interval)")
        cells = {(r["mode"], r["metric"]): r for r in rows}
        width = 25
        lines.append("mode    " + "".join(m.ljust(width) for m in METRICS))
        for mode in modes:
            lines.append(mode.ljust(8) + "".join(cell(cells.get((mode, m))).ljust(width)
                                                 for m in METRICS))
        for d in (x for x in result.differences if x["evaluator"] == evaluator):
            lines.append(f"{d['comparison']}: {cell(d)} (higher in {d['wins']} of {d['n']} tasks)")
        lines.append("")
    failed = [r for r in result.records if r["status"] != "done"]
    for r in failed:
        lines.append(f"failed: {r['task_id']}: {r.get('error', '')}")
    return "\n".join(lines).rstrip()


__all__ = ["BenchResult", "Task", "load_tasks", "run_bench", "summarise", "table"]
