"""Migrations from m013 on, appended to `migrations.MIGRATIONS` after m001-m012 (that file
reached the 400-line limit). The rules of `migrations.py` hold: only ever append, SQLite's
spelling, branch on `db.dialect` only where the engines truly differ."""
from __future__ import annotations

import json
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


@migration
def m014_paper_fields_json(db: sqlite3.Connection) -> None:
    """Each paper's field ids also as a JSON list on its own row (paper_fields stays the
    record; search.py keeps the copy in step). PostgreSQL indexes it with GIN, so a field
    filter on a word search intersects two indexes instead of walking the newest papers
    one by one (104.8 ms p95 at 100k before). SQLite gets the column for one schema and
    keeps its EXISTS filter, which its planner already handles well."""
    db.executescript("ALTER TABLE papers ADD COLUMN fields_json TEXT NOT NULL DEFAULT '[]';")
    by_paper: dict[str, list[str]] = {}
    for paper_id, field_id in db.execute(
            "SELECT paper_id, field_id FROM paper_fields ORDER BY paper_id, field_id"):
        by_paper.setdefault(paper_id, []).append(field_id)
    db.executemany("UPDATE papers SET fields_json=? WHERE id=?",
                   [(json.dumps(ids), pid) for pid, ids in by_paper.items()])
    if db.dialect == "postgresql":
        db.executescript("CREATE INDEX papers_fields ON papers USING GIN ((fields_json::jsonb));")


@migration
def m015_paper_fields_rowid(db: sqlite3.Connection) -> None:
    """Each paper-field link also carries the paper's rowid, indexed per field newest
    first, so a word search filtered to one field can walk that field's newest papers and
    test the word on each (~4,000 rows for a common word at 1M papers) instead of walking
    all newest papers (~44,000). The column is derived (corpus.py writes it with the link;
    a store copy recomputes it, as rowids differ between stores)."""
    db.executescript("""
    ALTER TABLE paper_fields ADD COLUMN paper_rowid BIGINT;
    UPDATE paper_fields SET paper_rowid=(SELECT rowid FROM papers WHERE papers.id=paper_fields.paper_id);
    CREATE INDEX paper_fields_newest ON paper_fields(field_id, paper_rowid DESC);
    """)
