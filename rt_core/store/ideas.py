"""The rows of the bank of ideas (table `ideas`, migration m024): what each run wrote, kept
where all runs' ideas can be read together.

The rows are written in one place for a run, `write_run`, which `Runs.create` and
`Runs.update` call in the same transaction as the run's own row, so no stage has to
remember the bank and the bank never disagrees with a saved run. A steered version is saved
by rt_core/run/steer/table.py, which calls `write_version` beside its own row. Meaning is
added above the store (rt_core/ideas/seen.py embeds the texts and records `seen_before`):
the store imports no model code.

An idea's id is `<run id>:<version>`, the version being `proposal`, a candidate's id
(`c2`), `round<N>` for a revision round, or a steered version's id. What it says (its five
answers) decides `text_hash`; rewriting an idea with the same text keeps its vector and its
`seen_before`, new text clears both so they are computed again. The star and the note are
the user's and are never touched by a rewrite.
"""
from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass

import numpy as np

from ..fiveq import QUESTION_KEYS
from ..types import Candidate, Run
from .db import Database
from .search import marks

CONTENT = ("run_id", "version", "kind", "parent", "created_at", "model", "mode", "researcher_ids_json",
           "paper_ids_json", "fields_json", "answers_json", "q1", "body", "score", "closest_paper",
           "merged_into", "text_hash")
LIGHT = "i.id, i.run_id, i.created_at, i.group_id, i.seen_before, i.seq"
FULL = ("i.id, i.run_id, i.version, i.kind, i.parent, i.created_at, i.model, i.mode, i.researcher_ids_json, "
        "i.paper_ids_json, i.fields_json, i.answers_json, i.q1, i.score, i.closest_paper, i.merged_into, "
        "i.seen_before, i.seen_similarity, i.group_id, i.starred, i.note")


def idea_id(run_id: str, version: str) -> str:
    return f"{run_id}:{version}"


def _body(answers: dict[str, str]) -> str:
    """The words of the five answers, lower-cased and single-spaced: what word search reads."""
    return " ".join(re.findall(r"\w+", " ".join(answers.values()).lower()))


def _closest(novelty) -> float | None:
    sims = [n.similarity for f in novelty.facets for n in f.nearest] if novelty else []
    return max(sims) if sims else None


def _fields(conn, researcher_ids: list[str]) -> list[str]:
    if not researcher_ids:
        return []
    return sorted({r[0] for r in conn.execute(
        f"SELECT DISTINCT field_id FROM researcher_fields WHERE researcher_id IN ({marks(researcher_ids)})",
        list(researcher_ids))})


@dataclass(frozen=True)
class _Row:
    version: str
    kind: str
    answers: dict
    score: float | None = None
    closest: float | None = None
    parent: str = ""
    merged_into: str = ""
    fields: tuple[str, ...] = ()
    researchers: tuple[str, ...] = ()
    papers: tuple[str, ...] = ()
    created_at: str = ""


def _has_text(answers: dict) -> bool:
    return bool(answers.get("q1") or answers.get("q5"))


def _candidate_row(conn, c: Candidate) -> _Row:
    lead = c.lead
    fields = tuple(sorted(set(lead.fields) | set(_fields(conn, lead.author_ids))))
    score = c.meta_review.score if c.meta_review else None
    return _Row(c.id, "candidate", c.proposal.answers(), score, _closest(c.novelty), merged_into=c.merged_into,
                fields=fields, researchers=tuple(lead.author_ids), papers=tuple(lead.paper_ids))


def rows_of(conn, run: Run) -> list[_Row]:
    """Every candidate (a merged near-duplicate too: it says which it was merged into), else
    the run's proposal (a brainstorm's proposal is its winning candidate, already there), then
    each revision round after the first proposal (round 0 is that proposal)."""
    out = [_candidate_row(conn, c) for c in run.candidates if _has_text(c.proposal.answers())]
    if not out and run.proposal is not None and _has_text(run.proposal.answers()):
        score = run.meta_review.score if run.meta_review else None
        out.append(_Row("proposal", "proposal", run.proposal.answers(), score, _closest(run.novelty)))
    best = run.tournament.order[0] if run.tournament and run.tournament.order else ""
    first = best or (out[0].version if out else "proposal")
    for r in run.rounds[1:]:
        if _has_text(r.proposal.answers()):
            score = r.meta_review.score if r.meta_review else None
            out.append(_Row(f"round{r.number}", "round", r.proposal.answers(), score, parent=first))
    return out


