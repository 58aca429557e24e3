"""Full-text search over papers and researchers, on each engine's own index.

SQLite keeps FTS5 tables keyed by rowid (kept in step by `index_*`); PostgreSQL keeps a
generated `tsvector` column with a GIN index (nothing to keep in step). The contract is
the same on both: free text becomes words, all of which must match, the last one as a
prefix (the user may still be typing it); at most `FTS_WINDOW` of the most recently
added matches are ranked (ranking every match of a very common word in a large store
costs ~100 ms), best first; reviewer candidates match any word. A field filter keeps the
papers in any of the given fields; PostgreSQL reads it from `papers.fields_json` (a copy of
paper_fields kept in step by `sync_fields`) through a GIN index.
"""
from __future__ import annotations

import contextlib
import json
import re

FTS_WINDOW = 400
PAPER_COLUMNS = ("p.id, p.title, p.abstract, p.abstract_source, p.authors_json, p.year, p.venue, "
                 "p.arxiv_id, p.doi, p.s2_id, p.openalex_id, p.url, p.fields_json")
"""What a Paper is built from. Not `p.*`: on PostgreSQL that includes the generated
tsvector, a few kB a paper that every search would read, send and parse for nothing."""


def words(text: str, limit: int = 12) -> list[str]:
    return re.findall(r"\w+", text or "", flags=re.UNICODE)[:limit]


def marks(values: list) -> str:
    return ", ".join("?" * len(values))


def fields_json(fields) -> str:
    """The copy of a paper's fields on its row: sorted, each once."""
    return json.dumps(sorted(set(fields)))


def sync_fields(db, paper_id: str) -> None:
    """Bring `papers.fields_json` in step with paper_fields after fields were added to an
    existing paper (a new paper's row is written with its fields already). Rewrites the row
    only when the list changed: on PostgreSQL an update regenerates the tsvector."""
    ids = fields_json(r[0] for r in db.execute(
        "SELECT field_id FROM paper_fields WHERE paper_id=?", (paper_id,)))
    db.execute("UPDATE papers SET fields_json=? WHERE id=? AND fields_json<>?", (ids, paper_id, ids))


class SqliteSearch:
    @staticmethod
    def walks_field(db, q: str, fields: list[str]) -> bool:
        """SQLite keeps its EXISTS filter (the walk of one field is PostgreSQL's)."""
        return False

    @staticmethod
    def field_sql(fields: list[str]) -> str:
        """EXISTS lets SQLite walk papers in (year, title) or rowid order and stop early."""
        return (" AND EXISTS (SELECT 1 FROM paper_fields pf WHERE pf.paper_id=p.id AND "
                f"pf.field_id IN ({marks(fields)}))") if fields else ""

    @staticmethod
    def query(text: str) -> str:
        ws = words(text)
        return " ".join(f'"{w}"' + ("*" if i == len(ws) - 1 else "") for i, w in enumerate(ws))

    @staticmethod
    def any_query(terms: list[str]) -> str:
        return " OR ".join(f'"{w}"' for w in terms)

    @staticmethod
    def any_prefix_query(terms: list[str]) -> str:
        return " OR ".join(f'"{w}"*' for t in terms for w in words(t))

    @staticmethod
    def index_paper(db, paper_id: str, title: str, abstract: str, authors: list[str]) -> None:
        rowid = db.execute("SELECT rowid FROM papers WHERE id=?", (paper_id,)).fetchone()[0]
        db.execute("DELETE FROM papers_fts WHERE rowid=?", (rowid,))
        db.execute("INSERT INTO papers_fts(rowid, title, abstract, authors) VALUES (?, ?, ?, ?)",
                   (rowid, title, abstract or "", "; ".join(authors)))

    @staticmethod
    def index_researcher(db, researcher_id: str) -> None:
        rowid = db.execute("SELECT rowid FROM researchers WHERE id=?", (researcher_id,)).fetchone()[0]
        db.execute("DELETE FROM researchers_fts WHERE rowid=?", (rowid,))
        db.execute("INSERT INTO researchers_fts(rowid, name, affiliation) SELECT rowid, name, "
                   "affiliation FROM researchers WHERE rowid=?", (rowid,))

    # Each *_sql returns SQL whose first placeholder is the query, as `query()` makes it.
    @staticmethod
    def papers_sql(field_sql: str, columns: str = PAPER_COLUMNS) -> str:
        return ("WITH hits AS (SELECT f.rowid AS rid, f.rank AS rank FROM papers_fts f "
                f"JOIN papers p ON p.rowid=f.rowid WHERE papers_fts MATCH ?{field_sql} "
                "ORDER BY f.rowid DESC LIMIT ?) "
                f"SELECT {columns} FROM hits JOIN papers p ON p.rowid=hits.rid "
                "ORDER BY hits.rank LIMIT ? OFFSET ?")

    @staticmethod
    def researchers_sql(field_sql: str) -> str:
        return ("SELECT r.* FROM researchers_fts f JOIN researchers r ON r.rowid=f.rowid "
                f"WHERE researchers_fts MATCH ?{field_sql} ORDER BY f.rank LIMIT ?")

    @staticmethod
    def hits_sql() -> str:
        """(rid, rank) of the best `?` papers matching the query; lower rank is better."""
        return "SELECT rowid AS rid, rank FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rank LIMIT ?"


