"""`suggest`: from a topic (and optionally a seed and a field to avoid) to ranked researchers
and papers from different fields, each with its score parts, bridges and reason.

Offline it reads only the store (the nearest papers by meaning and what links them); with
`online` (online.py) candidates from OpenAlex and Semantic Scholar join the same ranking.
"""
from __future__ import annotations

from .. import topic_search
from ..errors import InputError
from . import bridges as br
from . import candidates as cand
from . import reasons
from .fields import FieldMap, field_map
from .result import Suggested, Suggestions
from .scoring import RELATIVE_FLOOR, Scored, only_in, rank

DEFAULT_LIMIT = 8
MAX_LIMIT = 50


def suggest(store, topic: str, seed: str | None = None, far_from: str | None = None,
            limit: int = DEFAULT_LIMIT, online=None, topics=None) -> Suggestions:
    """Researchers (then papers) who could meet on `topic`, best first, at most `limit` each.
    Raises InputError (NotFoundError for an unknown seed) with one clear message for an
    empty store, an empty or unmatched topic, an unknown seed or field, a bad limit."""
    if not 1 <= int(limit) <= MAX_LIMIT:
        raise InputError(f"The limit must be from 1 to {MAX_LIMIT}; {limit} is not.",
                         f"Ask for {DEFAULT_LIMIT}, the default, or up to {MAX_LIMIT}.")
    cand.check_store(store)
    cand.check_topic(topic)
    fmap = field_map(store)
    avoid = cand.resolve_field(fmap, far_from) if (far_from or "").strip() else None
    the_seed = cand.resolve_seed(store, seed) if (seed or "").strip() else None
    topics = topics or topic_search.for_store(store)
    out = Suggestions(topic.strip(), seed=the_seed.id if the_seed else "",
                      seed_label=the_seed.label if the_seed else "", far_from=avoid or "")
    extra: list[tuple[Scored, Suggested]] = []
    if online is not None:
        fmap = fmap.copy()  # online fields join this query's map only
        extra, notes = online.candidates(topic, topics, fmap)
        out.notes += notes
    try:
        hits = cand.nearest_papers(topics, topic)
    except InputError:
        if not extra:
            raise
        hits = {}
    pool = cand.build_pool(store, hits, the_seed)
    reference = list(dict.fromkeys((the_seed.fields if the_seed else []) + ([avoid] if avoid else [])))
    grow = the_seed is None or not the_seed.fields
    out.researchers = _researchers(store, pool, fmap, the_seed, avoid, reference, grow, limit, extra)
    out.papers = _papers(pool, fmap, the_seed, avoid, reference, grow, limit, extra)
    return out


def _researchers(store, pool, fmap: FieldMap, seed, avoid, reference, grow, limit, extra) -> list[Suggested]:
    closest: dict[str, tuple[float, str]] = {}
    for pid, sim in pool.hits.items():  # best first: the first paper seen is the closest
        for rid in pool.authors.get(pid, []):
            closest.setdefault(rid, (sim, pid))
    if seed:
        for rid in seed.people:
            closest.pop(rid, None)
    found: dict[str, list[br.Bridge]] = {}
    items: list[Scored] = []
    sides: dict[frozenset, tuple[set[str], set[str]]] = {}  # by the candidate's fields
    floor = RELATIVE_FLOOR * max((sim for sim, _ in closest.values()), default=0.0)
    for rid, (sim, _) in closest.items():
        person = pool.people.get(rid)
        if person is None or only_in(person.fields, avoid) or sim < floor:
            continue  # off the topic (scoring.on_topic would drop it): no bridges to find
        key = frozenset(person.fields)
        if key not in sides:
            sides[key] = _side(pool, closest, key, seed)
        people, papers = sides[key]
        found[rid] = br.researcher_bridges(pool, rid, people, papers)
        items.append(Scored(rid, person.fields, sim, br.bridge_strength(found[rid])))

    def show(s: Scored) -> Suggested:
        person, (sim, best) = pool.people[s.id], closest[s.id]
        cand.ensure_works(store.db, pool, [b.paper_id for b in found[s.id][:br.SHOWN]])
        links = br.titled(pool, found[s.id])
        why = reasons.researcher_reason(fmap, pool.works[best].title, sim, s.fields, s.far_from,
                                        s.parts["distance"], links)
        return Suggested("researcher", s.id, person.name, s.fields, [fmap.name(f) for f in s.fields],
                         s.score, s.parts, s.weighted, why, links[:br.SHOWN], person.affiliation, sim)

    return _ranked(items, extra, "researcher", show, fmap, avoid, reference, grow, limit)


def _side(pool, closest: dict, fields: frozenset, seed) -> tuple[set[str], set[str]]:
    """The other side for a candidate in `fields`: the seed; without one, the topic's other
    researchers who share none of those fields."""
    if seed:
        return set(seed.people), br.side_papers(pool, seed.people, seed.papers)
    people = {o for o in closest if o in pool.people and not fields & set(pool.people[o].fields)}
    return people, br.side_papers(pool, people)


def _papers(pool, fmap: FieldMap, seed, avoid, reference, grow, limit, extra) -> list[Suggested]:
    items, found = [], {}
    for pid, sim in pool.hits.items():
        work = pool.works.get(pid)
        if work is None or only_in(work.fields, avoid) or (seed and pid in seed.papers):
            continue
        found[pid] = br.paper_bridges(pool, pid)
        touched = found[pid][1]
        items.append(Scored(pid, work.fields, sim, round(min(1.0, (len(touched) - 1) / 2), 4)
                            if touched else 0.0))

    def show(s: Scored) -> Suggested:
        work, (links, touched) = pool.works[s.id], found[s.id]
        why = reasons.paper_reason(fmap, s.closeness, s.fields, s.far_from, s.parts["distance"],
                                   touched, links)
        return Suggested("paper", s.id, work.title, s.fields, [fmap.name(f) for f in s.fields],
                         s.score, s.parts, s.weighted, why, links[:br.SHOWN],
                         str(work.year or ""), s.closeness)

    return _ranked(items, extra, "paper", show, fmap, avoid, reference, grow, limit)


def _ranked(items: list[Scored], extra, kind: str, show, fmap: FieldMap, avoid, reference,
            grow: bool, limit: int) -> list[Suggested]:
    """The store's candidates and the online ones of this kind in one ranking; `show` makes
    a store candidate's record, `_finish` an online one's."""
    online = {s.id: shown for s, shown in extra if shown.kind == kind and not only_in(s.fields, avoid)}
    items = items + [s for s, _ in extra if s.id in online]
    return [_finish(fmap, online[s.id], s) if s.id in online else show(s)
            for s in rank(items, limit, fmap, reference, grow)]


def _finish(fmap: FieldMap, shown: Suggested, s: Scored) -> Suggested:
    """An online candidate with the score it got in the common ranking."""
    shown.score, shown.parts, shown.weighted = s.score, s.parts, s.weighted
    where = ", ".join(shown.field_names) or "no field given"
    far = (f", {s.parts['distance']:.2f} from {', '.join(fmap.name(f) for f in s.far_from)}"
           if s.far_from else "")
    shown.reason = (f"found online ({shown.source}), {s.closeness:.2f} close to "
                    f"the topic; works in {where}{far}; not in the store yet, so no link is known.")
    return shown
