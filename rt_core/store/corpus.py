"""The corpus: fields, papers, researchers, citations and authorship, and search.

`import_bundle` is the one way papers and researchers enter the store together
(CLI input files, uploads, importers, the starter community): papers first, then
researchers with their publication ids mapped through any merge.
"""
from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import InputError, NotFoundError
from ..sources.ids import normalise_title
from ..types import Paper, Researcher
from .db import Database
from .paper_vectors import PaperVectors, bump_version
from .search import FTS_WINDOW, PAPER_COLUMNS, fields_json, for_dialect, marks, sync_fields

_PAPER_COLS = ("id", "title", "abstract", "abstract_source", "authors_json", "year", "venue",
               "arxiv_id", "doi", "s2_id", "openalex_id", "url")


@dataclass
class ImportSummary:
    added: list[str] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)  # incoming id -> existing id

    def stored_id(self, incoming_id: str) -> str:
        """The id a record is stored under after merging."""
        return self.merged.get(incoming_id, incoming_id)

    @property
    def message(self) -> str:
        return f"{len(self.added)} added, {len(self.merged)} merged with existing records"


@dataclass
class BundleSummary:
    papers: ImportSummary
    researchers: ImportSummary
    paper_ids: list[str]  # stored ids of the incoming papers, in order
    researcher_ids: list[str]

    @property
    def message(self) -> str:
        return (f"papers: {self.papers.message}; researchers: {self.researchers.message}")


