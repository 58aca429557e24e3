"""Searching the corpus: papers and researchers by words and fields, and the researchers
whose papers match a proposal (reviewer candidates). The SQL of each engine's full-text
index is in search.py; this is what the corpus asks of it. `Corpus` (corpus.py) reads and
writes the records; it inherits these searches, which read through its rows and see only
what its scope may see (`_see`: the SQL of access.may_see_record, appended to each WHERE)."""
from __future__ import annotations

import re
from collections.abc import Iterable

from ..types import Paper, Researcher
from .search import FTS_WINDOW, PAPER_COLUMNS, marks


class CorpusSearch:
    """The corpus's searches. The concrete `Corpus` provides `db`, `fts` (search.py, for its
    engine), `_see` (its scope as SQL) and the row readers `_row_to_paper` and
    `_row_to_researcher`."""

    def search_papers(self, text: str = "", fields: Iterable[str] = (), limit: int = 50,
                      offset: int = 0) -> list[Paper]:
        fields = list(fields)
        field_sql = self.fts.field_sql(fields) + self._see("p")
        q = self.fts.query(text)
        if q and self.fts.walks_field(self.db.conn, q, fields):
            rows = self.fts.field_walk(self.db.conn, self.fts.field_walk_sql(seen=self._see("p")),
                                       [q, fields[0], FTS_WINDOW, q, limit, offset])
            return self._with_fields(rows)
        if q:
            sql = self.fts.papers_sql(field_sql)
            params = [q, *fields, FTS_WINDOW, limit, offset]
        else:
            sql = (f"SELECT {PAPER_COLUMNS} FROM papers p WHERE 1=1{field_sql} "
                   "ORDER BY p.year DESC, p.title LIMIT ? OFFSET ?")
            params = [*fields, limit, offset]
        rows = self.db.conn.execute(sql, params).fetchall()
        return self._with_fields(rows)

    def search_paper_ids(self, text: str, fields: Iterable[str] = (), limit: int = 50) -> list[str]:
        """The ids `search_papers` would return for words, in its order, without reading
        the papers (the hybrid search fuses ids and reads only the winners)."""
        fields = list(fields)
        q = self.fts.query(text)
        if not q:
            return []
        if self.fts.walks_field(self.db.conn, q, fields):
            return [r[0] for r in self.fts.field_walk(
                self.db.conn, self.fts.field_walk_sql(columns="p.id", seen=self._see("p")),
                [q, fields[0], FTS_WINDOW, q, limit, 0])]
        sql = self.fts.papers_sql(self.fts.field_sql(fields) + self._see("p"), columns="p.id")
        return [r[0] for r in self.db.conn.execute(sql, [q, *fields, FTS_WINDOW, limit, 0])]

    def any_word_ids(self, terms: list[str], fields: list[str], limit: int) -> list[str]:
        """Ids of papers matching any of `terms` (each as a prefix), best first, ranked
        within the same newest-first window as `search_papers`."""
        q = self.fts.any_prefix_query(terms[:12])
        if not q:
            return []
        sql = self.fts.papers_sql(self.fts.field_sql(fields) + self._see("p"), columns="p.id")
        return [r[0] for r in self.db.conn.execute(sql, [q, *fields, FTS_WINDOW, limit, 0])]

    def papers_in_fields(self, ids: list[str], fields: list[str]) -> set[str]:
        if not ids or not fields:
            return set()
        return {r[0] for r in self.db.conn.execute(
            f"SELECT DISTINCT paper_id FROM paper_fields WHERE paper_id IN ({marks(ids)}) AND "
            f"field_id IN ({marks(fields)})", [*ids, *fields])}

    def _with_fields(self, rows) -> list[Paper]:
        return [self._row_to_paper(row) for row in rows]

    def search_researchers(self, text: str = "", fields: Iterable[str] = (),
                           limit: int = 50) -> list[Researcher]:
        fields = list(fields)
        field_sql = ""
        if fields:
            field_sql = (f" AND r.id IN (SELECT researcher_id FROM researcher_fields WHERE field_id "
                         f"IN ({', '.join('?' * len(fields))}))")
        field_sql += self._see("r")
        q = self.fts.query(text)
        db = self.db.conn
        if q:
            rows = db.execute(self.fts.researchers_sql(field_sql), [q, *fields, limit]).fetchall()
        else:
            rows = db.execute(f"SELECT r.* FROM researchers r WHERE 1=1{field_sql} ORDER BY r.name "
                              "LIMIT ?", [*fields, limit]).fetchall()
        return [self._row_to_researcher(db, r) for r in rows]

    # -- reviewer candidates (for reviewer choice, run/people/reviewers.py) ----------
    def reviewer_candidates(self, words: list[str], fields: Iterable[str] = (),
                            exclude: Iterable[str] = (), limit: int = 30,
                            window: int = 2000) -> list[str]:
        """Researcher ids whose papers best match any of `words` (full-text search), best
        first, at most `limit`; only researchers in `fields` when fields are given. Reads
        at most `window` matching papers, so a large store is never loaded whole."""
        fields, exclude = list(fields), list(dict.fromkeys(exclude))
        terms = [w for w in dict.fromkeys(re.findall(r"\w+", " ".join(words).lower())) if len(w) > 2]
        if not terms:
            return []
        query = self.fts.any_query(terms[:24])
        field_sql = (f" AND a.researcher_id IN (SELECT researcher_id FROM researcher_fields WHERE "
                     f"field_id IN ({', '.join('?' * len(fields))}))") if fields else ""
        skip_sql = (f" AND a.researcher_id NOT IN ({', '.join('?' * len(exclude))})"
                    if exclude else "")
        seen = self._see("r")  # never another visitor's researcher as a reviewer
        join = " JOIN researchers r ON r.id=a.researcher_id" if seen else ""
        sql = (f"WITH hits AS ({self.fts.hits_sql()}) "
               "SELECT a.researcher_id AS rid, MIN(hits.rank) AS best, count(*) AS n FROM hits "
               f"JOIN papers p ON p.rowid=hits.rid JOIN authorship a ON a.paper_id=p.id{join} "
               f"WHERE 1=1{field_sql}{skip_sql}{seen} GROUP BY a.researcher_id "
               "ORDER BY best, n DESC, a.researcher_id LIMIT ?")
        rows = self.db.conn.execute(sql, [query, window, *fields, *exclude, limit]).fetchall()
        return [r["rid"] for r in rows]
