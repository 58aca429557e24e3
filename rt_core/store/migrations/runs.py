"""Runs and what they rest on: the run records and their owners, the model-call cache
and the claims that share a call between processes, reference answers and the
comparisons made after a run."""
from __future__ import annotations

import sqlite3

from . import migration


@migration
def m002_simulation(db: sqlite3.Connection) -> None:
    db.executescript("""
    CREATE TABLE profiles (
        researcher_id TEXT NOT NULL,
        model TEXT NOT NULL,
        papers_key TEXT NOT NULL,
        text TEXT NOT NULL,
        paper_ids_json TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (researcher_id, model, papers_key)
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        mode TEXT NOT NULL DEFAULT '',
        mean_score REAL,
        similarity REAL,
        config_json TEXT NOT NULL,
        result_json TEXT NOT NULL
    );
    CREATE INDEX runs_created ON runs(created_at);
    CREATE TABLE ratings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rater TEXT NOT NULL,
        kind TEXT NOT NULL,
        value REAL,
        other_run_id TEXT,
        comment TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE INDEX ratings_run ON ratings(run_id);
    CREATE TABLE llm_cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE TABLE embedding_cache (
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, text_hash)
    );
    CREATE TABLE http_cache (
        key TEXT PRIMARY KEY,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """)

@migration
def m005_run_ownership(db: sqlite3.Connection) -> None:
    """Runs know who runs them (process id, host, a lease per simulation) and when that
    owner last showed signs of life, so a run whose process died can be told from a live
    one in another process; `version` makes every write to a run conditional on what the
    writer last read (optimistic locking)."""
    db.executescript("""
    ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
    ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
    ALTER TABLE runs ADD COLUMN owner_lease TEXT NOT NULL DEFAULT '';
    ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
    ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX runs_status ON runs(status);
    """)

@migration
def m006_reference_answers(db: sqlite3.Connection) -> None:
    """A reference paper's own five answers, kept so every evaluation of that paper uses the
    same ones: a summary shipped with the starter community, or a restatement written once
    by a capable model (keyed by the paper text it read, so an edited abstract is redone)."""
    db.executescript("""
    CREATE TABLE reference_answers (
        paper_id TEXT NOT NULL,
        source TEXT NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        text_hash TEXT NOT NULL DEFAULT '',
        answers_json TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (paper_id, source, model, text_hash)
    );
    """)
    if db.dialect == "postgresql":  # newest-first ties are broken by insertion order
        db.executescript("ALTER TABLE reference_answers ADD COLUMN rowid BIGINT "
                         "GENERATED ALWAYS AS IDENTITY UNIQUE;")

@migration
def m010_call_claims(db: sqlite3.Connection) -> None:
    """Who is making a model call right now, so an identical call from another process
    waits for its answer instead of being made twice (claims.py). Numbered 010: 008 and
    009 are taken by changes made alongside."""
    db.executescript("""
    CREATE TABLE llm_claims (
        key TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        expires_at REAL NOT NULL,
        waiters INTEGER NOT NULL DEFAULT 0
    );
    """)

@migration
def m012_comparisons(db: sqlite3.Connection) -> None:
    """A run compared afterwards with a paper: one row per comparison, beside the run and
    never in it (the run's own reference is fixed at start). The similarity record holds the
    reference's five answers, so answers pasted for a paper stay with that paper. Numbered
    012: 009 to 011 are taken by changes made alongside. Plain SQL both engines read."""
    db.executescript("""
    CREATE TABLE comparisons (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        paper_id TEXT NOT NULL,
        source TEXT NOT NULL,
        evaluator TEXT NOT NULL,
        mean REAL NOT NULL,
        similarity_json TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX comparisons_run ON comparisons(run_id, created_at);
    """)


@migration
def m016_run_owner_hash(db: sqlite3.Connection) -> None:
    """Which browser started a run: the SHA-256 of the owner token that browser keeps in a cookie
    (rt_core.access). Only the hash is stored and it is never put in a run's JSON, so no export
    carries it. Runs made before, and runs started from the command line, have none: on a shared
    server only the operator controls them."""
    db.executescript("""
    ALTER TABLE runs ADD COLUMN owner_hash TEXT;
    CREATE INDEX runs_owner_hash ON runs(owner_hash);
    """)


@migration
def m017_wall_time(db: sqlite3.Connection) -> None:
    """How long runs take, measured on this machine. `call_speeds` keeps one row per model call
    that reached a model (its tokens and wall seconds), so the time a run will take is
    estimated from this machine's speeds (rt_core/models/speeds.py). Each run keeps the wall time it was
    expected to take beside the time it took, so the two can be compared in History."""
    db.executescript("""
    CREATE TABLE call_speeds (
        model TEXT NOT NULL,
        at REAL NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        seconds REAL NOT NULL,
        calibration INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX call_speeds_model ON call_speeds(model, at);
    ALTER TABLE runs ADD COLUMN estimate_seconds REAL;
    ALTER TABLE runs ADD COLUMN wall_seconds REAL;
    """)


@migration
def m018_run_versions(db: sqlite3.Connection) -> None:
    """Versions of a run's idea that a user steered (rt_core/run/steer): one row per node of
    the run's version tree, beside the run and never in its record, so a steer changes
    nothing the run already shows. The node's proposal, reviews and meta-review are in
    `version_json`; the columns are what a tree or a listing reads without parsing it.
    Plain SQL both engines read."""
    db.executescript("""
    CREATE TABLE run_versions (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        parent_id TEXT NOT NULL DEFAULT '',
        author TEXT NOT NULL,
        kind TEXT NOT NULL,
        mean_score REAL,
        version_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (run_id, id)
    );
    CREATE INDEX run_versions_parent ON run_versions(run_id, parent_id);
    """)
