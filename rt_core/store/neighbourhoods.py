"""The neighbourhood each browser was building, kept so a reload does not lose it.

A reload is a new Streamlit session, and the session's state goes with the old one; the
researchers and papers someone picked over ten minutes should not. The store keeps the
newest selection of each browser under its owner hash (the same hash its runs carry),
so only that browser gets it back: nothing here is listed, shared or exported.
"""
from __future__ import annotations

import json
import time

from .db import Database


class KeptNeighbourhoods:
    def __init__(self, db: Database):
        self.db = db

    def keep(self, owner_hash: str, researcher_ids: list[str], paper_ids: list[str]) -> None:
        """Replace what this browser had kept with this selection."""
        if not owner_hash:
            return
        self.db.conn.execute(
            "INSERT INTO kept_neighbourhoods(owner_hash, researcher_ids, paper_ids, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(owner_hash) DO UPDATE SET researcher_ids=excluded.researcher_ids, "
            "paper_ids=excluded.paper_ids, updated_at=excluded.updated_at",
            (owner_hash, json.dumps(list(researcher_ids)), json.dumps(list(paper_ids)), time.time()))

    def kept(self, owner_hash: str) -> tuple[list[str], list[str]]:
        """This browser's kept selection (researcher ids, paper ids); empty lists when none."""
        row = self.db.conn.execute(
            "SELECT researcher_ids, paper_ids FROM kept_neighbourhoods WHERE owner_hash=?",
            (owner_hash,)).fetchone() if owner_hash else None
        if row is None:
            return [], []
        return list(json.loads(row[0])), list(json.loads(row[1]))