class PostgresSearch:
    # ts_rank is higher for better matches; its negation orders like FTS5's rank. `rowid DESC
    # NULLS FIRST` (rowid is never NULL) is the order of its unique index read backwards, so a
    # very common word walks the newest papers and stops after the window, as on SQLite.
    @staticmethod
    def field_sql(fields: list[str]) -> str:
        """Containment on the row's own field list: with the GIN index on it, PostgreSQL
        can intersect the word's and the field's index entries (a BitmapAnd) rather than
        test the newest papers one by one, which read ~60,000 rows for a mid-frequency
        word at 100k papers. One `@>` per field, OR-ed (`?|` would clash with placeholders)."""
        return (" AND (" + " OR ".join(["(p.fields_json::jsonb) @> jsonb_build_array(?::text)"]
                                       * len(fields)) + ")") if fields else ""

    @staticmethod
    def query(text: str) -> str:
        ws = words(text)
        return " & ".join(f"'{w}'" + (":*" if i == len(ws) - 1 else "") for i, w in enumerate(ws))

    @staticmethod
    def any_query(terms: list[str]) -> str:
        return " | ".join(f"'{w}'" for w in terms)

    @staticmethod
    def any_prefix_query(terms: list[str]) -> str:
        return " | ".join(f"'{w}':*" for t in terms for w in words(t))

    @staticmethod
    def index_paper(db, paper_id: str, title: str, abstract: str, authors: list[str]) -> None:
        """Nothing to do: the tsvector column is generated from the row."""

    @staticmethod
    def index_researcher(db, researcher_id: str) -> None:
        """Nothing to do: the tsvector column is generated from the row."""

    @staticmethod
    def papers_sql(field_sql: str, columns: str = PAPER_COLUMNS) -> str:
        return ("WITH hits AS (SELECT p.rowid AS rid, -ts_rank(p.fts, q, 1) AS rank FROM papers p, "
                f"to_tsquery('simple', ?) q WHERE p.fts @@ q{field_sql} ORDER BY p.rowid DESC NULLS FIRST "
                "LIMIT ?) "
                f"SELECT {columns} FROM hits JOIN papers p ON p.rowid=hits.rid "
                "ORDER BY hits.rank, hits.rid LIMIT ? OFFSET ?")

    # A word with one field: which plan wins depends on how many papers have the word
    # (measured at 1M papers, docs/PERFORMANCE.md). In at least WALK_FROM of them, walking
    # the field's newest papers (paper_fields_newest, m015) finds the window after a few
    # thousand rows; in fewer than WALK_BELOW, the planner reads the word's few papers and
    # probes their fields. In between, the walk would cover much of the field, and the
    # BitmapAnd of `field_sql` wins; the planner cannot tell these apart for the walk's
    # SQL (it picks a hash join over the whole field), so the choice is made here, on its
    # own row estimate for the word.
    WALK_FROM = 0.03
    WALK_BELOW = 0.001

    @staticmethod
    def walks_field(db, q: str, fields: list[str]) -> bool:
        """Whether `field_walk_sql` should answer this word + field search (see above)."""
        if len(fields) != 1:
            return False
        plan = db.execute("EXPLAIN (FORMAT JSON) SELECT 1 FROM papers WHERE fts @@ "
                          "to_tsquery('simple', ?) UNION ALL SELECT 1 FROM papers", (q,)).fetchone()[0]
        word, everything = (sub["Plan Rows"] for sub in plan[0]["Plan"]["Plans"])
        share = word / max(everything, 1)
        return share >= PostgresSearch.WALK_FROM or share < PostgresSearch.WALK_BELOW

    @staticmethod
    def field_walk_sql(columns: str = PAPER_COLUMNS, seen: str = "") -> str:
        """`papers_sql` for one field, the window taken from the field's newest papers.
        Placeholders: query, field, window, query, limit, offset. The papers are joined by
        id, not rowid: on rowid the planner merge-joins with a backward walk of all papers,
        the slow plan this replaces. Run with parallel workers off (`field_walk`). `seen`:
        the corpus's scope as SQL on `p` (corpus.py `_see`)."""
        return ("WITH w AS (SELECT pf.paper_rowid AS rid FROM paper_fields pf JOIN papers p ON "
                "p.id=pf.paper_id, to_tsquery('simple', ?) q WHERE pf.field_id=? AND p.fts @@ q"
                f"{seen} ORDER BY pf.paper_rowid DESC LIMIT ?) "
                f"SELECT {columns} FROM w JOIN papers p ON p.rowid=w.rid, to_tsquery('simple', ?) q "
                "ORDER BY -ts_rank(p.fts, q, 1), p.rowid LIMIT ? OFFSET ?")

    @staticmethod
    def field_walk(db, sql: str, params: list) -> list:
        """Rows of `field_walk_sql`. Parallel workers off for it: a Gather Merge over the
        walk took 40-55 ms to start its workers on a 2-core machine, more than the walk."""
        db.execute("SET max_parallel_workers_per_gather = 0")
        try:
            rows = db.execute(sql, params).fetchall()
        except BaseException:
            # the query's own error is the one to report: a RESET on a connection it left
            # in a failed transaction (or lost) would raise a second, misleading one
            with contextlib.suppress(Exception):
                db.execute("RESET max_parallel_workers_per_gather")
            raise
        db.execute("RESET max_parallel_workers_per_gather")
        return rows

    @staticmethod
    def researchers_sql(field_sql: str) -> str:
        return ("SELECT r.* FROM researchers r, to_tsquery('simple', ?) q WHERE r.fts @@ q"
                f"{field_sql} ORDER BY -ts_rank(r.fts, q, 1), r.rowid LIMIT ?")

    @staticmethod
    def hits_sql() -> str:
        return ("SELECT rowid AS rid, -ts_rank(fts, q, 1) AS rank FROM papers, "
                "to_tsquery('simple', ?) q WHERE fts @@ q ORDER BY rank, rowid LIMIT ?")


def for_dialect(dialect: str):
    return PostgresSearch if dialect == "postgresql" else SqliteSearch
