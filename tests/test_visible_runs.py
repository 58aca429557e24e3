"""History asks the store for the runs this viewer may see (rt_core.access.listing, answered by
`Runs.visible` in SQL), on both engines. Before, it read the newest 200 runs of everybody and
filtered them in Python, so on a busy server a visitor's own older runs were not listed."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rt_core import access_store, deployment
from rt_core.access import Action, Viewer
from rt_core.types import Run, RunConfig

MINE = deployment.token_hash("visible-runs-owner-token-01")
THEIRS = deployment.token_hash("visible-runs-other-token-02")
OTHERS = 600
START = datetime(2026, 1, 1, tzinfo=UTC)


def _plant(store, run_id: str, owner: str, second: int) -> None:
    stamp = (START + timedelta(seconds=second)).isoformat()
    store.runs.create(Run(id=run_id, config=RunConfig(model="scripted/demo"), status="done",
                          created_at=stamp), owner_hash=owner)


def _study(store, study_id: str, run_id: str) -> None:
    store.db.conn.execute("INSERT INTO studies(id, code, name, mode, settings_json, created_at) "
                          "VALUES (?, ?, 'x', 'absolute', '{}', '2026')", (study_id, study_id.upper()))
    store.db.conn.execute("INSERT INTO study_items(study_id, item_id, arm, target, source, run_id, answers_json) "
                          "VALUES (?, 'i1', 'a', 't', 'run', ?, '{}')", (study_id, run_id))


def ids(rows) -> list[str]:
    return [r["id"] for r in rows]


def test_a_visitors_own_run_is_listed_behind_600_runs_of_others(store):
    with store.transaction():
        for i in range(OTHERS):  # a busy server: everybody else's runs, all newer than the visitor's
            _plant(store, f"other{i:07d}", THEIRS if i % 2 else "", 1000 + i)
    _plant(store, "mine0000001", MINE, 10)  # stored last, started first (a long run)
    _plant(store, "mine0000002", MINE, 20)
    visitor = Viewer(shared=True, owner_hash=MINE)
    assert ids(access_store.listed(store, visitor)) == ["mine0000002", "mine0000001"]
    assert ids(access_store.listed(store, visitor, limit=1, offset=1)) == ["mine0000001"]  # paged
    assert ids(access_store.listed(store, Viewer(shared=True, owner_hash=THEIRS), limit=1000)) == \
        [f"other{i:07d}" for i in range(OTHERS - 1, 0, -2)]
    assert access_store.listed(store, Viewer(shared=True)) == []  # no owner cookie: nothing
    assert access_store.listed(store, Viewer(shared=True, owner_hash=MINE, rater=True)) == []
    # The privileged see everybody's, a page at a time, newest first.
    operator = Viewer(shared=True, operator=True)
    first, second = access_store.listed(store, operator), access_store.listed(store, operator, offset=200)
    assert len(first) == len(second) == 200 and ids(first)[0] == f"other{OTHERS - 1:07d}"
    assert not set(ids(first)) & set(ids(second))
    assert "mine0000001" in ids(access_store.listed(store, Viewer(shared=False), limit=1000))
    # The filter words narrow the viewer's own runs, not a window of everybody's.
    assert ids(access_store.listed(store, visitor, text="scripted", status="done")) == \
        ["mine0000002", "mine0000001"]
    assert access_store.listed(store, visitor, status="failed") == []


def test_an_open_studys_item_is_left_out_in_sql_except_for_its_organiser(store):
    _plant(store, "mine0000001", MINE, 10)
    _plant(store, "mine0item01", MINE, 20)
    _study(store, "s1", "mine0item01")
    visitor = Viewer(shared=True, owner_hash=MINE)
    assert ids(store.runs.visible(access_store.listing(visitor))) == ["mine0000001"]
    assert ids(access_store.listed(store, visitor)) == ["mine0000001"]
    organiser = Viewer(shared=True, owner_hash=MINE, organiser_of=frozenset({"s1"}))
    assert ids(access_store.listed(store, organiser)) == ["mine0item01", "mine0000001"]
    assert ids(access_store.listed(store, Viewer(shared=True, operator=True))) == ["mine0item01", "mine0000001"]
    store.db.conn.execute("UPDATE studies SET status='closed'")  # a closed study is no longer blind
    assert ids(access_store.listed(store, visitor)) == ["mine0item01", "mine0000001"]
    # The SQL says what the one rule says, run by run.
    assert ids(access_store.listed(store, visitor)) == \
        access_store.permitted(store, visitor, Action.LIST, ids(store.runs.list()))
