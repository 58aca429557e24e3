"""Each paper's facets, kept once per paper and per way of finding them (migration m023).

The store keeps the JSON document `run/facets/extract.py` makes and hands it back; what a
facet is, and how one is found, is decided there, not here."""
from __future__ import annotations

import json

from .db import Database


class PaperFacetStore:
    def __init__(self, db: Database):
        self.db = db

    def get(self, paper_ids: list[str], version: str) -> dict[str, dict]:
        """The kept documents of these papers for this version, by paper id."""
        out: dict[str, dict] = {}
        ids = list(dict.fromkeys(paper_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for pid, doc in self.db.conn.execute(
                    f"SELECT paper_id, facets_json FROM paper_facets WHERE version=? "
                    f"AND paper_id IN ({marks})", (version, *chunk)):
                out[pid] = json.loads(doc)
        return out

    def put(self, version: str, docs: dict[str, dict]) -> None:
        """Keep (or replace) the documents of these papers for this version. What older rules
        found for the same papers goes in the same transaction: the version is a digest of the
        rules' source (run/facets/extract.py), so those rows would never be read again."""
        if not docs:
            return
        with self.db.transaction() as conn:
            conn.executemany("DELETE FROM paper_facets WHERE paper_id=? AND version<>?",
                             [(pid, version) for pid in docs])
            conn.executemany(
                "INSERT INTO paper_facets(paper_id, version, facets_json) VALUES (?, ?, ?) "
                "ON CONFLICT(paper_id, version) DO UPDATE SET facets_json=excluded.facets_json",
                [(pid, version, json.dumps(doc)) for pid, doc in docs.items()])
