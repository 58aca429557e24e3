"""How far apart two fields are, judged by the store's graph as well as its domains.

Why not the domains alone (graph.field_distance): they say NLP and systems are both
"computing", but not that NLP papers cite astronomy papers a lot in one store and never in
another. Here the distance starts from the domain rule (0 same field, 0.5 same domain, 1
different domains) and shrinks with how strongly the graph links the two fields: papers
filed under both, citations from one to the other, researchers working in both. A pair the
graph links often is nearer than its domains say; a pair it never links keeps the domain
distance. Fields the store does not know (free-form names from an online source) are 0 from
themselves and 1 from anything else, unless a domain is given for them.

Used by suggestions (rt_core/suggest) and reviewer choice (an adjacent field by the graph).
"""
from __future__ import annotations

import math
import threading
import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..graph import field_distance as domain_distance

LINK_WEIGHT = 0.5  # how much the strongest possible graph link takes off the domain distance

_PAIRS_SQL = {
    # papers filed under both fields
    "papers": "SELECT a.field_id, b.field_id, count(*) FROM paper_fields a JOIN paper_fields b "
              "ON a.paper_id=b.paper_id AND a.field_id < b.field_id GROUP BY a.field_id, b.field_id",
    # a paper of one field citing a paper of the other
    "citations": "SELECT a.field_id, b.field_id, count(*) FROM citations c "
                 "JOIN paper_fields a ON a.paper_id=c.citing_id "
                 "JOIN paper_fields b ON b.paper_id=c.cited_id AND a.field_id <> b.field_id "
                 "GROUP BY a.field_id, b.field_id",
    # researchers working in both
    "researchers": "SELECT a.field_id, b.field_id, count(*) FROM researcher_fields a "
                   "JOIN researcher_fields b ON a.researcher_id=b.researcher_id "
                   "AND a.field_id < b.field_id GROUP BY a.field_id, b.field_id",
}


@dataclass
class FieldMap:
    """The store's fields, their domains and how often the graph links each pair."""

    domains: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    links: Counter = field(default_factory=Counter)  # frozenset({a, b}) -> links
    sizes: Counter = field(default_factory=Counter)  # field -> papers + researchers in it
    _between: dict = field(default_factory=dict, repr=False)  # (these, those) -> distance

    def copy(self) -> FieldMap:
        """A map to add fields to (online ones) without touching the store's cached one."""
        return FieldMap(dict(self.domains), dict(self.names), Counter(self.links),
                        Counter(self.sizes))

    def known(self, f: str) -> bool:
        return f in self.domains

    def name(self, f: str) -> str:
        return self.names.get(f, f)

    def affinity(self, a: str, b: str) -> float:
        """0 (never linked) to 1: links between the two, relative to the fields' sizes."""
        n = self.links.get(frozenset((a, b)), 0)
        if not n:
            return 0.0
        return min(1.0, n / math.sqrt(max(1, self.sizes.get(a, 1)) * max(1, self.sizes.get(b, 1))))

    def distance(self, a: str, b: str) -> float:
        """0 for one field, up to 1 for two fields of different domains the graph never links."""
        if a == b or a.casefold() == b.casefold():
            return 0.0
        base = domain_distance(a, b, self.domains)
        return round(base * (1.0 - LINK_WEIGHT * self.affinity(a, b)), 4)

    def distance_between(self, these: Iterable[str], those: Iterable[str]) -> float:
        """How far a set of fields is from another: each field's distance to the nearest of
        `those`, averaged. Someone in NLP and astronomy is 0.5 from an NLP seed, halfway: a
        bridge, not a stranger. 0 when either set is empty (nothing to be far from)."""
        key = (tuple(dict.fromkeys(these)), tuple(dict.fromkeys(those)))
        if key not in self._between:  # a ranking asks the same few pairs thousands of times
            a_set, b_set = key
            self._between[key] = round(sum(min(self.distance(a, b) for b in b_set)
                                           for a in a_set) / len(a_set), 4) \
                if a_set and b_set else 0.0
        return self._between[key]

    def adjacent(self, f: str, k: int = 3) -> list[str]:
        """Up to k other known fields nearest to `f`, those the graph links first."""
        others = [g for g in self.domains if g != f]
        return sorted(others, key=lambda g: (self.distance(f, g), -self.affinity(f, g), g))[:k]


def read_field_map(db) -> FieldMap:
    """Build the map from the store's tables (three grouped queries)."""
    fm = FieldMap()
    for row in db.conn.execute("SELECT id, name, domain FROM fields"):
        fm.domains[row[0]], fm.names[row[0]] = row[2] or "", row[1] or row[0]
    for sql in _PAIRS_SQL.values():
        for a, b, n in db.conn.execute(sql):
            fm.links[frozenset((a, b))] += int(n)
    for table, who in (("paper_fields", "paper_id"), ("researcher_fields", "researcher_id")):
        for f, n in db.conn.execute(f"SELECT field_id, count(DISTINCT {who}) FROM {table} "
                                    "GROUP BY field_id"):
            fm.sizes[f] += int(n)
    return fm


_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
DRIFT = 0.05  # papers added since the map was read, as a share, before it is read again


def _version(db) -> tuple:
    """What the map depends on: the fields, who works in which, and how many papers."""
    count = db.conn.execute("SELECT (SELECT count(*) FROM fields), "
                            "(SELECT count(*) FROM researcher_fields), "
                            "(SELECT count(*) FROM papers)").fetchone()
    return int(count[0]), int(count[1]), int(count[2])


def _still_good(held: tuple, now: tuple) -> bool:
    """Reading the map costs seconds at 100k papers (the citations between fields), and a
    few new papers barely move how fields link: the map is read again when the fields
    change, or when the papers (or researchers' fields) grew or shrank by DRIFT."""
    if held[0] != now[0]:
        return False
    return all(abs(n - h) <= DRIFT * max(h, 1) for h, n in zip(held[1:], now[1:], strict=True))


def field_map(store) -> FieldMap:
    """The store's field map, read again only when it may have moved (see `_still_good`)."""
    now = _version(store.db)
    with _lock:
        held = _cache.get(store)
        if held is not None and (held[0] == now or _still_good(held[0], now)):
            return held[1]
    fm = read_field_map(store.db)
    with _lock:
        _cache[store] = (now, fm)
    return fm
