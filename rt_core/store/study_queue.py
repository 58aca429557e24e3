"""Who rates what next, and for how long: the pure rules behind a study's live queue.

A rater is never handed a fixed list at the door. Each time they need an item, the store asks
`pick_unit` for the unit with the fewest raters so far (answers plus items on someone's screen),
so four people joining one after another spread evenly and the organiser's overlap is a floor
everyone works towards, not a ceiling that turns the fifth person away. How many items a rater
gets follows the session length: their minutes, divided by the median time an item has taken in
this study (a prior until a few are measured), minus the time they have already spent.
"""
from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .study_types import Unit

# Before anything is measured: reading one proposal of five short answers takes most people
# about 45 s, and each criterion a further 10 s to weigh and click. So a pairwise item with the
# three default criteria is 2 * 45 + 3 * 10 = 120 s (five items in ten minutes), an absolute
# one 75 s (eight). Measured times replace this as soon as MIN_MEASURED items are in.
PRIOR_SECONDS_PER_PROPOSAL = 45.0
PRIOR_SECONDS_PER_CRITERION = 10.0
MIN_MEASURED = 3
GOLD_SLOTS = 3  # the gold pair comes among a rater's first three items, so nobody misses it


def prior_seconds(pairwise: bool, n_criteria: int) -> float:
    return PRIOR_SECONDS_PER_PROPOSAL * (2 if pairwise else 1) + PRIOR_SECONDS_PER_CRITERION * n_criteria


def seconds_per_item(measured: Sequence[float], prior: float) -> tuple[float, bool]:
    """(seconds, measured?): the median of the measured times once there are enough of them.
    The median, not the mean, so one rater who left a tab open for an hour changes nothing."""
    times = [t for t in measured if t is not None and t > 0]
    if len(times) >= MIN_MEASURED:
        return float(statistics.median(times)), True
    return prior, False


@dataclass(frozen=True)
class Budget:
    """What one rater's session allows right now."""
    minutes: float  # the organiser's session length per rater
    used_seconds: float  # time measured on the rater's submitted items
    per_item: float  # seconds an item takes in this study (median or prior)
    cap: int  # the organiser's most items per rater
    units: int  # ordinary units in the study (each can be rated once per rater)

    def ordinary_target(self, done: int, assigned: int) -> int:
        """How many ordinary items this rater should get in all: what they have done plus what
        their remaining minutes fit, at least one, never fewer than already on their screen, and
        never more than the cap or the study's units."""
        left = max(0.0, self.minutes * 60 - self.used_seconds)
        wanted = max(1, done + round(left / self.per_item))
        return max(assigned, min(wanted, self.cap, self.units))


def pick_unit(units: Sequence[Unit], coverage: Mapping[str, int], taken: set[str], seed: str) -> Unit | None:
    """The ordinary unit this rater has not had yet with the fewest raters so far (answers plus
    open assignments of others); ties broken at random, reproducibly for a given seed."""
    free = [u for u in units if u.gold_item is None and u.unit_id not in taken]
    if not free:
        return None
    rng = random.Random(seed)
    return min(free, key=lambda u: (coverage.get(u.unit_id, 0), rng.random()))


def sides(unit: Unit, seed: str) -> tuple[str, str | None]:
    """Which item goes left: random per rater and unit, and recorded with the assignment."""
    if unit.item_b is None:
        return unit.item_a, None
    return (unit.item_a, unit.item_b) if random.Random(seed).random() < 0.5 else (unit.item_b, unit.item_a)


def gold_slot(seed: str) -> int:
    """The position (1-based) at which this rater meets the gold pair."""
    return random.Random(seed).randint(1, GOLD_SLOTS)


def choose(seed: str, rows: Sequence[Mapping], units: Sequence[Unit], budget: Budget,
           coverage: Mapping[str, int], repeat_check: bool) -> tuple[str, str, str | None, int] | None:
    """(unit, left item, right item, repeat?) for a rater's next item, or None when their
    session is over. `rows` are the rater's assignments so far (with `repeat`, `gold_item`),
    `coverage` how many other raters hold each unit. The gold pair comes at the rater's gold
    slot (or last, if they stop before it); the repeated item, sides swapped, comes at the end."""
    taken = {r["unit_id"] for r in rows if not r["repeat"]}
    gold = next((u for u in units if u.gold_item), None)
    gold_due = gold is not None and gold.unit_id not in taken
    if gold_due and len(rows) + 1 >= gold_slot(seed + ":gold"):
        return (gold.unit_id, *sides(gold, f"{seed}:{gold.unit_id}"), 0)
    ordinary = [r for r in rows if not r["repeat"] and not r["gold_item"]]
    if len(ordinary) < budget.ordinary_target(len(ordinary), len(ordinary)):
        unit = pick_unit(units, coverage, taken, f"{seed}:{len(rows) + 1}")
        if unit is not None:
            return (unit.unit_id, *sides(unit, f"{seed}:{unit.unit_id}"), 0)
    if gold_due:
        return (gold.unit_id, *sides(gold, f"{seed}:{gold.unit_id}"), 0)
    if repeat_check and ordinary and not any(r["repeat"] for r in rows):
        again = random.Random(seed + ":repeat").choice(list(ordinary))
        if again["shown_right"]:
            return again["unit_id"], again["shown_right"], again["shown_left"], 1
        return again["unit_id"], again["shown_left"], None, 1
    return None


def minutes_between(shown_at: str | None, submitted_at: str) -> float | None:
    """Minutes from showing to submitting; None when the item was never stamped as shown."""
    if not shown_at:
        return None
    delta = datetime.fromisoformat(submitted_at) - datetime.fromisoformat(shown_at)
    return max(0.0, delta.total_seconds() / 60)
