"""Schema changes as numbered functions. Only ever append; never edit one that shipped.

`migrator.migrate(conn)` applies, in the order of their numbers, every migration the
database has not seen, recording each in `_migrations`, each in its own transaction. The
same migrations run on SQLite and PostgreSQL: write the SQL in SQLite's spelling through
`db.executescript` (column types `BLOB`, `REAL` and `INTEGER PRIMARY KEY AUTOINCREMENT`
are translated for PostgreSQL, see `pg.py`), and branch on `db.dialect` ("sqlite" or
"postgresql") only where the engines truly differ (full-text indexes). They are grouped
by what they change: `corpus` (papers, fields, researchers), `runs` (runs, the call
cache, reference answers, comparisons), `studies` (rating studies), `tasks` (the batch
replay's queue), `browsers` (what a browser keeps between its sessions), `ideas` (the bank of ideas). A new migration
is one more function, numbered after the last of all groups, in the module of what it
changes; the store tests run it on both engines.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []


def migration(fn: Callable[[sqlite3.Connection], None]):
    """Register a migration; the list stays in the order of the numbers (mNNN_...), which is
    the order they apply in, whichever group's module registered them first."""
    MIGRATIONS.append(fn)
    MIGRATIONS.sort(key=lambda f: f.__name__)
    return fn


def ordered() -> list[Callable[[sqlite3.Connection], None]]:
    """Every registered migration by its number (read at call time: tests add a broken one)."""
    return sorted(MIGRATIONS, key=lambda fn: fn.__name__)


from . import browsers, corpus, ideas, runs, studies, tasks  # noqa: E402, F401  (each registers its own)
