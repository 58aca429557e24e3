"""Migrations from m013 on, appended to `migrations.MIGRATIONS` after m001-m012 (that file
reached the 400-line limit). The rules of `migrations.py` hold: only ever append, SQLite's
spelling, branch on `db.dialect` only where the engines truly differ."""
from __future__ import annotations

import sqlite3

from .migrations import migration


@migration
def m013_paper_vectors(db: sqlite3.Connection) -> None:
    """One embedding per paper (paper_vectors.py), so a search by meaning is one
    matrix-vector product over precomputed vectors: float16 bytes, the embedder's name,
    and a hash of the text embedded (an edited abstract is embedded again)."""
    db.executescript("""
    CREATE TABLE paper_vectors (
        paper_id TEXT PRIMARY KEY REFERENCES papers(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX paper_vectors_model ON paper_vectors(model);
    """)