def write_run(conn, run: Run) -> int:
    """Write (or rewrite) the ideas of one run; returns how many it holds. Called in the
    transaction that saves the run."""
    cfg = run.config
    hood = _fields(conn, cfg.researcher_ids)
    rows = rows_of(conn, run)
    for row in rows:
        _put(conn, run.id, row, run.created_at, cfg.model, cfg.mode, hood, cfg.researcher_ids, cfg.paper_ids)
    return len(rows)


def write_version(conn, run_id: str, vid: str, parent: str, answers: dict, score: float | None,
                  created_at: str) -> bool:
    """Write one steered version as an idea of its run (its neighbourhood, model and mode are
    the run's); False when the run is not stored."""
    run = conn.execute("SELECT model, mode, config_json FROM runs WHERE id=?", (run_id,)).fetchone()
    if run is None or not _has_text(answers):
        return False
    cfg = json.loads(run[2])
    rids, pids = cfg.get("researcher_ids") or [], cfg.get("paper_ids") or []
    row = _Row(vid, "version", {k: answers.get(k, "") for k in QUESTION_KEYS}, score, parent=parent,
               created_at=created_at)
    _put(conn, run_id, row, created_at, run[0], run[1], _fields(conn, rids), rids, pids)
    return True


def _put(conn, run_id: str, row: _Row, created_at: str, model: str, mode: str, hood: list[str],
         researchers: list[str], papers: list[str]) -> None:
    answers = {k: row.answers.get(k, "") or "" for k in QUESTION_KEYS}
    text_hash = hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest()[:16]
    values = (run_id, row.version, row.kind, row.parent, row.created_at or created_at or "", model, mode,
              json.dumps(list(row.researchers) or list(researchers)), json.dumps(list(row.papers) or list(papers)),
              json.dumps(list(row.fields) or list(hood)), json.dumps(answers), answers["q1"], _body(answers),
              row.score, row.closest, row.merged_into, text_hash)
    changed = "ideas.text_hash <> excluded.text_hash"
    conn.execute(
        # seq: the order of first writes (a rewrite keeps it), for "which came first" when
        # two runs share a second; concurrent writers may tie, and then created_at and id decide.
        f"INSERT INTO ideas(id, {', '.join(CONTENT)}, seq) VALUES (?, {marks(list(CONTENT))}, "
        "(SELECT COALESCE(MAX(seq), 0) + 1 FROM ideas)) "
        f"ON CONFLICT(id) DO UPDATE SET {', '.join(f'{c}=excluded.{c}' for c in CONTENT)}, "
        f"vector=CASE WHEN {changed} THEN NULL ELSE ideas.vector END, "
        f"vector_model=CASE WHEN {changed} THEN '' ELSE ideas.vector_model END, "
        f"seen_before=CASE WHEN {changed} THEN NULL ELSE ideas.seen_before END, "
        f"seen_similarity=CASE WHEN {changed} THEN NULL ELSE ideas.seen_similarity END, "
        f"group_id=CASE WHEN {changed} THEN NULL ELSE ideas.group_id END",
        (idea_id(run_id, row.version), *values))


def backfill(conn) -> int:
    """Read every stored run and steered version into the bank (migration m024, and a store
    copied from one made before it). Returns the ideas written."""
    n = 0
    for (data,) in conn.execute("SELECT result_json FROM runs ORDER BY created_at").fetchall():
        n += write_run(conn, Run.from_dict(json.loads(data)))
    for (data,) in conn.execute("SELECT version_json FROM run_versions ORDER BY created_at").fetchall():
        v = json.loads(data)  # a rt_core.run.steer.tree.Version as stored
        meta = v.get("meta_review") or {}
        n += write_version(conn, v.get("run_id", ""), v.get("id", ""), v.get("parent", ""),
                           v.get("proposal") or {}, meta.get("score"), v.get("created_at", ""))
    return n


