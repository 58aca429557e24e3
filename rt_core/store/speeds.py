"""How fast each model answered on this machine: one row per call that reached a model.

The time a run will take is estimated from these rows (rt_core/models/speeds.py), never
from constants, because the same model runs at very different speeds on different
machines and loads. Only the newest `KEEP` calls per model are kept: speeds drift with
the load, and an old row says little about the next run.
"""
from __future__ import annotations

import time

from ..models.speeds import CallTime
from .db import Database

KEEP = 500  # rows per model; enough for a fit, small enough to read on every estimate


class CallSpeeds:
    def __init__(self, db: Database):
        self.db = db
        self._written = 0

    def add(self, model: str, call: CallTime) -> None:
        self.db.conn.execute(
            "INSERT INTO call_speeds(model, at, prompt_tokens, completion_tokens, seconds, calibration) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (model, time.time() if call.at is None else call.at, call.prompt_tokens,
             call.completion_tokens, call.seconds, int(call.calibration)))
        self._written += 1
        if self._written % 50 == 0:  # now and then, not on every call
            self.prune(model)

    def prune(self, model: str) -> None:
        """Keep the newest KEEP rows of a model (a NULL bound, for fewer rows, deletes none)."""
        self.db.conn.execute(
            "DELETE FROM call_speeds WHERE model=? AND at < (SELECT at FROM call_speeds WHERE model=? "
            "ORDER BY at DESC LIMIT 1 OFFSET ?)", (model, model, KEEP))

    def between(self, model: str, start: float, end: float) -> list[CallTime]:
        """The calls of a model made between two times (epoch seconds): one run's calls."""
        rows = self.db.conn.execute(
            "SELECT prompt_tokens, completion_tokens, seconds, calibration, at FROM call_speeds "
            "WHERE model=? AND at >= ? AND at <= ? AND calibration=0", (model, start, end)).fetchall()
        return [_call(r) for r in rows]

    def recent(self, model: str, limit: int = 200) -> list[CallTime]:
        """The newest calls of a model, newest first."""
        rows = self.db.conn.execute(
            "SELECT prompt_tokens, completion_tokens, seconds, calibration, at FROM call_speeds "
            "WHERE model=? ORDER BY at DESC LIMIT ?", (model, limit)).fetchall()
        return [_call(r) for r in rows]


def _call(r) -> CallTime:
    """A row as a call: its tokens, seconds, whether it was a calibration, when it ended."""
    return CallTime(int(r[0]), int(r[1]), float(r[2]), bool(r[3]), float(r[4]))
