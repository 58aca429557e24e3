"""Comparisons of a finished run with a paper, made afterwards (table comparisons).

They sit beside the run, never in it: a run's reference is the one it was started with, and
a comparison with another paper changes nothing about the run, its similarity or the
studies made from it. Each comparison keeps its paper, where that paper's five answers came
from (pasted, restated, shipped summary or the abstract), its evaluator and the
per-question similarities, so several comparisons of one run can be listed side by side.
Answers pasted for a paper are stored in that paper's comparison and used nowhere else.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from ..types import Similarity
from .db import Database


@dataclass
class Comparison:
    id: str
    run_id: str
    paper_id: str
    similarity: Similarity
    created_at: str

    @property
    def source(self) -> str:
        return self.similarity.reference_source

    @property
    def evaluator(self) -> str:
        return self.similarity.evaluator or self.similarity.embedder


class Comparisons:
    def __init__(self, db: Database):
        self.db = db

    def add(self, run_id: str, paper_id: str, similarity: Similarity) -> Comparison:
        """Store one comparison; an earlier one, with this paper or another, stays."""
        made = Comparison(uuid.uuid4().hex[:12], run_id, paper_id, similarity,
                          datetime.now(UTC).isoformat(timespec="microseconds"))
        self.db.conn.execute(
            "INSERT INTO comparisons(id, run_id, paper_id, source, evaluator, mean, "
            "similarity_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (made.id, run_id, paper_id, made.source, made.evaluator, float(similarity.mean),
             json.dumps(similarity.to_dict()), made.created_at))
        return made

    def for_run(self, run_id: str) -> list[Comparison]:
        """The run's comparisons, oldest first (the order they were made in)."""
        rows = self.db.conn.execute(
            "SELECT id, run_id, paper_id, similarity_json, created_at FROM comparisons "
            "WHERE run_id=? ORDER BY created_at, id", (run_id,)).fetchall()
        return [Comparison(r["id"], r["run_id"], r["paper_id"],
                           Similarity.from_dict(json.loads(r["similarity_json"])), r["created_at"])
                for r in rows]
