"""The bank of ideas (rt_core/ideas): one row per idea a run wrote, beside the runs."""
from __future__ import annotations

import sqlite3

from . import migration


@migration
def m024_ideas(db: sqlite3.Connection) -> None:
    """Every proposal, candidate, revision round and steered version of every run as a row, so
    the ideas of all runs can be searched together without parsing each run's JSON. The rows
    are derived (store/ideas.py writes them whenever a run or a version is saved); a star and a
    note are the user's own and survive a rewrite, as do the vector and `seen_before` while
    the idea's text is unchanged. Runs made before this migration are read into the bank here,
    so the bank holds them from the first open. `seq` is the order ideas were first written
    in: runs made in the same second share a `created_at`, and which came first must not
    depend on their random ids (seen before asks it). Plain SQL both engines read."""
    db.executescript("""
    CREATE TABLE ideas (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        version TEXT NOT NULL,
        kind TEXT NOT NULL,
        parent TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        mode TEXT NOT NULL DEFAULT '',
        researcher_ids_json TEXT NOT NULL DEFAULT '[]',
        paper_ids_json TEXT NOT NULL DEFAULT '[]',
        fields_json TEXT NOT NULL DEFAULT '[]',
        answers_json TEXT NOT NULL,
        q1 TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL DEFAULT '',
        score REAL,
        closest_paper REAL,
        merged_into TEXT NOT NULL DEFAULT '',
        text_hash TEXT NOT NULL,
        vector BLOB,
        vector_model TEXT NOT NULL DEFAULT '',
        seen_before TEXT,
        seen_similarity REAL,
        group_id TEXT,
        starred INTEGER NOT NULL DEFAULT 0,
        note TEXT NOT NULL DEFAULT '',
        seq BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX ideas_run ON ideas(run_id);
    CREATE INDEX ideas_newest ON ideas(created_at DESC, id);
    CREATE INDEX ideas_vector_model ON ideas(vector_model);
    CREATE INDEX ideas_group ON ideas(group_id);
    CREATE INDEX ideas_model ON ideas(model);
    CREATE INDEX ideas_starred ON ideas(starred);
    CREATE INDEX ideas_seq ON ideas(seq);
    """)
    from ..ideas import backfill  # noqa: PLC0415  (the same writer a save uses)

    backfill(db)
