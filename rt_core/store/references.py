"""A reference paper's five answers as evaluations use them (table reference_answers).

Two kinds are stored: `summary` (shipped with the starter community for its replay
targets, written for this app) and `restated` (written once by a capable model from the
paper's text). Pasted texts are not stored: they belong to one evaluation.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..types import Paper, Proposal
from .db import Database


@dataclass
class StoredReference:
    paper_id: str
    source: str  # "summary" or "restated"
    model: str
    answers: Proposal
    note: str = ""


def paper_text_hash(paper: Paper) -> str:
    """What a restatement read: the title and the abstract."""
    return hashlib.sha256(f"{paper.title}\n{paper.abstract}".encode()).hexdigest()[:16]


class References:
    def __init__(self, db: Database):
        self.db = db

    def put(self, paper_id: str, source: str, answers: Proposal, model: str = "",
            text_hash: str = "", note: str = "") -> None:
        data = {**answers.answers(), "missing": list(answers.missing)}
        self.db.conn.execute(
            "INSERT INTO reference_answers(paper_id, source, model, text_hash, answers_json, note) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(paper_id, source, model, text_hash) DO UPDATE "
            "SET answers_json=excluded.answers_json, note=excluded.note, created_at=datetime('now')",
            (paper_id, source, model, text_hash, json.dumps(data), note))

    def restated(self, paper: Paper) -> StoredReference | None:
        """The newest restatement of this paper's current text, by any model."""
        row = self.db.conn.execute(
            "SELECT * FROM reference_answers WHERE paper_id=? AND source='restated' AND "
            "text_hash=? ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (paper.id, paper_text_hash(paper))).fetchone()
        return self._row(row)

    def summary(self, paper_id: str) -> StoredReference | None:
        row = self.db.conn.execute("SELECT * FROM reference_answers WHERE paper_id=? AND "
                                   "source='summary' LIMIT 1", (paper_id,)).fetchone()
        return self._row(row)

    def all_with_answers(self) -> list[StoredReference]:
        """One five-answer set per paper (a restatement over a summary): the pool the
        chance band draws unrelated papers from."""
        rows = self.db.conn.execute(
            "SELECT * FROM reference_answers ORDER BY paper_id, source = 'restated' DESC, "
            "created_at DESC").fetchall()
        out: dict[str, StoredReference] = {}
        for row in rows:
            ref = self._row(row)
            if ref is not None and ref.paper_id not in out:
                out[ref.paper_id] = ref
        return list(out.values())

    @staticmethod
    def _row(row) -> StoredReference | None:
        if row is None:
            return None
        data = json.loads(row["answers_json"])
        return StoredReference(row["paper_id"], row["source"], row["model"],
                               Proposal.from_dict(data), row["note"])
