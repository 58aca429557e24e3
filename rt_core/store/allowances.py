"""What the shared demo's visitors have spent, per UTC day, kept where every app server sees it.

A Streamlit session forgets on a reload, and another app server behind the proxy never
knew: the count lives in the store instead, one row per visitor (their owner hash, never
the token) and one for the whole deployment (`EVERYONE`). Spending is added in place
(`tokens = tokens + ?` in an upsert), never read, summed and written back, so several
runs, threads and processes adding at once on SQLite or PostgreSQL lose nothing. What the
counts mean (how much is left, may a run start) is rt_core.allowance's to say.
"""
from __future__ import annotations

from .db import Database

EVERYONE = "*"  # the row of the whole deployment; an owner hash is hex, never this

_ADD = ("INSERT INTO demo_spending(day, who, tokens) VALUES (?, ?, ?) ON CONFLICT(day, who) "
        "DO UPDATE SET tokens = demo_spending.tokens + excluded.tokens")


class DemoSpending:
    def __init__(self, db: Database):
        self.db = db

    def add(self, day: str, owner_hash: str, tokens: int) -> None:
        """Add tokens a visitor's calls spent on `day` to their count and to the deployment's,
        both or neither."""
        if tokens <= 0:
            return
        with self.db.transaction() as conn:
            conn.execute(_ADD, (day, EVERYONE, int(tokens)))
            if owner_hash:
                conn.execute(_ADD, (day, owner_hash, int(tokens)))

    def spent(self, day: str, owner_hash: str) -> tuple[int, int]:
        """(this visitor's tokens, the whole deployment's tokens) spent on `day`."""
        rows = {r[0]: r[1] for r in self.db.conn.execute(
            "SELECT who, tokens FROM demo_spending WHERE day=? AND who IN (?, ?)",
            (day, owner_hash or EVERYONE, EVERYONE)).fetchall()}
        return (int(rows.get(owner_hash, 0)) if owner_hash else 0), int(rows.get(EVERYONE, 0))
