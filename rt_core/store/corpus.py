"""The corpus: fields, papers, researchers, citations and authorship (its search is in
corpus_search.py).

`import_bundle` is the one way papers and researchers enter the store together
(CLI input files, uploads, importers, the starter community): papers first, then
researchers with their publication ids mapped through any merge.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import InputError, NotFoundError
from ..sources.ids import normalise_title
from ..types import Paper, Researcher
from .corpus_search import CorpusSearch
from .db import Database
from .paper_vectors import PaperVectors, bump_version
from .search import PAPER_COLUMNS, fields_json, for_dialect, marks, sync_fields

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


class Corpus(CorpusSearch):
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

    def researcher_fields(self, ids: Iterable[str]) -> list[str]:
        ids = list(ids)
        if not ids:
            return []
        return [r[0] for r in self.db.conn.execute(
            f"SELECT DISTINCT field_id FROM researcher_fields WHERE researcher_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY field_id", ids)]