@dataclass(frozen=True)
class Filters:
    """Which ideas: by model, field, least mean score, date (ISO text; `until` exclusive), star,
    one per group of near-duplicates, and words that must all occur in the answers."""
    model: str = ""
    field: str = ""
    min_score: float | None = None
    since: str = ""
    until: str = ""
    starred: bool = False
    one_per_group: bool = False
    words: tuple[str, ...] = ()


def _like(text: str) -> str:
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


def _where(f: Filters, runs: list[str] | None) -> tuple[str, list]:
    sql, params = ["1=1"], []
    for cond, value, on in (("i.model=?", f.model, bool(f.model)),
                            ("i.fields_json LIKE ? ESCAPE '\\'", _like(json.dumps(f.field)), bool(f.field)),
                            ("i.score >= ?", f.min_score, f.min_score is not None),
                            ("i.created_at >= ?", f.since, bool(f.since)),
                            ("i.created_at < ?", f.until, bool(f.until))):
        if on:
            sql.append(cond)
            params.append(value)
    if f.starred:
        sql.append("i.starred = 1")
    if f.one_per_group:  # the first of each group: it repeats nothing, and was merged into nothing
        sql.append("i.seen_before IS NULL AND i.merged_into = ''")
    for w in f.words:
        sql.append("i.body LIKE ? ESCAPE '\\'")
        params.append(_like(w.lower()))
    if runs is not None:
        sql.append(f"i.run_id IN ({marks(runs)})" if runs else "1=0")
        params += list(runs)
    return " AND ".join(sql), params


