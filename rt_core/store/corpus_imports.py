"""How papers and researchers enter the corpus, and whose they are then.

`import_bundle` is the one way papers and researchers enter the store together (CLI input
files, uploads, importers, the starter community): papers first, then researchers with
their publication ids mapped to the stored ids.

Who may change what is `rt_core.access` (the corpus's `scope`). An import is matched only
against the records it could share: the shared corpus and, for a visitor of a shared
server, the records their own browser added. Then:
- a privileged viewer (a personal server, the operator, the command line) merges into a
  matching record as it always has: empty fields are filled, a real abstract replaces a
  summary, a researcher's name is updated;
- a visitor merges into their own records the same way, but a paper matching a shared one
  (same id, arXiv id, DOI or title) is *kept as it is* and used in place of theirs
  (`ImportSummary.kept`: the page says so in one message), and a researcher whose id is
  taken (ids of uploaded researchers are made from names, and two people share a name) is
  stored as *their own* researcher under an id of its own (`ImportSummary.renamed`);
- whatever is added is stored with the scope's `adds_as`: '' (shared) or the visitor's
  owner hash (theirs until the operator publishes it, corpus_records.py).
A record never changes because somebody who may not change it uploaded the same id.
"""
from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..access import KEPT_SHARED, may_add_records, may_change_record
from ..errors import InputError, NotFoundError
from ..sources.ids import normalise_title
from ..types import Paper, Researcher
from .paper_vectors import bump_version
from .search import fields_json, sync_fields

_PAPER_COLS = ("id", "title", "abstract", "abstract_source", "authors_json", "year", "venue",
               "arxiv_id", "doi", "s2_id", "openalex_id", "url")


@dataclass
class ImportSummary:
    added: list[str] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)  # incoming id -> existing id
    kept: dict[str, str] = field(default_factory=dict)  # incoming id -> shared record left as it is
    renamed: dict[str, str] = field(default_factory=dict)  # incoming id -> the id it was added as
    labels: dict[str, str] = field(default_factory=dict)  # title or name of each kept or renamed one

    def stored_id(self, incoming_id: str) -> str:
        """The id a record is stored (or used) under after the import."""
        for m in (self.merged, self.kept, self.renamed):
            if incoming_id in m:
                return m[incoming_id]
        return incoming_id

    @property
    def message(self) -> str:
        text = f"{len(self.added)} added, {len(self.merged)} merged with existing records"
        return text + (f", {len(self.kept)} already in the store and left as they are"
                       if self.kept else "")


@dataclass
class BundleSummary:
    papers: ImportSummary
    researchers: ImportSummary
    paper_ids: list[str]  # stored ids of the incoming papers, in order
    researcher_ids: list[str]
    added_as: str = ""  # '' : shared; else the owner hash of the visitor whose records they are

    @property
    def message(self) -> str:
        return (f"papers: {self.papers.message}; researchers: {self.researchers.message}")

    @property
    def changed_nothing(self) -> bool:
        """Every record was one the store kept as it is."""
        return not (self.papers.added or self.papers.merged or self.researchers.added
                    or self.researchers.merged)

    def notices(self) -> list[str]:
        """What a visitor should be told about an import beyond its counts, one line each:
        the stored papers kept in place of theirs, their researchers added beside a
        namesake, and that what they added is theirs until the operator shares it."""
        out = []
        if self.papers.kept:
            shown = "; ".join(f"“{t}”" for t in list(self.papers.labels.values())[:3])
            more = f" and {len(self.papers.kept) - 3} more" if len(self.papers.kept) > 3 else ""
            out.append(f"Already in the store: {shown}{more}. {KEPT_SHARED} The stored "
                       "version is in your neighbourhood.")
        if self.researchers.renamed:
            shown = "; ".join(f"“{t}”" for t in list(self.researchers.labels.values())[:3])
            out.append(f"The store already has a researcher under the id of {shown}: yours was "
                       "added as a researcher of your own beside that one, which did not change.")
        if self.added_as and (self.papers.added or self.researchers.added):
            out.append("What you added is yours: it appears in this browser's searches and runs "
                       "only, until the server's operator shares it with everybody.")
        return out


