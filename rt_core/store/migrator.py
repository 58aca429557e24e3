"""Applying the numbered migrations of the `migrations` package to a SQLite or PostgreSQL
database."""
from __future__ import annotations

import sqlite3

from . import migrations


def migrate(db) -> list[str]:
    """Apply pending migrations; return the names applied. `db` is a sqlite3 connection
    or a `pg.PgConnection`; BEGIN IMMEDIATE serialises concurrent migrators on both."""
    dialect = getattr(db, "dialect", "sqlite")
    db.execute("BEGIN IMMEDIATE")
    try:
        if dialect == "postgresql":
            from .pg import install_compat  # noqa: PLC0415  (psycopg: only for PostgreSQL)

            install_compat(db)
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
                   "applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
        done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    applied = []
    for fn in migrations.ordered():  # read at call time: tests add a broken one
        if fn.__name__ in done:
            continue
        # executescript commits implicitly, so every statement goes through _TxProxy
        # inside one explicit transaction.
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM _migrations WHERE name=?", (fn.__name__,)).fetchone():
                db.execute("ROLLBACK")
                continue
            fn(_TxProxy(db, dialect))
            db.execute("INSERT INTO _migrations(name) VALUES (?)", (fn.__name__,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(fn.__name__)
    return applied


class _TxProxy:
    """What a migration holds: the connection, its `dialect`, and an executescript that
    runs statement by statement inside the migration's transaction."""

    def __init__(self, db, dialect: str):
        self._db = db
        self.dialect = dialect

    def executescript(self, script: str) -> None:
        for stmt in _split_sql(script):
            if self.dialect == "postgresql":
                self._db.executescript_ddl(stmt)
            else:
                self._db.execute(stmt)

    def __getattr__(self, name):
        return getattr(self._db, name)


def _split_sql(script: str) -> list[str]:
    """Split a script into complete statements (a ';' inside a string or trigger stays)."""
    stmts, buf = [], ""
    for ch in script:
        buf += ch
        if ch == ";" and sqlite3.complete_statement(buf):
            if _sql_body(buf):
                stmts.append(buf.strip())
            buf = ""
    if _sql_body(buf):
        stmts.append(buf.strip())
    return stmts


def _sql_body(text: str) -> str:
    lines = [line for line in text.splitlines() if not line.strip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";").strip()
