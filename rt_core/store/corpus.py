"""The corpus: fields, papers, researchers, citations and authorship (its search is in
corpus_search.py, its imports in corpus_imports.py, a visitor's records in corpus_records.py).

A `Corpus` reads and writes as one `rt_core.access.RecordScope`. The store's own corpus sees
every record and adds to the shared corpus (the command line, which serves nobody else);
`seen_by(scope)` gives the corpus as one browser sees it, where every read by id, search and
list holds only the shared records and that browser's own (`_see`, access.may_see_record in
SQL), so a page, and a run started from it, never reaches another visitor's records.
"""
from __future__ import annotations

import copy
import json
import re
import sqlite3
from collections.abc import Iterable

from ..access import EVERY_RECORD, RecordScope
from ..errors import NotFoundError
from ..types import Paper, Researcher
from .corpus_imports import BundleSummary, CorpusImports, ImportSummary
from .corpus_records import CorpusRecords
from .corpus_search import CorpusSearch
from .db import Database
from .paper_vectors import PaperVectors
from .search import PAPER_COLUMNS, for_dialect, marks

__all__ = ["BundleSummary", "Corpus", "ImportSummary"]
_HEX = re.compile(r"^[0-9a-f]{1,128}$")


class Corpus(CorpusImports, CorpusRecords, CorpusSearch):
    def __init__(self, db: Database, scope: RecordScope = EVERY_RECORD):
        self.db = db
        self.fts = for_dialect(db.dialect)
        self.vectors = PaperVectors(db)  # for search by meaning (topic_search.py)
        self.scope = scope

    def seen_by(self, scope: RecordScope) -> Corpus:
        """This corpus as `scope` reads and writes it: the same database, full-text index and
        paper vectors (one matrix per process, however many visitors)."""
        if scope == self.scope:
            return self
        view = copy.copy(self)
        view.scope = scope
        return view

    @staticmethod
    def owner_literal(owner_hash: str) -> str:
        """An owner hash as it may stand in SQL: hex only (a SHA-256 of the owner token),
        anything else becomes one no record carries. Written into the statement rather
        than bound, so the scope can join any search's SQL without moving its placeholders."""
        return owner_hash if _HEX.match(owner_hash or "") else ("x" if owner_hash else "")

    def _see(self, alias: str) -> str:
        """`access.may_see_record` as SQL on the row `alias` (papers or researchers): ''
        for a scope that sees everything, else ' AND (...)' to append to a WHERE."""
        if self.scope.everything:
            return ""
        owner = self.owner_literal(self.scope.owner_hash)
        mine = f" OR {alias}.added_by='{owner}'" if owner else ""
        return f" AND ({alias}.added_by=''{mine})"

    # -- fields --------------------------------------------------------------
    def upsert_fields(self, fields: Iterable[dict]) -> None:
        with self.db.transaction() as db:
            for f in fields:
                db.execute("INSERT INTO fields(id, name, domain) VALUES (?, ?, ?) ON CONFLICT(id) "
                           "DO UPDATE SET name=excluded.name, domain=excluded.domain",
                           (f["id"], f.get("name") or f["id"], f.get("domain") or ""))

    def list_fields(self) -> list[dict]:
        rows = self.db.conn.execute("""
            SELECT f.id, f.name, f.domain,
              (SELECT count(*) FROM paper_fields pf WHERE pf.field_id=f.id) AS papers,
              (SELECT count(*) FROM researcher_fields rf WHERE rf.field_id=f.id) AS researchers
            FROM fields f ORDER BY f.name""").fetchall()
        return [dict(r) for r in rows]

    # -- papers --------------------------------------------------------------
    @staticmethod
    def _row_to_paper(row: sqlite3.Row, refs: list[str] | None = None) -> Paper:
        # fields come from the row's copy of paper_fields (sorted), one query less per paper
        return Paper(id=row["id"], title=row["title"], abstract=row["abstract"],
                     abstract_source=row["abstract_source"], authors=json.loads(row["authors_json"]),
                     year=row["year"], venue=row["venue"], arxiv_id=row["arxiv_id"], doi=row["doi"],
                     s2_id=row["s2_id"], openalex_id=row["openalex_id"], url=row["url"],
                     fields=json.loads(row["fields_json"]), references=refs or [])

    def get_papers(self, ids: Iterable[str]) -> list[Paper]:
        """Papers in the order asked; unknown ids (and those this scope may not see, in the
        same words) raise NotFoundError naming them all."""
        ids = list(dict.fromkeys(ids))
        found, refs = {}, {}
        db = self.db.conn
        for i in range(0, len(ids), 500):  # two queries a chunk, not two a paper (PostgreSQL
            chunk = ids[i:i + 500]           # pays a round trip for each)
            for citing, cited in db.execute("SELECT citing_id, cited_id FROM citations WHERE "
                                            f"citing_id IN ({marks(chunk)})", chunk):
                refs.setdefault(citing, []).append(cited)
            for row in db.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id IN "
                                  f"({marks(chunk)}){self._see('p')}", chunk):
                found[row["id"]] = self._row_to_paper(row, refs=sorted(refs.get(row["id"], [])))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"Unknown paper id(s): {', '.join(missing)}",
                                "Search the store or import the paper first.")
        return [found[i] for i in ids]

    def get_paper(self, pid: str) -> Paper:
        return self.get_papers([pid])[0]

    def paper_choices(self, limit: int = 5000) -> dict[str, str]:
        """id -> title, newest first, in one query (for pickers)."""
        return {r[0]: r[1] for r in self.db.conn.execute(
            f"SELECT p.id, p.title FROM papers p WHERE 1=1{self._see('p')} "
            "ORDER BY p.year DESC, p.title LIMIT ?", (limit,))}

    def summarised_arxiv_ids(self, limit: int = 200) -> list[str]:
        """arXiv ids of papers whose abstract is still our own summary (to fetch the real one)."""
        return [r[0] for r in self.db.conn.execute(
            "SELECT arxiv_id FROM papers WHERE abstract_source='summary' AND arxiv_id != '' "
            "LIMIT ?", (limit,))]

    def paper_exists(self, pid: str) -> bool:
        return self.db.conn.execute(f"SELECT 1 FROM papers p WHERE p.id=?{self._see('p')}",
                                    (pid,)).fetchone() is not None

    def seen_paper_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of `ids` this scope may see (for readers that found ids elsewhere: the paper
        vectors, raw authorship rows)."""
        return self._seen_ids("papers", ids)

    def seen_researcher_ids(self, ids: Iterable[str]) -> set[str]:
        return self._seen_ids("researchers", ids)

    def _seen_ids(self, table: str, ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(ids))
        if self.scope.everything:
            return set(ids)
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out |= {r[0] for r in self.db.conn.execute(
                f"SELECT t.id FROM {table} t WHERE t.id IN ({marks(chunk)}){self._see('t')}", chunk)}
        return out

    # -- researchers ---------------------------------------------------------
    def get_researchers(self, ids: Iterable[str]) -> list[Researcher]:
        ids = list(dict.fromkeys(ids))
        db = self.db.conn
        found = {}
        for rid in ids:
            row = db.execute(f"SELECT * FROM researchers r WHERE r.id=?{self._see('r')}", (rid,)).fetchone()
            if row:
                found[rid] = self._row_to_researcher(db, row)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"Unknown researcher id(s): {', '.join(missing)}",
                                "Search the store or import the researcher first.")
        return [found[i] for i in ids]

    def _row_to_researcher(self, db, row) -> Researcher:
        rid = row["id"]
        fields = [r[0] for r in db.execute(
            "SELECT field_id FROM researcher_fields WHERE researcher_id=? ORDER BY field_id", (rid,))]
        pubs = [r[0] for r in db.execute(
            "SELECT a.paper_id FROM authorship a JOIN papers p ON p.id=a.paper_id "
            f"WHERE a.researcher_id=?{self._see('p')} ORDER BY p.year DESC, p.id", (rid,))]
        return Researcher(id=rid, name=row["name"], affiliation=row["affiliation"], fields=fields,
                          publication_ids=pubs, s2_id=row["s2_id"], openalex_id=row["openalex_id"])

    def get_researcher(self, rid: str) -> Researcher:
        return self.get_researchers([rid])[0]

    def researcher_exists(self, rid: str) -> bool:
        return self.db.conn.execute(f"SELECT 1 FROM researchers r WHERE r.id=?{self._see('r')}",
                                    (rid,)).fetchone() is not None

    def researcher_names(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> name for display; ids the store does not know map to themselves. Not
        scoped: the ids come from a run the viewer may open, whose text names them anyway."""
        return {i: (row[0] if (row := self.db.conn.execute(
            "SELECT name FROM researchers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def paper_titles(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> title for display; unknown ids map to themselves."""
        return {i: (row[0] if (row := self.db.conn.execute(
            "SELECT title FROM papers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def all_researcher_ids(self) -> list[str]:
        return [r[0] for r in self.db.conn.execute(
            f"SELECT r.id FROM researchers r WHERE 1=1{self._see('r')} ORDER BY r.name")]

    def publications(self, researcher_id: str) -> list[Paper]:
        """A researcher's papers, newest first."""
        return self.get_papers(self.get_researcher(researcher_id).publication_ids)

    def authors_of(self, paper_ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for pid in paper_ids:
            out[pid] = [r[0] for r in self.db.conn.execute(
                "SELECT a.researcher_id FROM authorship a JOIN researchers r ON r.id=a.researcher_id "
                f"WHERE a.paper_id=?{self._see('r')}", (pid,))]
        return out

    def researcher_fields(self, ids: Iterable[str]) -> list[str]:
        ids = list(ids)
        if not ids:
            return []
        return [r[0] for r in self.db.conn.execute(
            f"SELECT DISTINCT field_id FROM researcher_fields WHERE researcher_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY field_id", ids)]
