"""The database: one connection per thread, transactions, the meta table, migrations.

A path (or nothing) is a SQLite file, the zero-setup default; a `postgresql://` URL is a
PostgreSQL database shared by several processes or machines (`pg.py` adapts the SQL).
Each thread gets its own connection (Streamlit runs every browser session in a
thread); on SQLite, WAL mode lets those sessions read while one writes.
"""
from __future__ import annotations

import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

from .migrator import migrate

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location: object) -> bool:
    """Whether a store location names a PostgreSQL server rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


class Database:
    def __init__(self, location: Path | str):
        self._local = threading.local()
        self._opened: weakref.WeakSet = weakref.WeakSet()  # so close() ends every thread's
        self._lock = threading.Lock()
        self.url = str(location) if is_url(location) else ""
        self._reached = False  # a PostgreSQL server that answered once: later failures are outages
        if self.url:
            from . import pg  # noqa: PLC0415  (slow: psycopg, only for PostgreSQL)

            pg.check_url(self.url)
            self._pg = pg
            self.dialect = "postgresql"
            self.path = pg.display_url(self.url)  # never the password
        else:
            self.dialect = "sqlite"
            self.path = Path(location)
            self.path.parent.mkdir(parents=True, exist_ok=True)
        migrate(self.conn)
        self._reached = True

    @property
    def conn(self) -> sqlite3.Connection:
        db = getattr(self._local, "conn", None)
        if db is None or getattr(db, "broken", False):  # a PostgreSQL server that went away
            db = self._pg.connect(self.url, self._reached) if self.url else self._sqlite()
            self._local.conn = db
            if self.url:
                with self._lock:
                    self._opened.add(db)
        return db

    def _sqlite(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=30, check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA busy_timeout=30000")
        return db

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: nothing half-written reaches the store. Writers take turns
        (BEGIN IMMEDIATE; on PostgreSQL an advisory lock), so a read-then-write holds."""
        db = self.conn
        if db.in_transaction:  # nested: join the outer transaction
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if not getattr(db, "broken", False):  # a lost server has rolled it back already
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (on PostgreSQL every thread's: a server counts
        connections, a file does not)."""
        db = getattr(self._local, "conn", None)
        if db is not None:
            db.close()
            self._local.conn = None
        with self._lock:
            opened = list(self._opened)
            self._opened.clear()
        for other in opened:
            other.close()

    # -- meta --------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) "
                          "DO UPDATE SET value=excluded.value", (key, value))
