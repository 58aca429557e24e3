"""A queue of benchmark tasks in the store, shared by workers on any number of machines.

Each task is claimed by exactly one worker at a time, under a lease the worker renews while
it works: on PostgreSQL with `FOR UPDATE SKIP LOCKED` (workers never queue behind each
other's row locks), on SQLite inside one immediate transaction (writers take turns). A
worker that dies stops renewing; once its lease has run out the task is claimed again,
and the late worker's result is refused (`finish` is conditional on still holding it).
"""
from __future__ import annotations

import json
import os
import time

from .db import Database

_CLAIMABLE = ("bench=? AND (status='pending' OR (status='running' AND lease_until < ?))")


def lease_seconds() -> float:
    """How long a claim lasts without a renewal (RT_TASK_LEASE_SECONDS, default 120)."""
    try:
        return max(0.05, float(os.environ.get("RT_TASK_LEASE_SECONDS", 120)))
    except ValueError:
        return 120.0


class BenchTasks:
    def __init__(self, db: Database):
        self.db = db

    def add(self, bench: str, tasks: list[dict]) -> int:
        """Queue tasks under the bench's name (each by its "id"); tasks already queued stay
        as they are, so every worker may start with the same file. Returns how many were new."""
        with self.db.transaction() as db:
            return sum(db.execute(
                "INSERT INTO bench_tasks(bench, task_id, position, task_json) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING", (bench, t["id"], i, json.dumps(t))).rowcount
                for i, t in enumerate(tasks))

    def claim(self, bench: str, worker: str) -> dict | None:
        """The next task for `worker` (pending, or running under a lease that ran out), now
        leased to it; None when nothing is left to claim."""
        now = time.time()
        values = (worker, now + lease_seconds())
        if self.db.dialect == "postgresql":
            row = self.db.conn.execute(
                "UPDATE bench_tasks SET status='running', worker=?, lease_until=?, attempts=attempts+1 "
                "WHERE (bench, task_id) = (SELECT bench, task_id FROM bench_tasks WHERE "
                f"{_CLAIMABLE} ORDER BY position LIMIT 1 FOR UPDATE SKIP LOCKED) "
                "RETURNING task_json", (*values, bench, now)).fetchone()
            return json.loads(row[0]) if row else None
        with self.db.transaction() as db:
            row = db.execute(f"SELECT task_id, task_json FROM bench_tasks WHERE {_CLAIMABLE} "
                             "ORDER BY position LIMIT 1", (bench, now)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE bench_tasks SET status='running', worker=?, lease_until=?, "
                       "attempts=attempts+1 WHERE bench=? AND task_id=?", (*values, bench, row[0]))
            return json.loads(row[1])

    def renew(self, bench: str, task_id: str, worker: str) -> bool:
        """Extend the lease; False when the task is no longer this worker's."""
        return self.db.conn.execute(
            "UPDATE bench_tasks SET lease_until=? WHERE bench=? AND task_id=? AND worker=? AND "
            "status='running'", (time.time() + lease_seconds(), bench, task_id, worker)).rowcount == 1

    def finish(self, bench: str, task_id: str, worker: str, record: dict) -> bool:
        """Store the task's result record (status "done" or "failed"). False, and nothing
        stored, when the lease was lost and another worker has the task now."""
        status = "done" if record.get("status") == "done" else "failed"
        return self.db.conn.execute(
            "UPDATE bench_tasks SET status=?, result_json=?, lease_until=NULL, "
            "finished_at=datetime('now') WHERE bench=? AND task_id=? AND worker=? AND "
            "status='running'", (status, json.dumps(record), bench, task_id, worker)).rowcount == 1

    def seconds_to_lease_end(self, bench: str) -> float | None:
        """How long until the first lease of another worker's running task runs out (0 if one
        has already); None when no task is running. A worker with nothing to claim waits this
        long rather than leaving a dead worker's task `running` for ever."""
        row = self.db.conn.execute("SELECT min(lease_until) FROM bench_tasks WHERE bench=? AND "
                                   "status='running'", (bench,)).fetchone()
        return None if row[0] is None else max(0.0, row[0] - time.time())

    def results(self, bench: str) -> list[dict]:
        """Finished records in task order (what `bench --report` summarises)."""
        return [json.loads(r[0]) for r in self.db.conn.execute(
            "SELECT result_json FROM bench_tasks WHERE bench=? AND status IN ('done', 'failed') "
            "ORDER BY position", (bench,))]

    def counts(self, bench: str) -> dict[str, int]:
        return dict(self.db.conn.execute("SELECT status, count(*) FROM bench_tasks WHERE bench=? "
                                         "GROUP BY status", (bench,)).fetchall())
