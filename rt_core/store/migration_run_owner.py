"""Which browser started a run: the SHA-256 of the owner token that browser keeps in a cookie
(rt_core.access). Kept in a file of its own so it can join any later regrouping of the
migration files unchanged; `migrator` imports it after the others. Only the hash is stored, it
is never put in a run's JSON, so no export carries it. Runs made before, and runs started from
the command line, have none: on a shared server only the operator controls them."""
from __future__ import annotations

import sqlite3

from . import migrations_later  # noqa: F401  (m013-m015 are registered first)
from .migrations import migration


@migration
def m016_run_owner_hash(db: sqlite3.Connection) -> None:
    db.executescript("""
    ALTER TABLE runs ADD COLUMN owner_hash TEXT;
    CREATE INDEX runs_owner_hash ON runs(owner_hash);
    """)
