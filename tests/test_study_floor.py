"""Raters per item as behaviour, not as a stored number: with k raters per item, every item
keeps being served, least-covered first, until k raters have rated it; raising k while the
study is open brings every item up to the new k."""
from __future__ import annotations

from tests.test_study import new_study


def rate_one_by_one(store, sid: str, rid: str) -> list[str]:
    """One rater's whole session; checks that each item served was among the least rated at
    the time it was served (raters here come one after another, so nothing is open)."""
    crit = store.studies.get(sid)["settings"].criteria
    store.studies.join(sid, rid)
    served = []
    while (task := store.studies.next_task(sid, rid)) is not None:
        cover = store.studies.coverage(sid)
        assert cover[task.unit_id] == min(cover[u] for u in cover if u not in served), (task.unit_id, cover)
        served.append(task.unit_id)
        store.studies.submit(sid, rid, task.position, {c.name: "left" for c in crit})
    return served


def test_every_item_is_served_until_k_raters_have_rated_it_and_raising_k_serves_it_again(store):
    study = new_study(store, raters_per_unit=1, max_units_per_rater=3)
    sid = study["id"]
    for n in range(3):  # 9 items over 8 units: each rated once, one twice
        assert len(rate_one_by_one(store, sid, f"early-{n}")) == 3
    assert min(store.studies.coverage(sid).values()) == 1
    store.studies.adjust(sid, raters_per_unit=3)
    for n in range(5):  # 15 more: the units still under three raters are the ones served
        assert len(rate_one_by_one(store, sid, f"late-{n}")) == 3
    assert set(store.studies.coverage(sid).values()) == {3}  # 24 ratings, three on every unit
