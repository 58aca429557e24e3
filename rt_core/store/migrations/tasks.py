"""The batch replay's task queue, shared by workers in several processes."""
from __future__ import annotations

import sqlite3

from . import migration


@migration
def m011_bench_tasks(db: sqlite3.Connection) -> None:
    """Benchmark tasks shared by workers on several machines (tasks.py): one row per task
    of a named bench, who holds it and until when, and its result once finished."""
    db.executescript("""
    CREATE TABLE bench_tasks (
        bench TEXT NOT NULL,
        task_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        task_json TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'running', 'done', 'failed')),
        worker TEXT NOT NULL DEFAULT '',
        lease_until REAL,
        attempts INTEGER NOT NULL DEFAULT 0,
        result_json TEXT,
        finished_at TEXT,
        PRIMARY KEY (bench, task_id)
    );
    CREATE INDEX bench_tasks_claim ON bench_tasks(bench, status, position);
    """)