class Corpus:
    def __init__(self, db: Database):
        self.db = db
        self.fts = for_dialect(db.dialect)
        self.vectors = PaperVectors(db)  # for search by meaning (topic_search.py)

    def import_bundle(self, papers: Iterable[Paper] = (), researchers: Iterable[Researcher] = (),
                      origin: str = "") -> BundleSummary:
        """Papers and researchers in one transaction. A researcher's publication ids are
        mapped to the stored ids of merged papers, so a paper that matched one already
        stored (same arXiv id, DOI or title) still links to its author."""
        papers, researchers = list(papers), list(researchers)
        with self.db.transaction():
            ps = self.upsert_papers(papers, origin=origin)
            for r in researchers:
                r.publication_ids = list(dict.fromkeys(ps.stored_id(i) for i in r.publication_ids))
            rs = self.upsert_researchers(researchers, origin=origin)
        return BundleSummary(ps, rs, list(dict.fromkeys(ps.stored_id(p.id) for p in papers)),
                             [r.id for r in researchers])

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
    def _find_duplicate(self, db: sqlite3.Connection, p: Paper) -> str | None:
        if db.execute("SELECT 1 FROM papers WHERE id=?", (p.id,)).fetchone():
            return p.id
        for col, val in (("arxiv_id", p.arxiv_id), ("doi", (p.doi or "").lower())):
            if val:
                row = db.execute(f"SELECT id FROM papers WHERE {col}=?", (val,)).fetchone()
                if row:
                    return row[0]
        norm = normalise_title(p.title)
        if len(norm) >= 12:
            row = db.execute("SELECT id FROM papers WHERE norm_title=?", (norm,)).fetchone()
            if row:
                return row[0]
        return None

    def upsert_papers(self, papers: Iterable[Paper], origin: str = "") -> ImportSummary:
        """Insert papers, merging duplicates (same id, arXiv id, DOI or title) into the
        existing record: empty fields are filled, a real abstract replaces a summary."""
        summary = ImportSummary()
        with self.db.transaction() as db:
            for p in papers:
                if not (p.title or "").strip():
                    raise InputError(f"paper {p.id or '(no id)'} has no title")
                existing = self._find_duplicate(db, p)
                if existing is None:
                    self._insert_paper(db, p, origin)
                    summary.added.append(p.id)
                    target = p.id
                else:
                    self._merge_paper(db, existing, p)
                    summary.merged[p.id] = existing
                    target = existing
                for f in p.fields:
                    db.execute("INSERT INTO paper_fields(paper_id, field_id, paper_rowid) SELECT ?, ?, "
                               "rowid FROM papers WHERE id=? ON CONFLICT DO NOTHING", (target, f, target))
                if existing is not None and p.fields:
                    sync_fields(db, target)
                for ref in p.references:
                    db.execute("INSERT INTO citations VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (target, ref))
            if summary.added or summary.merged:
                bump_version(db)  # new or edited text: paper vectors to (re)compute
        return summary

    def _insert_paper(self, db: sqlite3.Connection, p: Paper, origin: str) -> None:
        db.execute(
            f"INSERT INTO papers({', '.join(_PAPER_COLS)}, norm_title, origin, fields_json) "
            f"VALUES ({', '.join('?' * (len(_PAPER_COLS) + 3))})",
            (p.id, p.title.strip(), p.abstract or "", p.abstract_source, json.dumps(p.authors),
             p.year, p.venue, p.arxiv_id, (p.doi or "").lower(), p.s2_id, p.openalex_id, p.url,
             normalise_title(p.title), origin, fields_json(p.fields)))
        self.fts.index_paper(db, p.id, p.title, p.abstract, p.authors)

    def _merge_paper(self, db: sqlite3.Connection, existing_id: str, p: Paper) -> None:
        row = db.execute("SELECT * FROM papers WHERE id=?", (existing_id,)).fetchone()
        old = self._row_to_paper(row)
        updates: dict[str, object] = {}
        for col in ("venue", "arxiv_id", "doi", "s2_id", "openalex_id", "url"):
            new = getattr(p, col) or ""
            if new and not getattr(old, col):
                updates[col] = new.lower() if col == "doi" else new
        if p.year and not old.year:
            updates["year"] = p.year
        if p.authors and not old.authors:
            updates["authors_json"] = json.dumps(p.authors)
        real_new = p.abstract and p.abstract_source not in ("summary", "")
        if p.abstract and (not old.abstract or (real_new and old.abstract_source == "summary")):
            updates["abstract"] = p.abstract
            updates["abstract_source"] = p.abstract_source
        if updates:
            sets = ", ".join(f"{k}=?" for k in updates)
            db.execute(f"UPDATE papers SET {sets} WHERE id=?", (*updates.values(), existing_id))
            merged = self._row_to_paper(db.execute("SELECT * FROM papers WHERE id=?",
                                                   (existing_id,)).fetchone())
            self.fts.index_paper(db, existing_id, merged.title, merged.abstract, merged.authors)

    @staticmethod
    def _row_to_paper(row: sqlite3.Row, refs: list[str] | None = None) -> Paper:
        # fields come from the row's copy of paper_fields (sorted), one query less per paper
        return Paper(id=row["id"], title=row["title"], abstract=row["abstract"],
                     abstract_source=row["abstract_source"], authors=json.loads(row["authors_json"]),
                     year=row["year"], venue=row["venue"], arxiv_id=row["arxiv_id"], doi=row["doi"],
                     s2_id=row["s2_id"], openalex_id=row["openalex_id"], url=row["url"],
                     fields=json.loads(row["fields_json"]), references=refs or [])

    def get_papers(self, ids: Iterable[str]) -> list[Paper]:
        """Papers in the order asked; unknown ids raise NotFoundError naming them all."""
        ids = list(dict.fromkeys(ids))
        found, refs = {}, {}
        db = self.db.conn
        for i in range(0, len(ids), 500):  # two queries a chunk, not two a paper (PostgreSQL
            chunk = ids[i:i + 500]           # pays a round trip for each)
            for citing, cited in db.execute("SELECT citing_id, cited_id FROM citations WHERE "
                                            f"citing_id IN ({marks(chunk)})", chunk):
                refs.setdefault(citing, []).append(cited)
            for row in db.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id IN "
                                  f"({marks(chunk)})", chunk):
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
            "SELECT id, title FROM papers ORDER BY year DESC, title LIMIT ?", (limit,))}

    def summarised_arxiv_ids(self, limit: int = 200) -> list[str]:
        """arXiv ids of papers whose abstract is still our own summary (to fetch the real one)."""
        return [r[0] for r in self.db.conn.execute(
            "SELECT arxiv_id FROM papers WHERE abstract_source='summary' AND arxiv_id != '' "
            "LIMIT ?", (limit,))]

    def paper_exists(self, pid: str) -> bool:
        return self.db.conn.execute("SELECT 1 FROM papers WHERE id=?", (pid,)).fetchone() is not None

    # -- researchers ---------------------------------------------------------
    def upsert_researchers(self, researchers: Iterable[Researcher], origin: str = "") -> ImportSummary:
        """Insert or update researchers; authorship rows to papers not in the store are
        rejected, so import the papers first (in the same transaction is fine)."""
        summary = ImportSummary()
        with self.db.transaction() as db:
            for r in researchers:
                if not (r.name or "").strip():
                    raise InputError(f"researcher {r.id or '(no id)'} has no name")
                if not db.execute("SELECT 1 FROM researchers WHERE id=?", (r.id,)).fetchone():
                    db.execute(
                        "INSERT INTO researchers(id, name, affiliation, s2_id, openalex_id, origin) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (r.id, r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, origin))
                    summary.added.append(r.id)
                else:
                    db.execute("UPDATE researchers SET name=?, affiliation=COALESCE(NULLIF(?, ''), "
                               "affiliation), s2_id=COALESCE(NULLIF(?, ''), s2_id), openalex_id="
                               "COALESCE(NULLIF(?, ''), openalex_id) WHERE id=?",
                               (r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, r.id))
                    summary.merged[r.id] = r.id
                self.fts.index_researcher(db, r.id)
                for f in r.fields:
                    db.execute("INSERT INTO researcher_fields VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (r.id, f))
                for pid in r.publication_ids:
                    real = self._resolve_paper_id(db, pid)
                    if real is None:
                        raise NotFoundError(f"researcher {r.name}: unknown paper id {pid}")
                    db.execute("INSERT INTO authorship VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (r.id, real))
        return summary

    def _resolve_paper_id(self, db, pid: str) -> str | None:
        if db.execute("SELECT 1 FROM papers WHERE id=?", (pid,)).fetchone():
            return pid
        return None

    def get_researchers(self, ids: Iterable[str]) -> list[Researcher]:
        ids = list(dict.fromkeys(ids))
        db = self.db.conn
        found = {}
        for rid in ids:
            row = db.execute("SELECT * FROM researchers WHERE id=?", (rid,)).fetchone()
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
            "WHERE a.researcher_id=? ORDER BY p.year DESC, p.id", (rid,))]
        return Researcher(id=rid, name=row["name"], affiliation=row["affiliation"], fields=fields,
                          publication_ids=pubs, s2_id=row["s2_id"], openalex_id=row["openalex_id"])

    def get_researcher(self, rid: str) -> Researcher:
        return self.get_researchers([rid])[0]

    def researcher_exists(self, rid: str) -> bool:
        return self.db.conn.execute("SELECT 1 FROM researchers WHERE id=?", (rid,)).fetchone() is not None

    def researcher_names(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> name for display; ids the store does not know map to themselves."""
        return {i: (row[0] if (row := self.db.conn.execute(
            "SELECT name FROM researchers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def paper_titles(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> title for display; unknown ids map to themselves."""
        return {i: (row[0] if (row := self.db.conn.execute(
            "SELECT title FROM papers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def all_researcher_ids(self) -> list[str]:
        return [r[0] for r in self.db.conn.execute("SELECT id FROM researchers ORDER BY name")]

    def publications(self, researcher_id: str) -> list[Paper]:
        """A researcher's papers, newest first."""
        return self.get_papers(self.get_researcher(researcher_id).publication_ids)

    def authors_of(self, paper_ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for pid in paper_ids:
            out[pid] = [r[0] for r in self.db.conn.execute(
                "SELECT researcher_id FROM authorship WHERE paper_id=?", (pid,))]
        return out

    # -- search (the SQL of each engine's index is in search.py) ------------
    def search_papers(self, text: str = "", fields: Iterable[str] = (), limit: int = 50,
                      offset: int = 0) -> list[Paper]:
        fields = list(fields)
        field_sql = self.fts.field_sql(fields)
        q = self.fts.query(text)
        if q and self.fts.walks_field(self.db.conn, q, fields):
            rows = self.fts.field_walk(self.db.conn, self.fts.field_walk_sql(),
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
                self.db.conn, self.fts.field_walk_sql(columns="p.id"),
                [q, fields[0], FTS_WINDOW, q, limit, 0])]
        sql = self.fts.papers_sql(self.fts.field_sql(fields), columns="p.id")
        return [r[0] for r in self.db.conn.execute(sql, [q, *fields, FTS_WINDOW, limit, 0])]

    def any_word_ids(self, terms: list[str], fields: list[str], limit: int) -> list[str]:
        """Ids of papers matching any of `terms` (each as a prefix), best first, ranked
        within the same newest-first window as `search_papers`."""
        q = self.fts.any_prefix_query(terms[:12])
        if not q:
            return []
        sql = self.fts.papers_sql(self.fts.field_sql(fields), columns="p.id")
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
        q = self.fts.query(text)
        db = self.db.conn
        if q:
            rows = db.execute(self.fts.researchers_sql(field_sql), [q, *fields, limit]).fetchall()
        else:
            rows = db.execute(f"SELECT r.* FROM researchers r WHERE 1=1{field_sql} ORDER BY r.name "
                              "LIMIT ?", [*fields, limit]).fetchall()
        return [self._row_to_researcher(db, r) for r in rows]

    # -- reviewer candidates (added for reviewer choice; see run.simulation) ----------
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
        sql = (f"WITH hits AS ({self.fts.hits_sql()}) "
               "SELECT a.researcher_id AS rid, MIN(hits.rank) AS best, count(*) AS n FROM hits "
               "JOIN papers p ON p.rowid=hits.rid JOIN authorship a ON a.paper_id=p.id "
               f"WHERE 1=1{field_sql}{skip_sql} GROUP BY a.researcher_id "
               "ORDER BY best, n DESC, a.researcher_id LIMIT ?")
        rows = self.db.conn.execute(sql, [query, window, *fields, *exclude, limit]).fetchall()
        return [r["rid"] for r in rows]

    def researcher_fields(self, ids: Iterable[str]) -> list[str]:
        ids = list(ids)
        if not ids:
            return []
        return [r[0] for r in self.db.conn.execute(
            f"SELECT DISTINCT field_id FROM researcher_fields WHERE researcher_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY field_id", ids)]
