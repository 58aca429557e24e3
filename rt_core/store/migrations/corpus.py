"""The corpus: papers, fields, researchers and authorship, their search indexes, and
the paper vectors a search by meaning reads."""
from __future__ import annotations

import json
import sqlite3

from . import migration


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
def m003_browse_index(db: sqlite3.Connection) -> None:
    """Browsing by field, newest first, without sorting the whole table."""
    db.executescript("CREATE INDEX papers_year_title ON papers(year DESC, title);")

@migration
def m004_one_title_rule(db: sqlite3.Connection) -> None:
    """Titles are matched by the one normalise_title (sources.ids), which keeps non-Latin
    letters; recompute the stored forms made by the older, ASCII-only rule."""
    from ...sources.ids import normalise_title  # noqa: PLC0415  (only for this migration)

    rows = db.execute("SELECT id, title FROM papers").fetchall()
    db.executemany("UPDATE papers SET norm_title=? WHERE id=?",
                   [(normalise_title(title), pid) for pid, title in rows])

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


@migration
def m021_records_added_by(db: sqlite3.Connection) -> None:
    """Who added a paper or researcher: '' for the shared corpus (bundled, imported on a
    personal server or by the operator), else the owner hash of the visitor's browser on a
    shared server. A visitor's records are theirs until the operator publishes them
    (rt_core.access.may_see_record); the partial indexes keep the operator's list of them
    and a visitor's own records cheap without touching the shared rows."""
    db.executescript("""
    ALTER TABLE papers ADD COLUMN added_by TEXT NOT NULL DEFAULT '';
    ALTER TABLE researchers ADD COLUMN added_by TEXT NOT NULL DEFAULT '';
    CREATE INDEX papers_added_by ON papers(added_by) WHERE added_by != '';
    CREATE INDEX researchers_added_by ON researchers(added_by) WHERE added_by != '';
    """)


@migration
def m023_paper_facets(db: sqlite3.Connection) -> None:
    """What each paper states (purpose, mechanism, evaluation, gap; run/facets/extract.py),
    kept per paper and per way of finding them (`version`), so a paper's facets are found
    once. The facets are a JSON document: the store keeps them, the run reads them. A
    paper deleted later leaves a row nobody asks for, which costs nothing."""
    db.executescript("""
    CREATE TABLE paper_facets (
        paper_id TEXT NOT NULL,
        version TEXT NOT NULL,
        facets_json TEXT NOT NULL,
        PRIMARY KEY (paper_id, version)
    );
    """)
