"""Copy a whole store to another one (`python -m rt_core migrate-store --from A --to B`).

Typically a laptop's SQLite file into a lab's PostgreSQL, but any direction works: both
ends are migrated to the same schema first, every table is copied in one transaction on
the target (parents before children, so foreign keys hold), the full-text index is
rebuilt where the engine needs it, and then every table is compared row for row. The
target must be empty: a copy never merges into a store that already holds data.
"""
from __future__ import annotations

import hashlib
import json
from graphlib import TopologicalSorter
from pathlib import Path

from ..errors import InputError, RTError
from . import Store
from .search import for_dialect

BATCH = 1000
DERIVED = {"paper_fields": {"paper_rowid"}}
"""Columns not copied but recomputed on the target (`_after_copy`): a paper's rowid there
differs from the source's."""


class CopyMismatch(RTError):
    hint = "The target was left as copied; drop it and run migrate-store again."


def tables(store: Store) -> list[str]:
    """The store's own tables, each after the tables it references."""
    db = store.db.conn
    if store.dialect == "sqlite":
        names = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%_fts%' AND name != '_migrations'")]
        deps = {t: {r[2] for r in db.execute(f"PRAGMA foreign_key_list({t})")} for t in names}
    else:
        names = [r[0] for r in db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema=current_schema() "
            "AND table_type='BASE TABLE' AND table_name != '_migrations'")]
        deps = {t: set() for t in names}
        for child, parent in db.execute(
                "SELECT tc.table_name, ccu.table_name FROM information_schema.table_constraints tc "
                "JOIN information_schema.constraint_column_usage ccu USING (constraint_name, "
                "constraint_schema) WHERE tc.constraint_type='FOREIGN KEY' "
                "AND tc.table_schema=current_schema()"):
            deps[child].add(parent)
    order = TopologicalSorter({t: deps[t] - {t} for t in sorted(names)}).static_order()
    return [t for t in order if t in deps]


def columns(store: Store, table: str) -> list[str]:
    """Columns a row is made of (PostgreSQL's generated rowid and text index are not)."""
    db = store.db.conn
    if store.dialect == "sqlite":
        return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    return [r[0] for r in db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema=current_schema() "
        "AND table_name=? AND is_generated='NEVER' AND (is_identity='NO' OR "
        "identity_generation='BY DEFAULT') ORDER BY ordinal_position", (table,))]


def copy_store(source: Path | str, target: Path | str) -> dict[str, int]:
    """Copy every row from `source` into the empty store `target`; returns rows per table."""
    src, dst = Store(source), Store(target)
    try:
        names = tables(src)
        missing = [t for t in names if t not in set(tables(dst))]
        if missing:
            raise InputError(f"the target store has no table {', '.join(missing)}",
                             "Both stores must run the same version of the app.")
        held = {t: n for t in names if (n := _count(dst, t))}
        if held:
            raise InputError(f"the target store already holds data ({_describe(held)})",
                             "Copy into an empty database; a copy never merges.")
        cols = {t: [c for c in columns(src, t) if c in set(columns(dst, t))
                    and c not in DERIVED.get(t, ())] for t in names}
        with dst.transaction() as db:
            for t in names:
                _copy_table(src, db, t, cols[t])
            _after_copy(dst, db, cols)
        _check(src, dst, cols)
        return {t: _count(dst, t) for t in names}
    finally:
        src.close()
        dst.close()


def _copy_table(src: Store, db, table: str, cols: list[str]) -> None:
    listed = ", ".join(cols)
    insert = f"INSERT INTO {table}({listed}) VALUES ({', '.join('?' * len(cols))})"
    cur = src.db.conn.execute(f"SELECT {listed} FROM {table}")
    while batch := cur.fetchmany(BATCH):
        db.executemany(insert, [tuple(r) for r in batch])


def _after_copy(dst: Store, db, cols: dict[str, list[str]]) -> None:
    """What each engine keeps beside the rows: SQLite's FTS5 tables, PostgreSQL's
    identity counters (ids were copied explicitly, so the counters must catch up); on
    both, the links' copy of each paper's rowid."""
    db.execute("UPDATE paper_fields SET paper_rowid=(SELECT rowid FROM papers "
               "WHERE papers.id=paper_fields.paper_id)")
    if dst.dialect == "sqlite":
        fts = for_dialect("sqlite")
        for pid, title, abstract, authors in db.execute(
                "SELECT id, title, abstract, authors_json FROM papers").fetchall():
            fts.index_paper(db, pid, title, abstract, json.loads(authors))
        for (rid,) in db.execute("SELECT id FROM researchers").fetchall():
            fts.index_researcher(db, rid)
        return
    for table, column in db.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE "
            "table_schema=current_schema() AND identity_generation='BY DEFAULT'").fetchall():
        if table in cols:
            db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                       f"max({column})) FROM {table} HAVING count(*) > 0")


def _check(src: Store, dst: Store, cols: dict[str, list[str]]) -> None:
    for table, names in cols.items():
        a, b = _digest(src, table, names), _digest(dst, table, names)
        if a != b:
            raise CopyMismatch(f"table {table}: the copy differs from the source "
                               f"({a[0]} rows there, {b[0]} here)")


def _digest(store: Store, table: str, cols: list[str]) -> tuple[int, str]:
    """Rows and an order-free fingerprint of their values."""
    hashes = sorted(hashlib.sha256(repr(tuple(_plain(v) for v in row)).encode()).digest()
                    for row in store.db.conn.execute(f"SELECT {', '.join(cols)} FROM {table}"))
    return len(hashes), hashlib.sha256(b"".join(hashes)).hexdigest()


def _plain(value):
    return bytes(value) if isinstance(value, memoryview | bytearray) else value


def _count(store: Store, table: str) -> int:
    return store.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _describe(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {t}" for t, n in list(counts.items())[:4])
