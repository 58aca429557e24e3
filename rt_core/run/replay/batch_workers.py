"""Benchmark workers: any number of processes, on any machines, sharing one store.

`python -m rt_core bench TASKS.jsonl --worker` queues the file's tasks under a bench name
(once, however many workers start with it) and then claims tasks one at a time from the
store's queue (`store.bench_tasks`) until none is left, renewing its lease while a task
runs. A worker that dies loses its lease and another one redoes its task (a worker with
nothing left to claim waits for the other workers' running tasks before it stops). `--report NAME`
summarises whatever has finished, in the same table, CSV and JSON as a one-process bench.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from collections.abc import Callable
from pathlib import Path

from ...errors import NotFoundError
from ...store.runs import HOST
from ...store.tasks import lease_seconds
from ...types import RunRequest
from .batch import BenchResult, Task, summarise, task_record, write_outputs
from .paper import MODE_ORDER

WAIT_POLL_SECONDS = 2.0  # how often an idle worker looks whether the others' tasks are done


def worker_id() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def run_worker(tasks: list[Task], request: RunRequest, store, name: str,
                     modes: list[str] | tuple[str, ...] = MODE_ORDER, concurrency: int = 1,
                     on_task_done: Callable[[dict], None] | None = None) -> int:
    """Work on bench `name` until no task is left to claim; returns how many this worker
    finished (a result refused because its lease was lost does not count)."""
    modes = [m for m in MODE_ORDER if m in modes]
    queue = store.bench_tasks
    queue.add(name, [{**dataclasses.asdict(t), "modes": modes} for t in tasks])
    me, finished = worker_id(), [0]

    async def keep_lease(task_id: str) -> None:
        while True:  # a timer, not synchronisation: the lease must outlive the task
            await asyncio.sleep(lease_seconds() / 3)
            queue.renew(name, task_id, me)

    async def next_task() -> dict | None:
        """A task to work on; with none pending, wait while other workers' tasks run, in
        case one of them dies (its lease runs out and its task is claimable again)."""
        while (claimed := queue.claim(name, me)) is None:
            wait = queue.seconds_to_lease_end(name)
            if wait is None:
                return None
            # a timer on the lease, looking again every few seconds: the others' tasks
            # usually finish (nothing left: stop) long before their leases would run out
            await asyncio.sleep(min(wait + 0.05, WAIT_POLL_SECONDS))
        return claimed

    async def loop() -> None:
        while (claimed := await next_task()) is not None:
            task_modes = claimed.pop("modes", modes)
            task = Task(**claimed)
            renewing = asyncio.ensure_future(keep_lease(task.id))
            try:
                rec = await task_record(task, request, store, task_modes)
            finally:
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewing
            if queue.finish(name, task.id, me, rec):
                finished[0] += 1
                if on_task_done:
                    on_task_done(rec)

    await asyncio.gather(*(loop() for _ in range(max(1, concurrency))))
    return finished[0]


def report(store, name: str, out_dir: Path | str) -> BenchResult:
    """The summary of what bench `name` has finished so far, written to out_dir too."""
    records = store.bench_tasks.results(name)
    counts = store.bench_tasks.counts(name)
    if not counts:
        raise NotFoundError(f"no benchmark named {name!r} in this store",
                            "Start workers with: python -m rt_core bench TASKS.jsonl --worker")
    modes = [m for m in MODE_ORDER if any(row["mode"] == m for r in records for row in r["rows"])]
    summary, diffs = summarise([r for r in records if r["status"] == "done"], modes)
    result = BenchResult(records, summary, diffs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_outputs(result, out)
    return result
