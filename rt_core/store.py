"""The SQLite store: corpus, profiles, runs, ratings and caches.

One file, opened through `open_store()`, which applies migrations. Each thread
gets its own connection (Streamlit runs every browser session in a thread);
WAL mode lets those sessions read while one writes.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from . import config
from .errors import InputError, NotFoundError
from .migrations import migrate
from .types import Paper, Researcher, Run

FTS_WINDOW = 400
_PAPER_COLS = ("id", "title", "abstract", "abstract_source", "authors_json", "year", "venue",
               "arxiv_id", "doi", "s2_id", "openalex_id", "url")


def normalise_title(title: str) -> str:
    """Lower-case words only, so 'A  Survey of LLMs.' and 'a survey of llms' match."""
    return " ".join(re.findall(r"[a-z0-9]+", (title or "").lower()))


@dataclass
class ImportSummary:
    added: list[str] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)  # incoming id -> existing id

    @property
    def message(self) -> str:
        return f"{len(self.added)} added, {len(self.merged)} merged with existing records"


class Store:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        migrate(self.conn)

    # -- connections -------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        db = getattr(self._local, "conn", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=30,
                                 check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=30000")
            self._local.conn = db
        return db

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: nothing half-written reaches the store."""
        db = self.conn
        if db.in_transaction:  # nested: join the outer transaction
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        db = getattr(self._local, "conn", None)
        if db is not None:
            db.close()
            self._local.conn = None

    # -- meta --------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) "
                          "DO UPDATE SET value=excluded.value", (key, value))

    # -- fields --------------------------------------------------------------
    def upsert_fields(self, fields: Iterable[dict]) -> None:
        with self.transaction() as db:
            for f in fields:
                db.execute("INSERT INTO fields(id, name, domain) VALUES (?, ?, ?) ON CONFLICT(id) "
                           "DO UPDATE SET name=excluded.name, domain=excluded.domain",
                           (f["id"], f.get("name") or f["id"], f.get("domain") or ""))

    def list_fields(self) -> list[dict]:
        rows = self.conn.execute("""
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
        with self.transaction() as db:
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
                    db.execute("INSERT OR IGNORE INTO paper_fields VALUES (?, ?)", (target, f))
                for ref in p.references:
                    db.execute("INSERT OR IGNORE INTO citations VALUES (?, ?)", (target, ref))
        return summary

    def _insert_paper(self, db: sqlite3.Connection, p: Paper, origin: str) -> None:
        cur = db.execute(
            f"INSERT INTO papers({', '.join(_PAPER_COLS)}, norm_title, origin) "
            f"VALUES ({', '.join('?' * (len(_PAPER_COLS) + 2))})",
            (p.id, p.title.strip(), p.abstract or "", p.abstract_source, json.dumps(p.authors),
             p.year, p.venue, p.arxiv_id, (p.doi or "").lower(), p.s2_id, p.openalex_id, p.url,
             normalise_title(p.title), origin))
        self._index_paper(db, cur.lastrowid, p.title, p.abstract, p.authors)

    def _index_paper(self, db, rowid: int, title: str, abstract: str, authors: list[str]) -> None:
        db.execute("DELETE FROM papers_fts WHERE rowid=?", (rowid,))
        db.execute("INSERT INTO papers_fts(rowid, title, abstract, authors) VALUES (?, ?, ?, ?)",
                   (rowid, title, abstract or "", "; ".join(authors)))

    def _merge_paper(self, db: sqlite3.Connection, existing_id: str, p: Paper) -> None:
        row = db.execute("SELECT rowid, * FROM papers WHERE id=?", (existing_id,)).fetchone()
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
            self._index_paper(db, row["rowid"], merged.title, merged.abstract, merged.authors)

    @staticmethod
    def _row_to_paper(row: sqlite3.Row, fields: list[str] | None = None,
                      refs: list[str] | None = None) -> Paper:
        return Paper(id=row["id"], title=row["title"], abstract=row["abstract"],
                     abstract_source=row["abstract_source"], authors=json.loads(row["authors_json"]),
                     year=row["year"], venue=row["venue"], arxiv_id=row["arxiv_id"], doi=row["doi"],
                     s2_id=row["s2_id"], openalex_id=row["openalex_id"], url=row["url"],
                     fields=fields or [], references=refs or [])

    def get_papers(self, ids: Iterable[str]) -> list[Paper]:
        """Papers in the order asked; unknown ids raise NotFoundError naming them all."""
        ids = list(dict.fromkeys(ids))
        found = {}
        db = self.conn
        for pid in ids:
            row = db.execute("SELECT * FROM papers WHERE id=?", (pid,)).fetchone()
            if row:
                fields = [r[0] for r in db.execute(
                    "SELECT field_id FROM paper_fields WHERE paper_id=? ORDER BY field_id", (pid,))]
                refs = [r[0] for r in db.execute(
                    "SELECT cited_id FROM citations WHERE citing_id=?", (pid,))]
                found[pid] = self._row_to_paper(row, fields, refs)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"Unknown paper id(s): {', '.join(missing)}",
                                "Search the store or import the paper first.")
        return [found[i] for i in ids]

    def get_paper(self, pid: str) -> Paper:
        return self.get_papers([pid])[0]

    def paper_choices(self, limit: int = 5000) -> dict[str, str]:
        """id -> title, newest first, in one query (for pickers)."""
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT id, title FROM papers ORDER BY year DESC, title LIMIT ?", (limit,))}

    def paper_exists(self, pid: str) -> bool:
        return self.conn.execute("SELECT 1 FROM papers WHERE id=?", (pid,)).fetchone() is not None

    # -- researchers ---------------------------------------------------------
    def upsert_researchers(self, researchers: Iterable[Researcher], origin: str = "") -> ImportSummary:
        """Insert or update researchers; authorship rows to papers not in the store are
        rejected, so import the papers first (in the same transaction is fine)."""
        summary = ImportSummary()
        with self.transaction() as db:
            for r in researchers:
                if not (r.name or "").strip():
                    raise InputError(f"researcher {r.id or '(no id)'} has no name")
                row = db.execute("SELECT rowid FROM researchers WHERE id=?", (r.id,)).fetchone()
                if row is None:
                    cur = db.execute(
                        "INSERT INTO researchers(id, name, affiliation, s2_id, openalex_id, origin) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (r.id, r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, origin))
                    rowid = cur.lastrowid
                    summary.added.append(r.id)
                else:
                    rowid = row[0]
                    db.execute("UPDATE researchers SET name=?, affiliation=COALESCE(NULLIF(?, ''), "
                               "affiliation), s2_id=COALESCE(NULLIF(?, ''), s2_id), openalex_id="
                               "COALESCE(NULLIF(?, ''), openalex_id) WHERE id=?",
                               (r.name.strip(), r.affiliation, r.s2_id, r.openalex_id, r.id))
                    summary.merged[r.id] = r.id
                row = db.execute("SELECT name, affiliation FROM researchers WHERE rowid=?",
                                 (rowid,)).fetchone()  # what the table now holds
                db.execute("DELETE FROM researchers_fts WHERE rowid=?", (rowid,))
                db.execute("INSERT INTO researchers_fts(rowid, name, affiliation) VALUES (?, ?, ?)",
                           (rowid, row[0], row[1]))
                for f in r.fields:
                    db.execute("INSERT OR IGNORE INTO researcher_fields VALUES (?, ?)", (r.id, f))
                for pid in r.publication_ids:
                    real = self._resolve_paper_id(db, pid)
                    if real is None:
                        raise NotFoundError(f"researcher {r.name}: unknown paper id {pid}")
                    db.execute("INSERT OR IGNORE INTO authorship VALUES (?, ?)", (r.id, real))
        return summary

    def _resolve_paper_id(self, db, pid: str) -> str | None:
        if db.execute("SELECT 1 FROM papers WHERE id=?", (pid,)).fetchone():
            return pid
        return None

    def get_researchers(self, ids: Iterable[str]) -> list[Researcher]:
        ids = list(dict.fromkeys(ids))
        db = self.conn
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
        return self.conn.execute("SELECT 1 FROM researchers WHERE id=?", (rid,)).fetchone() is not None

    def researcher_names(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> name for display; ids the store does not know map to themselves."""
        return {i: (row[0] if (row := self.conn.execute(
            "SELECT name FROM researchers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def paper_titles(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> title for display; unknown ids map to themselves."""
        return {i: (row[0] if (row := self.conn.execute(
            "SELECT title FROM papers WHERE id=?", (i,)).fetchone()) else i) for i in ids}

    def all_researcher_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM researchers ORDER BY name")]

    def publications(self, researcher_id: str) -> list[Paper]:
        """A researcher's papers, newest first."""
        return self.get_papers(self.get_researcher(researcher_id).publication_ids)

    def authors_of(self, paper_ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for pid in paper_ids:
            out[pid] = [r[0] for r in self.conn.execute(
                "SELECT researcher_id FROM authorship WHERE paper_id=?", (pid,))]
        return out

    # -- search --------------------------------------------------------------
    @staticmethod
    def _fts_query(text: str) -> str:
        """Turn free text into a safe FTS5 query: quoted words, the last one a prefix
        (the user may still be typing it)."""
        words = re.findall(r"\w+", text or "", flags=re.UNICODE)[:12]
        return " ".join(f'"{w}"' + ("*" if i == len(words) - 1 else "") for i, w in enumerate(words))

    def search_papers(self, text: str = "", fields: Iterable[str] = (), limit: int = 50,
                      offset: int = 0) -> list[Paper]:
        fields = list(fields)
        params: list[object] = []
        field_sql = ""
        if fields:
            # EXISTS lets SQLite walk papers in (year, title) order and stop after `limit`.
            field_sql = (" AND EXISTS (SELECT 1 FROM paper_fields pf WHERE pf.paper_id=p.id AND "
                         f"pf.field_id IN ({', '.join('?' * len(fields))}))")
        q = self._fts_query(text)
        if q:
            # Rank at most FTS_WINDOW matches (the most recently added that pass the field
            # filter): ranking every match of a very common word in a large store costs
            # ~100 ms; this keeps queries under 50 ms.
            sql = ("WITH hits AS (SELECT f.rowid AS rid, f.rank AS rank FROM papers_fts f "
                   f"JOIN papers p ON p.rowid=f.rowid WHERE papers_fts MATCH ?{field_sql} "
                   "ORDER BY f.rowid DESC LIMIT ?) "
                   "SELECT p.* FROM hits JOIN papers p ON p.rowid=hits.rid "
                   "ORDER BY hits.rank LIMIT ? OFFSET ?")
            params = [q, *fields, FTS_WINDOW, limit, offset]
        else:
            sql = (f"SELECT p.* FROM papers p WHERE 1=1{field_sql} "
                   "ORDER BY p.year DESC, p.title LIMIT ? OFFSET ?")
            params = [*fields, limit, offset]
        rows = self.conn.execute(sql, params).fetchall()
        return self._with_fields(rows)

    def _with_fields(self, rows) -> list[Paper]:
        out = []
        for row in rows:
            fields = [r[0] for r in self.conn.execute(
                "SELECT field_id FROM paper_fields WHERE paper_id=? ORDER BY field_id", (row["id"],))]
            out.append(self._row_to_paper(row, fields))
        return out

    def search_researchers(self, text: str = "", fields: Iterable[str] = (),
                           limit: int = 50) -> list[Researcher]:
        fields = list(fields)
        field_sql = ""
        if fields:
            field_sql = (f" AND r.id IN (SELECT researcher_id FROM researcher_fields WHERE field_id "
                         f"IN ({', '.join('?' * len(fields))}))")
        q = self._fts_query(text)
        db = self.conn
        if q:
            rows = db.execute("SELECT r.* FROM researchers_fts f JOIN researchers r ON r.rowid=f.rowid "
                              f"WHERE researchers_fts MATCH ?{field_sql} ORDER BY f.rank LIMIT ?",
                              [q, *fields, limit]).fetchall()
        else:
            rows = db.execute(f"SELECT r.* FROM researchers r WHERE 1=1{field_sql} ORDER BY r.name "
                              "LIMIT ?", [*fields, limit]).fetchall()
        return [self._row_to_researcher(db, r) for r in rows]

    def counts(self) -> dict[str, int]:
        db = self.conn
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("papers", "researchers", "fields", "runs", "profiles", "llm_cache",
                          "embedding_cache", "http_cache", "ratings")}

    # -- LLM cache -----------------------------------------------------------
    def llm_cache_get(self, key: str) -> dict | None:
        row = self.conn.execute("SELECT response, prompt_tokens, completion_tokens FROM llm_cache "
                                "WHERE key=?", (key,)).fetchone()
        if not row:
            return None
        return {"text": row[0], "prompt_tokens": row[1], "completion_tokens": row[2]}

    def llm_cache_put(self, key: str, model: str, text: str, prompt_tokens: int,
                      completion_tokens: int) -> None:
        self.conn.execute("INSERT OR REPLACE INTO llm_cache(key, model, response, prompt_tokens, "
                          "completion_tokens) VALUES (?, ?, ?, ?, ?)",
                          (key, model, text, prompt_tokens, completion_tokens))

    # -- embedding cache -----------------------------------------------------
    @staticmethod
    def text_hash(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def embeddings_get(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        out = {}
        for t in texts:
            row = self.conn.execute("SELECT vector FROM embedding_cache WHERE model=? AND text_hash=?",
                                    (model, self.text_hash(t))).fetchone()
            if row:
                out[t] = np.frombuffer(row[0], dtype=np.float32)
        return out

    def embeddings_put(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self.transaction() as db:
            for t, v in items.items():
                v = np.asarray(v, dtype=np.float32)
                db.execute("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?)",
                           (model, self.text_hash(t), int(v.shape[0]), v.tobytes()))

    # -- HTTP cache (for paper sources) ---------------------------------------
    HTTP_CACHE_DAYS = 7  # papers change rarely; a week keeps repeated imports offline-fast

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT body FROM http_cache WHERE key=? AND created_at >= "
                                "datetime('now', ?)", (key, f"-{self.HTTP_CACHE_DAYS} days")).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO http_cache(key, body, created_at) VALUES "
                          "(?, ?, datetime('now'))", (key, value))

    # -- profiles --------------------------------------------------------------
    def profile_get(self, researcher_id: str, model: str, papers_key: str) -> str | None:
        row = self.conn.execute("SELECT text FROM profiles WHERE researcher_id=? AND model=? AND "
                                "papers_key=?", (researcher_id, model, papers_key)).fetchone()
        return row[0] if row else None

    def profile_put(self, researcher_id: str, model: str, papers_key: str, text: str,
                    paper_ids: list[str]) -> None:
        self.conn.execute("INSERT OR REPLACE INTO profiles(researcher_id, model, papers_key, text, "
                          "paper_ids_json) VALUES (?, ?, ?, ?, ?)",
                          (researcher_id, model, papers_key, text, json.dumps(paper_ids)))

    # -- runs ------------------------------------------------------------------
    def save_run(self, run: Run, title: str = "", create: bool = True) -> bool:
        """Insert or update a run; with create=False only an existing row is updated
        (a run deleted meanwhile stays deleted). Returns whether a row was written."""
        data = run.to_dict()
        sim = run.similarity.mean if run.similarity else None
        score = run.meta_review.score if run.meta_review else None
        if not title:
            title = (run.proposal.q1[:160] if run.proposal and run.proposal.q1 else "")
        values = (run.status, title, score, sim, json.dumps(data["config"]), json.dumps(data))
        if not create:
            return self.conn.execute(
                "UPDATE runs SET status=?, title=?, mean_score=?, similarity=?, config_json=?, "
                "result_json=? WHERE id=?", (*values, run.id)).rowcount > 0
        self.conn.execute(
            "INSERT INTO runs(id, created_at, model, mode, status, title, mean_score, similarity, "
            "config_json, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO "
            "UPDATE SET status=excluded.status, title=excluded.title, mean_score=excluded.mean_score,"
            " similarity=excluded.similarity, config_json=excluded.config_json, "
            "result_json=excluded.result_json",
            (run.id, run.created_at, run.config.model, run.config.mode, *values))
        return True

    def mark_interrupted(self) -> int:
        """Runs left 'running' by a process that ended: call once when a process starts."""
        ids = [r[0] for r in self.conn.execute("SELECT id FROM runs WHERE status='running'")]
        for rid in ids:
            run = self.load_run(rid)
            run.status = "interrupted"
            self.save_run(run, create=False)
        return len(ids)

    def load_run(self, run_id: str) -> Run:
        row = self.conn.execute("SELECT result_json FROM runs WHERE id=?", (run_id,)).fetchone()
        if not row:
            raise NotFoundError(f"Unknown run id: {run_id}", "Pick a run from the history list.")
        return Run.from_dict(json.loads(row[0]))

    def list_runs(self, text: str = "", status: str = "", limit: int = 200) -> list[dict]:
        sql = ("SELECT id, created_at, status, title, model, mode, mean_score, similarity FROM runs "
               "WHERE 1=1")
        params: list[object] = []
        if text:
            like = "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"
            sql += " AND (title LIKE ? ESCAPE '\\' OR model LIKE ? ESCAPE '\\')"
            params += [like, like]
        if status:
            sql += " AND status=?"
            params.append(status)
        sql += " ORDER BY created_at DESC LIMIT ?"
        params.append(limit)
        return [dict(r) for r in self.conn.execute(sql, params)]

    def delete_run(self, run_id: str) -> bool:
        return self.conn.execute("DELETE FROM runs WHERE id=?", (run_id,)).rowcount > 0

    # -- ratings (human evaluation) ---------------------------------------------
    def add_rating(self, run_id: str, rater: str, kind: str, value: float | None,
                   comment: str = "", other_run_id: str | None = None) -> int:
        if not self.conn.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone():
            raise NotFoundError(f"Unknown run id: {run_id}")
        cur = self.conn.execute("INSERT INTO ratings(run_id, rater, kind, value, other_run_id, "
                                "comment) VALUES (?, ?, ?, ?, ?, ?)",
                                (run_id, rater, kind, value, other_run_id, comment))
        return int(cur.lastrowid)

    def ratings(self, run_id: str) -> list[dict]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM ratings WHERE run_id=? ORDER BY id",
                                                   (run_id,))]

    # -- cache maintenance -------------------------------------------------------
    def cache_sizes(self) -> dict[str, int]:
        db = self.conn
        return {name: db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                for name in ("llm_cache", "embedding_cache", "http_cache", "profiles")}

    def clear_caches(self, which: Iterable[str] = ("llm_cache", "embedding_cache", "http_cache",
                                                   "profiles")) -> None:
        allowed = {"llm_cache", "embedding_cache", "http_cache", "profiles"}
        with self.transaction() as db:
            for name in which:
                if name not in allowed:
                    raise InputError(f"not a cache: {name}")
                db.execute(f"DELETE FROM {name}")


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def open_store(path: Path | str | None = None) -> Store:
    """The store at `path` (default: the user data folder), migrated and ready."""
    p = Path(path) if path else config.db_path()
    with _STORES_LOCK:
        key = str(p.resolve())
        if key not in _STORES:
            _STORES[key] = Store(p)
        return _STORES[key]
