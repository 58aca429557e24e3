"""What links a candidate to the other side: a paper written together, a citation one way or
the other, or a paper both sides cite. Each link is named (the paper, the person), so the
reader can check it; their weighted count is the score's "bridges" part.

The other side is the seed (its researcher, or a paper and its authors) when there is one;
without a seed, the topic's other researchers who share no field with the candidate.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from .candidates import Pool

WEIGHTS = {"co-author": 1.0, "cites": 0.75, "cited by": 0.75, "both cite": 0.5}
FULL = 2.0  # this much bridge weight (two co-authored papers, four shared references) is a full part
SHOWN = 3  # bridges named per suggestion


@dataclass(frozen=True)
class Bridge:
    kind: str  # a key of WEIGHTS
    paper_id: str  # the paper written together, cited, citing, or cited by both
    paper_title: str
    other_id: str  # who on the other side it links to ("" for a seed paper itself)
    other_name: str

    def to_dict(self) -> dict:
        return asdict(self)


def bridge_strength(bridges: Iterable[Bridge]) -> float:
    return round(min(1.0, sum(WEIGHTS[b.kind] for b in bridges) / FULL), 4)


def side_papers(pool: Pool, people: set[str], papers: Iterable[str] = ()) -> set[str]:
    """The papers of a side: those its people wrote (as far as the pool read) and `papers`."""
    out = set(papers)
    for rid in people:
        if rid in pool.people:
            out.update(pool.people[rid].papers)
    return out


def researcher_bridges(pool: Pool, rid: str, side_people: set[str],
                       side: set[str]) -> list[Bridge]:
    """Every link from researcher `rid` to the side (its people and `side_papers`),
    strongest kind first. The sets are shared between candidates, never copied: at 100k
    papers a side holds ~10k papers and the pool ~1,000 candidates."""
    mine = set(pool.people[rid].papers)
    found: dict[tuple, Bridge] = {}

    def theirs(q: str) -> bool:
        return q in side and q not in mine

    def add(kind: str, paper: str, other_paper: str | None) -> None:
        other = _side_author(pool, other_paper or paper, side_people, rid)
        key = (kind, paper, other)
        if key not in found:
            found[key] = Bridge(kind, paper, _title(pool, paper), other,
                                pool.people[other].name if other in pool.people else "")

    for p in sorted(mine):
        for a in pool.authors.get(p, []):
            if a != rid and a in side_people:
                add("co-author", p, None)
        refs = pool.refs.get(p, ())
        for q in refs:
            if theirs(q):
                add("cites", q, q)
        for q in pool.cited_by.get(p, ()):
            if theirs(q):
                add("cited by", q, q)
        for r in refs:
            if r not in mine and r not in side:
                q = next((q for q in pool.cited_by.get(r, ()) if theirs(q)), None)
                if q is not None:
                    add("both cite", r, q)
    return sorted(found.values(), key=lambda b: (-WEIGHTS[b.kind], b.paper_id, b.other_id))


def titled(pool: Pool, bridges: list[Bridge]) -> list[Bridge]:
    """The bridges with their papers' titles (read once a bridge is to be shown:
    candidates.ensure_works)."""
    return [replace(b, paper_title=_title(pool, b.paper_id)) for b in bridges]


def paper_bridges(pool: Pool, pid: str) -> tuple[list[Bridge], list[str]]:
    """The links of a paper to fields other than its own (authors from elsewhere, papers of
    other fields it cites or that cite it), and every field it touches."""
    own = set(pool.works[pid].fields) if pid in pool.works else set()
    touched = set(own)
    out: list[Bridge] = []
    for a in pool.authors.get(pid, []):
        theirs = set(pool.people[a].fields) if a in pool.people else set()
        touched |= theirs
        if theirs and not theirs & own:
            out.append(Bridge("co-author", pid, _title(pool, pid), a, pool.people[a].name))
    for kind, others in (("cites", pool.refs.get(pid, ())),
                         ("cited by", pool.cited_by.get(pid, ()))):
        for q in others:
            theirs = set(pool.works[q].fields) if q in pool.works else set()
            touched |= theirs
            if theirs and not theirs & own:
                out.append(Bridge(kind, q, _title(pool, q), "", ""))
    return sorted(out, key=lambda b: (-WEIGHTS[b.kind], b.paper_id)), sorted(touched)


def _side_author(pool: Pool, paper: str, side_people: set[str], rid: str) -> str:
    for a in pool.authors.get(paper, []):
        if a in side_people and a != rid:
            return a
    return ""


def _title(pool: Pool, pid: str) -> str:
    return pool.works[pid].title if pid in pool.works else pid
