"""Who and what could meet on a topic: the papers whose meaning is near it, their authors,
and everything the bridges need to know about both (read in a few queries, never the whole
store).

Why by meaning: the paper vectors are already stored (store/paper_vectors.py), so a topic is
one matrix-vector product away from its nearest papers even at 100k papers; a researcher is
as close to the topic as their closest paper.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from ..errors import InputError, NotFoundError
from ..store.search import marks, words
from ..store.topics import MIN_SIMILARITY
from .fields import FieldMap

NEAREST = 300  # papers taken from the meaning ranking; their authors are the candidates
POOL_PEOPLE = 80  # the closest authors (best paper first) kept as candidates: reading their
#                   papers' citations is most of a suggestion's time at 100k papers (~3,000
#                   papers for 200 authors), and a limit of 8 (at most 50) needs far fewer
FILL = 256  # papers embedded per suggestion at most when vectors are missing (as the page's
#            search does): a store imported without vectors gains them a few seconds at a
#            time instead of one suggestion taking an hour
CHUNK = 500


@dataclass
class Person:
    id: str
    name: str
    affiliation: str = ""
    fields: list[str] = field(default_factory=list)
    papers: list[str] = field(default_factory=list)  # every paper of theirs that was read


@dataclass
class Work:
    id: str
    title: str
    year: int | None = None
    fields: list[str] = field(default_factory=list)


@dataclass
class Seed:
    """The side the suggestions should reach from: a researcher, or a paper and its authors."""
    id: str
    label: str
    kind: str  # "researcher" or "paper"
    people: set[str] = field(default_factory=set)
    papers: set[str] = field(default_factory=set)
    fields: list[str] = field(default_factory=list)


@dataclass
class Pool:
    """The topic's neighbourhood in the store, with the links between its members."""
    hits: dict[str, float]  # paper id -> cosine to the topic, best first
    works: dict[str, Work]  # every paper read (hits, the candidates' and the seed's papers)
    people: dict[str, Person]  # the hits' authors (and the seed's people)
    authors: dict[str, list[str]]  # paper id -> authors among `people`
    refs: dict[str, tuple[str, ...]]  # paper id -> papers it cites (for papers read), sorted
    cited_by: dict[str, tuple[str, ...]]  # paper id -> papers read that cite it, sorted


def _chunked(db, sql: str, ids: list[str], extra: tuple = ()) -> list:
    """Rows of `sql` (with `{marks}` for an IN list) for ids, 500 at a time."""
    rows = []
    for i in range(0, len(ids), CHUNK):
        chunk = ids[i:i + CHUNK]
        rows += db.conn.execute(sql.format(marks=marks(chunk)), [*chunk, *extra]).fetchall()
    return rows


def check_store(store) -> None:
    if not store.db.conn.execute("SELECT 1 FROM papers LIMIT 1").fetchone():
        raise InputError("The store has no papers yet, so there is no one to suggest.",
                         "Run `python -m rt_core init` for the starter community, or import "
                         "papers first.",
                         app_hint="Import papers or an author below, then ask again.")


def resolve_field(fmap: FieldMap, text: str) -> str:
    """A field id from its id or name (any case); InputError naming the known ones."""
    want = " ".join((text or "").split()).casefold()
    for fid, name in fmap.names.items():
        if want in (fid.casefold(), (name or "").casefold()):
            return fid
    known = ", ".join(sorted(fmap.names))
    raise InputError(f"No field called '{text}' in the store.", f"Known fields: {known}.")


def resolve_seed(store, seed_id: str) -> Seed:
    """The seed researcher or paper; NotFoundError when the store has neither."""
    sid = (seed_id or "").strip()
    corpus = store.corpus
    if corpus.researcher_exists(sid):
        r = corpus.get_researcher(sid)
        return Seed(sid, r.name, "researcher", {sid}, set(r.publication_ids), list(r.fields))
    if corpus.paper_exists(sid):
        p = corpus.get_paper(sid)
        people = set(corpus.authors_of([sid])[sid])
        fields = list(p.fields) or corpus.researcher_fields(people)
        return Seed(sid, p.title, "paper", people, {sid}, fields)
    raise NotFoundError(f"No researcher or paper with id '{sid}' in the store.",
                        "Find ids with `python -m rt_core search TEXT` (add --researchers for "
                        "people).", app_hint="Pick the seed from the list, or leave it empty.")


def check_topic(topic: str) -> None:
    if not words(topic):
        raise InputError("The topic is empty.", "Describe the topic in a few words, e.g. "
                         "'language models for galaxy surveys'.")


