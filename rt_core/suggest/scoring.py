"""The score of a suggestion, in parts a reader can see, and the order it puts them in.

score = 0.5 x topic + 0.3 x distance + 0.2 x bridges, each part from 0 to 1:
- topic: the candidate's closeness to the topic (cosine of their closest paper), relative to
  the closest candidate, so the best match has a full part;
- distance: how far the candidate's fields are from the reference fields (fields.py): the
  seed's, the field to stay away from, and, without a seed, the fields already suggested
  (the first pick of such a list, with nothing to be far from, gets a full part);
- bridges: the weighted links to the other side (bridges.py).

Why greedy: without a seed, "far from the fields already suggested" changes with each pick,
so the list is built one suggestion at a time (as maximal marginal relevance does): the
first is the best match, the next best one from another field follows, and so on. Only
candidates at least RELATIVE_FLOOR as close as the best one are ranked at all, so a distant
field cannot buy its way in with distance alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .fields import FieldMap

WEIGHTS = {"topic": 0.5, "distance": 0.3, "bridges": 0.2}
RELATIVE_FLOOR = 0.5  # of the best closeness: below it a candidate is off the topic


@dataclass
class Scored:
    id: str
    fields: list[str]
    closeness: float  # raw cosine to the topic
    bridges: float  # 0..1 (bridges.bridge_strength)
    parts: dict[str, float] = field(default_factory=dict)  # raw parts, 0..1
    weighted: dict[str, float] = field(default_factory=dict)  # parts x weights; they sum to score
    score: float = 0.0
    far_from: list[str] = field(default_factory=list)  # the reference fields when ranked


def on_topic(items: list[Scored]) -> list[Scored]:
    """Those close enough to the best one to count as working on the topic."""
    if not items:
        return []
    best = max(i.closeness for i in items)
    return [i for i in items if i.closeness >= RELATIVE_FLOOR * best]


def only_in(fields: list[str], avoid: str | None) -> bool:
    """Works only in the field to avoid (someone with no recorded field is not)."""
    return bool(avoid) and bool(fields) and set(fields) <= {avoid}


def _score(item: Scored, best: float, reference: list[str], fmap: FieldMap, grow: bool) -> None:
    # the first pick of a growing list is as far as can be from nothing: so each later pick,
    # scored against more fields, can only score less, and the list reads best first
    distance = fmap.distance_between(item.fields, reference) if reference or not grow else 1.0
    item.parts = {"topic": round(max(0.0, item.closeness) / best, 4) if best > 0 else 0.0,
                  "distance": distance,
                  "bridges": item.bridges}
    item.weighted = {k: round(WEIGHTS[k] * v, 4) for k, v in item.parts.items()}
    item.score = round(sum(item.weighted.values()), 4)
    item.far_from = list(reference)


def rank(items: list[Scored], limit: int, fmap: FieldMap, reference: list[str],
         grow: bool) -> list[Scored]:
    """The best `limit` items, one at a time. `grow`: each pick's fields join the reference
    (no seed); else the reference stays the seed's (and the avoided field)."""
    pool = on_topic(items)
    best = max((i.closeness for i in pool), default=0.0)
    reference = list(dict.fromkeys(reference))
    chosen: list[Scored] = []
    while pool and len(chosen) < limit:
        for item in pool:
            _score(item, best, reference, fmap, grow)
        pick = max(pool, key=lambda i: (i.score, i.closeness, i.id))
        pool.remove(pick)
        chosen.append(pick)
        if grow:
            reference = list(dict.fromkeys(reference + [f for f in pick.fields if f]))
    return chosen
