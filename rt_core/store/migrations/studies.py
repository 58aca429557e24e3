"""Rating studies: the studies, their items and raters, and the rating room."""
from __future__ import annotations

import sqlite3

from . import migration


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