def nearest_papers(topics, topic: str) -> dict[str, float]:
    """paper id -> cosine, best first, at least MIN_SIMILARITY close; InputError when the
    topic has no words or nothing is near it."""
    check_topic(topic)
    topics.prepare(FILL)
    near = topics.vectors.nearest(topics.model, topics.query_vector(topic), NEAREST,
                                  MIN_SIMILARITY)
    seen = topics.corpus.seen_paper_ids(pid for pid, _ in near)  # not another visitor's
    near = [(pid, s) for pid, s in near if pid in seen]
    if not near:
        raise InputError(f"Nothing in the store is close to '{topic}'.",
                         "Try other words, or import papers on this topic (or ask online with "
                         "--online).", app_hint="Try other words, tick 'Also ask online', or "
                         "import papers on this topic below.")
    return dict(near)


def build_pool(store, hits: dict[str, float], seed: Seed | None) -> Pool:
    """Read the hits' authors, all their papers and what those papers cite; the papers'
    titles and fields only where needed (the hits and their neighbours now, a bridge's
    paper once it is shown: `ensure_works`), so a large store is never read whole. Only
    records the store's scope may see (rt_core.access) join the pool."""
    db = store.db
    hit_ids = list(hits)
    authors: dict[str, list[str]] = defaultdict(list)
    rows = _chunked(db, "SELECT paper_id, researcher_id FROM authorship WHERE paper_id IN ({marks})",
                    hit_ids)
    seen_people = store.corpus.seen_researcher_ids(rid for _, rid in rows)
    for pid, rid in rows:
        if rid in seen_people:
            authors[pid].append(rid)
    closest = list(dict.fromkeys(r for pid in hit_ids for r in authors.get(pid, [])))
    people_ids = list(dict.fromkeys(closest[:POOL_PEOPLE] + sorted(seed.people if seed else ())))
    people = _people(db, people_ids)
    rows = _chunked(db, "SELECT researcher_id, paper_id FROM authorship WHERE researcher_id IN "
                        "({marks})", people_ids)
    seen_papers = store.corpus.seen_paper_ids(pid for _, pid in rows)
    for rid, pid in rows:
        if pid not in seen_papers:
            continue
        people[rid].papers.append(pid)
        if rid not in authors[pid]:
            authors[pid].append(rid)
    paper_ids = list(dict.fromkeys(hit_ids + [p for r in people.values() for p in r.papers]
                                   + sorted(seed.papers if seed else ())))
    refs: dict[str, set[str]] = defaultdict(set)
    cited_by: dict[str, set[str]] = defaultdict(set)
    # what the papers read cite (the primary key's index); who cites a hit is known as far
    # as the papers read go: no index on cited_id, and a scan of every citation is not cheap
    rows = _chunked(db, "SELECT citing_id, cited_id FROM citations WHERE citing_id IN ({marks})",
                    paper_ids)
    seen_papers |= store.corpus.seen_paper_ids(cited for _, cited in rows)
    for citing, cited in rows:
        if cited not in seen_papers:
            continue
        refs[citing].add(cited)
        cited_by[cited].add(citing)
    # sorted once here, so every walk over them is in one order without sorting again
    pool = Pool(hits, {}, people, dict(authors), {p: tuple(sorted(r)) for p, r in refs.items()},
                {p: tuple(sorted(c)) for p, c in cited_by.items()})
    near = [q for pid in hit_ids for q in (*refs.get(pid, ()), *cited_by.get(pid, ()))]
    no_field = [p for r in people.values() if not r.fields for p in r.papers]
    ensure_works(db, pool, hit_ids + near + no_field)
    for r in people.values():  # someone with no field recorded is in their papers' fields
        if not r.fields:
            r.fields = sorted({f for p in r.papers if p in pool.works for f in pool.works[p].fields})
    return pool


def ensure_works(db, pool: Pool, ids) -> None:
    """Read the title, year and fields of those of `ids` not read yet."""
    todo = [i for i in dict.fromkeys(ids) if i not in pool.works]
    if todo:
        pool.works.update(_works(db, todo))


def _people(db, ids: list[str]) -> dict[str, Person]:
    people = {r[0]: Person(r[0], r[1], r[2] or "") for r in _chunked(
        db, "SELECT id, name, affiliation FROM researchers WHERE id IN ({marks})", ids)}
    for rid, fid in _chunked(db, "SELECT researcher_id, field_id FROM researcher_fields WHERE "
                                 "researcher_id IN ({marks}) ORDER BY field_id", ids):
        people[rid].fields.append(fid)
    return people


def _works(db, ids: list[str]) -> dict[str, Work]:
    return {r[0]: Work(r[0], r[1], r[2], json.loads(r[3] or "[]")) for r in _chunked(
        db, "SELECT id, title, year, fields_json FROM papers WHERE id IN ({marks})", ids)}
