"""Migrations of what a browser keeps between its sessions."""
from __future__ import annotations

import sqlite3

from . import migration


@migration
def m019_kept_neighbourhoods(db: sqlite3.Connection) -> None:
    """The neighbourhood each browser was building, by its owner hash (the owner cookie's
    token, hashed as runs keep it), so a reload brings it back. The ids are a JSON list
    each; a paper or researcher deleted since is dropped when the list is read."""
    db.executescript("""
    CREATE TABLE kept_neighbourhoods (
        owner_hash TEXT PRIMARY KEY,
        researcher_ids TEXT NOT NULL DEFAULT '[]',
        paper_ids TEXT NOT NULL DEFAULT '[]',
        updated_at REAL NOT NULL
    );
    """)


@migration
def m020_demo_spending(db: sqlite3.Connection) -> None:
    """What the shared demo's visitors spent of the operator's key, per UTC day: one row per
    visitor (their owner hash) and one for the whole deployment ('*'), added to in place as
    calls are made, so every app server sharing the store sees the same counts."""
    db.executescript("""
    CREATE TABLE demo_spending (
        day TEXT NOT NULL,
        who TEXT NOT NULL,
        tokens BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (day, who)
    );
    """)


@migration
def m022_operator_sessions(db: sqlite3.Connection) -> None:
    """The operator's signed-in browsers (rt_core.operator_session): one row per session, by
    the SHA-256 of its random id (the cookie's secret part never reaches the store). A row
    that is missing or revoked ends the session on every app server that shares the store."""
    db.executescript("""
    CREATE TABLE operator_sessions (
        id_hash TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        revoked_at REAL
    );
    """)