class CorpusImports:
    """The corpus's writes of papers and researchers. The concrete `Corpus` provides `db`,
    `fts`, `scope` and `_see` (the scope as SQL)."""

    def import_bundle(self, papers: Iterable[Paper] = (), researchers: Iterable[Researcher] = (),
                      origin: str = "") -> BundleSummary:
        """Papers and researchers in one transaction. A researcher's publication ids are
        mapped to the stored ids of merged or kept papers, so a paper that matched one
        already stored (same arXiv id, DOI or title) still links to its author."""
        papers, researchers = list(papers), list(researchers)
        with self.db.transaction():
            ps = self.upsert_papers(papers, origin=origin)
            for r in researchers:
                r.publication_ids = list(dict.fromkeys(ps.stored_id(i) for i in r.publication_ids))
            rs = self.upsert_researchers(researchers, origin=origin)
        return BundleSummary(ps, rs, list(dict.fromkeys(ps.stored_id(p.id) for p in papers)),
                             list(dict.fromkeys(rs.stored_id(r.id) for r in researchers)),
                             added_as=self.scope.adds_as)

    def _check_may_add(self) -> None:
        allowed = may_add_records(self.scope)
        if not allowed:
            raise InputError(allowed.reason)

    def _matchable(self, alias: str = "") -> str:
        """SQL: the records an import may match (the shared ones and the importer's own)."""
        col = f"{alias}.added_by" if alias else "added_by"
        owner = self.owner_literal(self.scope.adds_as)
        return f"({col}=''" + (f" OR {col}='{owner}')" if owner else ")")

    def _free_id(self, db, table: str, wanted: str) -> str:
        """`wanted`, or, when a record the importer may not match holds it, an id of its own:
        the id with its adder's short hash ('shared' for the shared corpus) and a number."""
        tag = self.scope.adds_as[:8] or "shared"
        for n in range(1, 1000):
            rid = wanted if n == 1 else f"{wanted}~{tag}" + (f"-{n - 1}" if n > 2 else "")
            if not db.execute(f"SELECT 1 FROM {table} WHERE id=?", (rid,)).fetchone():
                return rid
        raise InputError(f"too many records share the id {wanted}")

    # -- papers --------------------------------------------------------------
    def _find_duplicate(self, db: sqlite3.Connection, p: Paper) -> tuple[str, str] | None:
        """(id, added_by) of a record this import may match: same id, arXiv id, DOI or title."""
        mine = self._matchable()
        row = db.execute(f"SELECT id, added_by FROM papers WHERE id=? AND {mine}", (p.id,)).fetchone()
        for col, val in (("arxiv_id", p.arxiv_id), ("doi", (p.doi or "").lower())):
            if row is None and val:
                row = db.execute(f"SELECT id, added_by FROM papers WHERE {col}=? AND {mine}",
                                 (val,)).fetchone()
        norm = normalise_title(p.title)
        if row is None and len(norm) >= 12:
            row = db.execute(f"SELECT id, added_by FROM papers WHERE norm_title=? AND {mine}",
                             (norm,)).fetchone()
        return (row[0], row[1]) if row else None

    def upsert_papers(self, papers: Iterable[Paper], origin: str = "") -> ImportSummary:
        """Insert papers, merging duplicates (same id, arXiv id, DOI or title) into the
        existing record this viewer may change, keeping any other as it is (module doc)."""
        summary = ImportSummary()
        papers = list(papers)
        if papers:
            self._check_may_add()
        with self.db.transaction() as db:
            for p in papers:
                if not (p.title or "").strip():
                    raise InputError(f"paper {p.id or '(no id)'} has no title")
                existing = self._find_duplicate(db, p)
                if existing is None:
                    target = self._free_id(db, "papers", p.id)
                    self._insert_paper(db, dataclasses.replace(p, id=target), origin)
                    summary.added.append(p.id)
                    if target != p.id:
                        summary.renamed[p.id] = target
                elif may_change_record(self.scope, existing[1]):
                    target = existing[0]
                    self._merge_paper(db, target, p)
                    summary.merged[p.id] = target
                else:
                    summary.kept[p.id] = existing[0]  # nothing of it changes: fields, citations
                    summary.labels[p.id] = p.title.strip()
                    continue
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
            f"INSERT INTO papers({', '.join(_PAPER_COLS)}, norm_title, origin, fields_json, added_by) "
            f"VALUES ({', '.join('?' * (len(_PAPER_COLS) + 4))})",
            (p.id, p.title.strip(), p.abstract or "", p.abstract_source, json.dumps(p.authors),
             p.year, p.venue, p.arxiv_id, (p.doi or "").lower(), p.s2_id, p.openalex_id, p.url,
             normalise_title(p.title), origin, fields_json(p.fields), self.scope.adds_as))
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

    # -- researchers ---------------------------------------------------------
    def _researcher_slot(self, db, wanted: str) -> tuple[str, bool]:
        """(id, exists): the record a researcher with id `wanted` goes into: a record this
        viewer may match and change, else the first free id of its own (module doc)."""
        tag = self.scope.adds_as[:8] or "shared"
        for n in range(1, 1000):
            rid = wanted if n == 1 else f"{wanted}~{tag}" + (f"-{n - 1}" if n > 2 else "")
            row = db.execute("SELECT added_by FROM researchers WHERE id=?", (rid,)).fetchone()
            if row is None:
                return rid, False
            if row[0] in ("", self.scope.adds_as) and may_change_record(self.scope, row[0]):
                return rid, True
        raise InputError(f"too many researchers share the id {wanted}")

    def upsert_researchers(self, researchers: Iterable[Researcher], origin: str = "") -> ImportSummary:
        """Insert or update researchers; authorship rows to papers this viewer cannot see
        are rejected, so import the papers first (in the same transaction is fine)."""
        summary = ImportSummary()
        researchers = list(researchers)
        if researchers:
            self._check_may_add()
        with self.db.transaction() as db:
            for r in researchers:
                if not (r.name or "").strip():
                    raise InputError(f"researcher {r.id or '(no id)'} has no name")
                rid, exists = self._researcher_slot(db, r.id)
                if not exists:
                    db.execute(
                        "INSERT INTO researchers(id, name, affiliation, s2_id, openalex_id, origin, "
                        "added_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (rid, r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, origin,
                         self.scope.adds_as))
                    summary.added.append(r.id)
                else:
                    db.execute("UPDATE researchers SET name=?, affiliation=COALESCE(NULLIF(?, ''), "
                               "affiliation), s2_id=COALESCE(NULLIF(?, ''), s2_id), openalex_id="
                               "COALESCE(NULLIF(?, ''), openalex_id) WHERE id=?",
                               (r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, rid))
                    summary.merged[r.id] = rid
                if rid != r.id:
                    summary.renamed[r.id] = rid
                    summary.labels[r.id] = r.name.strip()
                self.fts.index_researcher(db, rid)
                for f in r.fields:
                    db.execute("INSERT INTO researcher_fields VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (rid, f))
                for pid in r.publication_ids:
                    if not db.execute(f"SELECT 1 FROM papers p WHERE p.id=?{self._see('p')}",
                                      (pid,)).fetchone():
                        raise NotFoundError(f"researcher {r.name}: unknown paper id {pid}")
                    db.execute("INSERT INTO authorship VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (rid, pid))
        return summary
