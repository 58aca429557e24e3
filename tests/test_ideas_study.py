"""A blind study made from starred ideas of different runs (rt_core/study/ideas.py): every two
starred ideas a pair, a rater sees only the five answers, the ideas' runs are hidden while the
study is open, and zero starred ideas (or a visitor) is one clear message."""
from __future__ import annotations

import json

import pytest

from rt_core.access import Viewer
from rt_core.errors import InputError
from rt_core.ideas.bank import Bank, Query
from rt_core.store.study_types import StudySettings
from rt_core.study.create import add_runs
from rt_core.study.ideas import ARM_BY, create_from_starred
from tests.test_ideas_bank import _brainstorm
from tests.test_study import rate_through

OPERATOR = Viewer(shared=True, operator=True)
VISITOR = Viewer(shared=True, owner_hash="h-me")


def _bank(store) -> Bank:
    store.runs.create(_brainstorm("runa", "2026-01-01T00:00:00+00:00"), owner_hash="h-me")
    store.runs.create(_brainstorm("runb", "2026-01-02T00:00:00+00:00", model="other/model"), owner_hash="h-me")
    return Bank(store, lambda texts: [[1.0, float(len(t) % 7)] for t in texts], model="test")


def test_a_study_of_starred_ideas_from_two_runs_is_blind(store):
    bank = _bank(store)
    with pytest.raises(InputError, match="no starred ideas") as none:
        create_from_starred(store, bank, OPERATOR, StudySettings(name="Picked"))
    assert "Star at least two ideas" in none.value.hint
    for iid in ("runa:c1", "runb:c2", "runb:round1"):
        bank.star(OPERATOR, iid)
    made = create_from_starred(store, bank, OPERATOR, StudySettings(name="Picked", raters_per_unit=1))
    sid = made["id"]
    assert store.studies.get(sid)["settings"].arm_by == ARM_BY
    assert {i.run_id for i in store.studies.items(sid).values()} == {"runa", "runb"}
    assert len(store.studies.units(sid)) == 3  # every two of three ideas
    tasks = rate_through(store, sid, "ann")
    assert len(tasks) == 3
    for t in tasks:  # only the answers: no run, idea id, model or version
        text = json.dumps([t.left, t.right])
        assert set(t.left) == {"q1", "q2", "q3", "q4", "q5"}
        assert not any(w in text for w in ("runa", "runb", "other/model", "scripted", "c1", "round1"))
    # while the study is open its ideas' runs leave the visitor's bank, as a study of runs does
    assert bank.find(VISITOR, Query()).total == 0 and bank.find(OPERATOR, Query()).total == 6
    with pytest.raises(InputError, match="starred ideas takes its items from the bank"):
        add_runs(store, sid, ["runa"])


def test_only_the_operator_makes_a_study_and_a_pair_needs_two_ideas(store):
    bank = _bank(store)
    bank.star(OPERATOR, "runa:c1")
    with pytest.raises(InputError, match="only its operator can create a study"):
        create_from_starred(store, bank, VISITOR, StudySettings(name="Mine"))
    with pytest.raises(InputError, match="at least two starred ideas"):
        create_from_starred(store, bank, OPERATOR, StudySettings(name="One"))
    made = create_from_starred(store, bank, OPERATOR, StudySettings(name="One", mode="absolute"))
    assert len(store.studies.units(made["id"])) == 1
