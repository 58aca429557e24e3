"""The operator's live sessions, kept in the store so that every app server sharing it
agrees on which are live, and a sign-out on one ends the session on all of them. Only the
hash of a session's id is kept; the signature that makes it valid is never stored."""
from __future__ import annotations

import time

from .db import Database


class OperatorSessions:
    def __init__(self, db: Database):
        self.db = db

    def add(self, id_hash: str) -> None:
        self.db.conn.execute("INSERT INTO operator_sessions(id_hash, created_at) VALUES (?, ?)",
                             (id_hash, time.time()))

    def live(self, id_hash: str, since: float) -> bool:
        """Made at or after `since` (older ones have expired) and not revoked."""
        row = self.db.conn.execute(
            "SELECT created_at FROM operator_sessions WHERE id_hash=? AND revoked_at IS NULL",
            (id_hash,)).fetchone()
        return row is not None and row[0] >= since

    def revoke(self, id_hash: str) -> None:
        self.db.conn.execute("UPDATE operator_sessions SET revoked_at=? WHERE id_hash=? AND revoked_at IS NULL",
                             (time.time(), id_hash))
