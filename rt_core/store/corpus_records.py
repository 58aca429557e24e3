"""The records visitors of a shared server added (corpus_imports.py): the operator's list of
them, with who added each, and publishing, which makes one shared with everybody.

Publishing keeps a record's id (the visitor's runs name it) and only clears its `added_by`;
a researcher is published with the papers the same visitor added for them, so a shared
researcher never points at papers nobody else can see.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..access import may_publish_records
from ..errors import InputError
from .search import marks

KINDS = ("paper", "researcher")


class CorpusRecords:
    """The concrete `Corpus` provides `db` and `scope`."""

    def visitors_records(self, limit: int = 200) -> list[dict]:
        """Papers and researchers added by visitors and not published, newest first: each
        {kind, id, label, added_by, added_at}: everybody's for a scope that may publish
        them (the operator's), else only this visitor's own."""
        owner = "" if may_publish_records(self.scope) else self.owner_literal(self.scope.owner_hash)
        if not owner and not may_publish_records(self.scope):
            return []
        who = f"='{owner}'" if owner else "!=''"
        rows = self.db.conn.execute(
            f"SELECT 'paper' AS kind, id, title AS label, added_by, added_at FROM papers "
            f"WHERE added_by{who} UNION ALL SELECT 'researcher', id, name, added_by, added_at "
            f"FROM researchers WHERE added_by{who} ORDER BY added_at DESC, kind, id LIMIT ?",
            (limit,)).fetchall()
        return [dict(r) for r in rows]

    def added_by(self, kind: str, ids: Iterable[str]) -> dict[str, str]:
        """id -> the owner hash that added it ('' for shared), for the ids this scope sees."""
        table = _table(kind)
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        alias = table[0]
        return {r[0]: r[1] for r in self.db.conn.execute(
            f"SELECT {alias}.id, {alias}.added_by FROM {table} {alias} WHERE {alias}.id IN "
            f"({marks(ids)}){self._see(alias)}", ids)}

    def publish(self, kind: str, ids: Iterable[str]) -> int:
        """Share these records with everybody (the page asked access.may(PUBLISH) first);
        how many records became shared, papers published with a researcher included."""
        allowed = may_publish_records(self.scope)
        if not allowed:
            raise InputError(allowed.reason)
        table = _table(kind)
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        n = 0
        with self.db.transaction() as db:
            if table == "researchers":
                n += db.execute(
                    "UPDATE papers SET added_by='' WHERE added_by!='' AND id IN (SELECT a.paper_id "
                    "FROM authorship a JOIN researchers r ON r.id=a.researcher_id WHERE "
                    f"r.id IN ({marks(ids)}) AND r.added_by=papers.added_by)", ids).rowcount
            n += db.execute(f"UPDATE {table} SET added_by='' WHERE added_by!='' AND id IN "
                            f"({marks(ids)})", ids).rowcount
        return n


def _table(kind: str) -> str:
    if kind not in KINDS:
        raise InputError(f"unknown kind of record {kind!r}", f"Use one of {', '.join(KINDS)}.")
    return kind + "s"