class Ideas:
    """Reading the bank, and the user's marks on it (star, note)."""

    def __init__(self, db: Database):
        self.db = db
        self._matrix: dict[str, tuple[str, list[str], np.ndarray]] = {}

    # -- reading --------------------------------------------------------------------------
    def select(self, f: Filters | None = None, runs: list[str] | None = None, limit: int | None = None,
               offset: int = 0) -> list[dict]:
        """Light rows (id, run_id, created_at, group_id, seen_before) of the ideas that pass the
        filters, newest first (a run's own ideas in their order), `limit` of them from `offset`.
        `runs`: only ideas of these runs (None: of any run)."""
        where, params = _where(f or Filters(), runs)
        sql = f"SELECT {LIGHT} FROM ideas i WHERE {where} ORDER BY i.created_at DESC, i.id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        return [dict(r) for r in self.db.conn.execute(sql, params)]

    def total(self, f: Filters | None = None, runs: list[str] | None = None) -> int:
        where, params = _where(f or Filters(), runs)
        return self.db.conn.execute(f"SELECT count(*) FROM ideas i WHERE {where}", params).fetchone()[0]

    def get(self, ids: list[str]) -> list[dict]:
        """Whole rows of these ideas, in the order asked (unknown ids left out)."""
        got: dict[str, dict] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            for r in self.db.conn.execute(f"SELECT {FULL} FROM ideas i WHERE i.id IN ({marks(chunk)})", chunk):
                got[r["id"]] = dict(r)
        return [got[i] for i in ids if i in got]

    def ids(self, f: Filters | None = None, runs: list[str] | None = None) -> list[str]:
        """Only the ids of `select`'s rows (a search's candidates: cheaper than whole rows)."""
        where, params = _where(f or Filters(), runs)
        return [r[0] for r in self.db.conn.execute(f"SELECT i.id FROM ideas i WHERE {where}", params)]

    def in_group(self, group_id: str, runs: list[str] | None = None, limit: int = 50) -> list[str]:
        """Ids of the ideas of one group of near-duplicates, the first first (at most `limit`)."""
        where, params = _where(Filters(), runs)
        return [r[0] for r in self.db.conn.execute(
            f"SELECT i.id FROM ideas i WHERE {where} AND (i.group_id=? OR i.id=?) ORDER BY i.seq, i.created_at, i.id "
            "LIMIT ?", [*params, group_id, group_id, limit])]

    def run_owners(self) -> dict[str, str]:
        """Run id to its owner hash ('' for none), for every stored run (an idea's run is one):
        what the access rule needs to know of each, in one query."""
        return {r[0]: r[1] or "" for r in self.db.conn.execute("SELECT id, owner_hash FROM runs")}

    def continued_in(self, iid: str) -> list[str]:
        """The runs started from this idea (their config's `from_idea`), oldest first."""
        return [r[0] for r in self.db.conn.execute(
            "SELECT id FROM runs WHERE json_extract(config_json, '$.from_idea') = ? ORDER BY created_at, id", (iid,))]

    def models(self) -> list[str]:
        """The models that wrote ideas (a filter's choices)."""
        return [r[0] for r in self.db.conn.execute("SELECT DISTINCT model FROM ideas ORDER BY model")]

    def count(self) -> int:
        return self.db.conn.execute("SELECT count(*) FROM ideas").fetchone()[0]

    # -- meaning (rt_core/ideas/seen.py computes it) ---------------------------------------
    def all_embedded(self, model: str) -> bool:
        """Whether every idea has a vector of `model` (two counts an index answers: the check
        each read of the bank makes before anything is embedded)."""
        conn = self.db.conn
        done = conn.execute("SELECT count(*) FROM ideas WHERE vector_model=?", (model,)).fetchone()[0]
        return done == conn.execute("SELECT count(*) FROM ideas").fetchone()[0]

    def pending(self, model: str, limit: int = 512) -> list[dict]:
        """Ideas without a vector of `model`, oldest first: id, run_id, created_at, answers. (A row
        without a vector has vector_model ''; `<` or `>` rather than `<>` lets the index answer.)"""
        rows = self.db.conn.execute(
            "SELECT id, run_id, created_at, answers_json FROM ideas WHERE (vector_model < ? OR vector_model > ?) "
            "ORDER BY created_at, id LIMIT ?", (model, model, limit)).fetchall()
        return [{**dict(r), "answers": json.loads(r["answers_json"])} for r in rows]

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.db.transaction() as conn:
            for iid, v in vectors.items():
                conn.execute("UPDATE ideas SET vector=?, vector_model=? WHERE id=?",
                             (np.asarray(v, dtype=np.float32).tobytes(), model, iid))
            self.db.set_meta("ideas_vectors", uuid.uuid4().hex)  # held matrices are stale

    def matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        """Every idea with a vector of `model`: ids and the (n, d) matrix, read again only when
        vectors were written since (`put_vectors` stamps the store; the page asks at every
        search). Ids of ideas deleted since may remain: callers keep only ids they listed."""
        stamp = self.db.get_meta("ideas_vectors") or ""
        held = self._matrix.get(model)
        if held and held[0] == stamp:
            return held[1], held[2]
        rows = self.db.conn.execute("SELECT id, vector FROM ideas WHERE vector_model=? ORDER BY id",
                                    (model,)).fetchall()
        ids = [r[0] for r in rows]
        m = (np.stack([np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows])
             if rows else np.zeros((0, 0), dtype=np.float32))
        self._matrix[model] = (stamp, ids, m)
        return ids, m

    def set_seen(self, iid: str, seen_before: str | None, similarity: float | None, group_id: str) -> None:
        self.db.conn.execute("UPDATE ideas SET seen_before=?, seen_similarity=?, group_id=? WHERE id=?",
                             (seen_before, similarity, group_id, iid))

    # -- the user's marks -----------------------------------------------------------------
    def star(self, iid: str, on: bool = True) -> bool:
        return self.db.conn.execute("UPDATE ideas SET starred=? WHERE id=?", (1 if on else 0, iid)).rowcount > 0

    def note(self, iid: str, text: str) -> bool:
        return self.db.conn.execute("UPDATE ideas SET note=? WHERE id=?", (text, iid)).rowcount > 0
