"""Schema changes as numbered functions. Only ever append; never edit one that shipped.

`migrator.migrate(conn)` applies, in order, every migration the database has not seen,
recording each in `_migrations`, each in its own transaction. The same migrations run on
SQLite and PostgreSQL: write the SQL in SQLite's spelling through `db.executescript`
(column types `BLOB`, `REAL` and `INTEGER PRIMARY KEY AUTOINCREMENT` are translated for
PostgreSQL, see `pg.py`), and branch on `db.dialect` ("sqlite" or "postgresql") only where
the engines truly differ (full-text indexes). A new migration is one more function below;
the store tests run it on both engines. Full at 400 lines: m013 on are in migrations_later.py.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []


def migration(fn: Callable[[sqlite3.Connection], None]):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_corpus(db: sqlite3.Connection) -> None:
    db.executescript("""
    CREATE TABLE fields (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, domain TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE papers (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        abstract TEXT NOT NULL DEFAULT '',
        abstract_source TEXT NOT NULL DEFAULT '',
        authors_json TEXT NOT NULL DEFAULT '[]',
        year INTEGER,
        venue TEXT NOT NULL DEFAULT '',
        arxiv_id TEXT NOT NULL DEFAULT '',
        doi TEXT NOT NULL DEFAULT '',
        s2_id TEXT NOT NULL DEFAULT '',
        openalex_id TEXT NOT NULL DEFAULT '',
        url TEXT NOT NULL DEFAULT '',
        norm_title TEXT NOT NULL DEFAULT '',
        origin TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE INDEX papers_arxiv ON papers(arxiv_id) WHERE arxiv_id != '';
    CREATE INDEX papers_doi ON papers(doi) WHERE doi != '';
    CREATE INDEX papers_norm_title ON papers(norm_title);
    CREATE INDEX papers_year ON papers(year);
    CREATE TABLE paper_fields (
        paper_id TEXT NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
        field_id TEXT NOT NULL,
        PRIMARY KEY (paper_id, field_id)
    );
    CREATE INDEX paper_fields_field ON paper_fields(field_id);
    CREATE TABLE citations (
        citing_id TEXT NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
        cited_id TEXT NOT NULL,
        PRIMARY KEY (citing_id, cited_id)
    );
    CREATE TABLE researchers (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        affiliation TEXT NOT NULL DEFAULT '',
        s2_id TEXT NOT NULL DEFAULT '',
        openalex_id TEXT NOT NULL DEFAULT '',
        origin TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE TABLE researcher_fields (
        researcher_id TEXT NOT NULL REFERENCES researchers(id) ON DELETE CASCADE,
        field_id TEXT NOT NULL,
        PRIMARY KEY (researcher_id, field_id)
    );
    CREATE INDEX researcher_fields_field ON researcher_fields(field_id);
    CREATE TABLE authorship (
        researcher_id TEXT NOT NULL REFERENCES researchers(id) ON DELETE CASCADE,
        paper_id TEXT NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
        PRIMARY KEY (researcher_id, paper_id)
    );
    CREATE INDEX authorship_paper ON authorship(paper_id);
    """)
    if db.dialect == "sqlite":
        db.executescript("""
        -- Full-text indexes keyed by the rowid of papers / researchers.
        CREATE VIRTUAL TABLE papers_fts USING fts5(
            title, abstract, authors, tokenize='unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE researchers_fts USING fts5(
            name, affiliation, tokenize='unicode61 remove_diacritics 2'
        );
        """)
    else:
        # PostgreSQL has no rowid: an identity column plays its part (newest-first windows
        # in search.py), and the text index is a generated tsvector column with a GIN index.
        db.executescript("""
        ALTER TABLE papers ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE;
        ALTER TABLE papers ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('simple',
            title || ' ' || abstract || ' ' || authors_json)) STORED;
        CREATE INDEX papers_fts ON papers USING GIN (fts);
        ALTER TABLE researchers ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE;
        ALTER TABLE researchers ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('simple',
            name || ' ' || affiliation)) STORED;
        CREATE INDEX researchers_fts ON researchers USING GIN (fts);
        """)


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
def m003_browse_index(db: sqlite3.Connection) -> None:
    """Browsing by field, newest first, without sorting the whole table."""
    db.executescript("CREATE INDEX papers_year_title ON papers(year DESC, title);")


@migration
def m004_one_title_rule(db: sqlite3.Connection) -> None:
    """Titles are matched by the one normalise_title (sources.ids), which keeps non-Latin
    letters; recompute the stored forms made by the older, ASCII-only rule."""
    from ..sources.ids import normalise_title  # noqa: PLC0415  (only for this migration)

    rows = db.execute("SELECT id, title FROM papers").fetchall()
    db.executemany("UPDATE papers SET norm_title=? WHERE id=?",
                   [(normalise_title(title), pid) for pid, title in rows])


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
def m007_studies(db: sqlite3.Connection) -> None:
    """Human-evaluation studies. Supersede the unused `ratings` table (dropped by m008).

    Uniqueness is the store's job, so concurrent raters cannot double or misattribute an
    answer: one assignment per (rater, position), one submission per assignment, one answer
    per (submission, criterion); foreign keys tie every answer to its rater's assignment.
    """
    db.executescript("""
    CREATE TABLE studies (
        id TEXT PRIMARY KEY,
        code TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('absolute', 'pairwise')),
        settings_json TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
        created_at TEXT NOT NULL,
        closed_at TEXT
    );
    CREATE TABLE study_items (
        study_id TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        arm TEXT NOT NULL,
        target TEXT NOT NULL,
        source TEXT NOT NULL,
        run_id TEXT NOT NULL DEFAULT '',
        answers_json TEXT NOT NULL,
        styled_json TEXT,
        PRIMARY KEY (study_id, item_id)
    );
    CREATE TABLE study_units (
        study_id TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        unit_id TEXT NOT NULL,
        item_a TEXT NOT NULL,
        item_b TEXT,
        gold_item TEXT,
        PRIMARY KEY (study_id, unit_id)
    );
    CREATE TABLE study_raters (
        study_id TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        rater_id TEXT NOT NULL,
        joined_at TEXT NOT NULL,
        PRIMARY KEY (study_id, rater_id)
    );
    CREATE TABLE study_assignments (
        study_id TEXT NOT NULL,
        rater_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        unit_id TEXT NOT NULL,
        shown_left TEXT NOT NULL,
        shown_right TEXT,
        repeat INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (study_id, rater_id, position),
        UNIQUE (study_id, rater_id, unit_id, repeat),
        FOREIGN KEY (study_id, rater_id) REFERENCES study_raters(study_id, rater_id) ON DELETE CASCADE,
        FOREIGN KEY (study_id, unit_id) REFERENCES study_units(study_id, unit_id) ON DELETE CASCADE
    );
    CREATE INDEX study_assignments_unit ON study_assignments(study_id, unit_id);
    CREATE TABLE study_submissions (
        study_id TEXT NOT NULL,
        rater_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        rationale TEXT NOT NULL DEFAULT '',
        confidence INTEGER,
        minutes REAL,
        shown_at TEXT,
        submitted_at TEXT NOT NULL,
        PRIMARY KEY (study_id, rater_id, position),
        FOREIGN KEY (study_id, rater_id, position)
            REFERENCES study_assignments(study_id, rater_id, position) ON DELETE CASCADE
    );
    CREATE TABLE study_answers (
        study_id TEXT NOT NULL,
        rater_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        criterion TEXT NOT NULL,
        score INTEGER CHECK (score IS NULL OR score BETWEEN 1 AND 10),
        choice TEXT CHECK (choice IS NULL OR choice IN ('left', 'right', 'tie')),
        PRIMARY KEY (study_id, rater_id, position, criterion),
        FOREIGN KEY (study_id, rater_id, position)
            REFERENCES study_submissions(study_id, rater_id, position) ON DELETE CASCADE
    );
    CREATE TABLE study_judge (
        study_id TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        unit_id TEXT NOT NULL,
        shown_left TEXT NOT NULL,
        shown_right TEXT NOT NULL DEFAULT '',
        criterion TEXT NOT NULL,
        score INTEGER,
        choice TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (study_id, model, unit_id, shown_left, shown_right, criterion)
    );
    """)


@migration
def m008_drop_ratings(db: sqlite3.Connection) -> None:
    """Drop the `ratings` table: nothing wrote to it since studies (m007) replaced it.
    Plain SQL that every supported database understands."""
    db.executescript("""
    DROP INDEX IF EXISTS ratings_run;
    DROP TABLE IF EXISTS ratings;
    """)


@migration
def m009_study_room(db: sqlite3.Connection) -> None:
    """Studies for a live room: the hash of the organiser's token (results, exports and closing
    need it; studies made before have none and stay locked), and when each assigned item was
    first put on the rater's screen (time per item runs from there to its submission)."""
    db.executescript("""
    ALTER TABLE studies ADD COLUMN organiser_hash TEXT;
    CREATE UNIQUE INDEX studies_organiser_hash ON studies(organiser_hash);
    ALTER TABLE study_assignments ADD COLUMN shown_at TEXT;
    """)


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
def m011_bench_tasks(db: sqlite3.Connection) -> None:
    """Benchmark tasks shared by workers on several machines (tasks.py): one row per task
    of a named bench, who holds it and until when, and its result once finished."""
    db.executescript("""
    CREATE TABLE bench_tasks (
        bench TEXT NOT NULL,
        task_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        task_json TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'running', 'done', 'failed')),
        worker TEXT NOT NULL DEFAULT '',
        lease_until REAL,
        attempts INTEGER NOT NULL DEFAULT 0,
        result_json TEXT,
        finished_at TEXT,
        PRIMARY KEY (bench, task_id)
    );
    CREATE INDEX bench_tasks_claim ON bench_tasks(bench, status, position);
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
