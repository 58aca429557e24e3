"""The one access rule (rt_core.access), its store facts and the server's mode, without a browser."""
from __future__ import annotations

import io

import pytest

from rt_core import access, access_store, deployment
from rt_core.access import Action, RunFacts, Viewer
from rt_core.types import Run, RunConfig

OWNER, OTHER = deployment.token_hash("owner-token-aaaaaaaaaaaa"), deployment.token_hash("other-token-bbbbbbbbbb")
CHANGES = [Action.DELETE, Action.RESUME, Action.CANCEL, Action.REVISE, Action.CREDIT, Action.COMPARE]
SEEING = [Action.LIST, Action.VIEW, Action.EXPORT]


def visitor(owner: str = OTHER, **kw) -> Viewer:
    return Viewer(shared=True, owner_hash=owner, **kw)


def run(**kw) -> RunFacts:
    return RunFacts("run000000001", owner_hash=OWNER, **kw)


@pytest.mark.parametrize("action", SEEING + CHANGES)
def test_the_browser_that_started_a_run_may_do_everything_with_it(action):
    assert access.may(visitor(OWNER), action, run())


@pytest.mark.parametrize("action", SEEING + CHANGES)
def test_a_stranger_on_a_shared_server_gets_nothing_of_a_run_without_its_link(action):
    decision = access.may(visitor(), action, run())
    assert not decision
    assert decision.reason == access.no_such_run("run000000001")


def test_a_link_lets_a_stranger_look_and_export_but_change_nothing():
    viewer, facts = visitor(), run(linked=True)
    assert access.may(viewer, Action.VIEW, facts) and access.may(viewer, Action.EXPORT, facts)
    assert not access.may(viewer, Action.LIST, facts), "a link does not put the run in History"
    for action in CHANGES:
        decision = access.may(viewer, action, facts)
        assert not decision and decision.reason == access.NOT_YOURS


def test_an_empty_owner_hash_matches_nobody():
    """A command-line run has no owner: a browser without a token must not match it."""
    assert not access.may(visitor(""), Action.DELETE, RunFacts("cli", owner_hash=""))
    assert not access.may(visitor(""), Action.LIST, RunFacts("cli", owner_hash=""))


@pytest.mark.parametrize("viewer", [Viewer(shared=True, operator=True), Viewer(shared=False)],
                         ids=["operator", "personal"])
def test_the_operator_and_a_personal_server_may_do_everything(viewer):
    for action in SEEING + CHANGES:
        assert access.may(viewer, action, RunFacts("x", owner_hash=OTHER))
    assert access.may(viewer, Action.CREATE_STUDY)


def test_creating_a_study_on_a_shared_server_needs_the_operator():
    decision = access.may(visitor(), Action.CREATE_STUDY)
    assert not decision and "operator" in decision.reason


@pytest.mark.parametrize("viewer", [visitor(OWNER), visitor(OWNER, rater=True), Viewer(shared=False, rater=True),
                                    visitor(organiser_of=frozenset({"other-study"}))],
                         ids=["owner", "rater", "personal-rater", "another-organiser"])
def test_a_study_item_opens_for_nobody_else_and_reads_as_an_unknown_run(viewer):
    facts = run(linked=True, open_studies=frozenset({"s1"}))
    unknown = access.may(viewer, Action.VIEW, RunFacts("run000000001", exists=False, linked=True))
    for action in SEEING + CHANGES:
        decision = access.may(viewer, action, facts)
        assert not decision
        assert decision.reason == unknown.reason  # word for word: a guess learns nothing


def test_the_operator_and_that_studys_organiser_open_a_study_item():
    facts = run(linked=True, open_studies=frozenset({"s1"}))
    assert access.may(Viewer(shared=True, operator=True), Action.VIEW, facts)
    assert access.may(visitor(organiser_of=frozenset({"s1"})), Action.VIEW, facts)
    assert access.may(Viewer(shared=False), Action.LIST, facts), "a personal server hides nothing"


def test_history_lists_only_what_the_viewer_may_list():
    rows = [{"id": "mine"}, {"id": "theirs"}, {"id": "item"}, {"id": "cli"}]
    owners = {"mine": OWNER, "theirs": OTHER, "item": OWNER}
    studies = {"item": frozenset({"s1"})}
    assert [r["id"] for r in access.listable(visitor(OWNER), rows, owners, studies)] == ["mine"]
    assert [r["id"] for r in access.listable(Viewer(shared=False), rows, owners, studies)] == \
        ["mine", "theirs", "item", "cli"]
    assert len(access.listable(Viewer(shared=True, operator=True), rows, owners, studies)) == 4


# -- facts from the store ------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path):
    from rt_core.store import Store

    s = Store(tmp_path / "rt.db")
    yield s
    s.close()


def _stored(store, run_id: str, owner: str = "") -> None:
    store.runs.create(Run(id=run_id, config=RunConfig(model="scripted/demo"), status="done",
                          created_at="2026-01-01T00:00:00+00:00"), owner_hash=owner)


def test_the_store_keeps_the_owner_hash_and_never_puts_it_in_the_run(store):
    _stored(store, "owned", OWNER)
    _stored(store, "cli")
    assert store.runs.owner_hash("owned") == OWNER
    assert store.runs.owner_hash("cli") == ""
    assert store.runs.owner_hash("gone") is None
    assert store.runs.owner_hashes(["owned", "cli", "gone"]) == {"owned": OWNER}
    assert OWNER not in str(store.runs.load("owned").to_dict())  # so no export can carry it
    assert all(OWNER not in str(r) for r in store.runs.list())


def test_facts_read_a_deleted_run_as_unknown_and_an_open_studys_item_as_hidden(store):
    _stored(store, "owned", OWNER)
    viewer = visitor(OWNER)
    assert access_store.decide(store, viewer, Action.DELETE, "owned")
    store.db.conn.execute("INSERT INTO studies(id, code, name, mode, settings_json, created_at) "
                          "VALUES ('s1', 'ABC123', 'x', 'absolute', '{}', '2026')")
    store.db.conn.execute("INSERT INTO study_items(study_id, item_id, arm, target, source, run_id, answers_json) "
                          "VALUES ('s1', 'i1', 'a', 't', 'run', 'owned', '{}')")
    assert store.studies.open_studies_of("owned") == frozenset({"s1"})
    assert not access_store.decide(store, viewer, Action.VIEW, "owned", linked=True)
    assert access_store.history(store, viewer, store.runs.list()) == []
    store.db.conn.execute("UPDATE studies SET status='closed'")  # a closed study is no longer blind
    assert access_store.decide(store, viewer, Action.VIEW, "owned")
    assert [r["id"] for r in access_store.history(store, viewer, store.runs.list())] == ["owned"]
    store.runs.delete("owned")
    gone = access_store.decide(store, viewer, Action.VIEW, "owned", linked=True)
    assert not gone and gone.reason == access.no_such_run("owned")
    assert access_store.decide(store, viewer, Action.VIEW, "live", live_owner=OWNER), "a live run not stored yet"


# -- the server's mode and the operator token -------------------------------------------------------
@pytest.mark.parametrize(("address", "env", "shared"), [
    ("127.0.0.1", {}, False), ("localhost", {}, False), ("::1", {}, False), (None, {}, False),
    ("0.0.0.0", {}, True), ("", {}, True), ("192.168.1.5", {}, True),
    ("127.0.0.1", {"RT_SHARED": "1"}, True), ("127.0.0.1", {"RT_DEMO": "1"}, True),
])
def test_the_mode_follows_the_listening_address_and_the_environment(address, env, shared):
    assert deployment.decide(address, env=env) is shared  # the rule's other facts: tests/test_deployment.py


def test_a_generated_operator_token_is_printed_once_and_only_its_hash_is_kept(monkeypatch):
    monkeypatch.delenv(deployment.OPERATOR_ENV, raising=False)
    op, log = deployment._Operator(), io.StringIO()
    first = op.hash("http://h:1", out=log)
    assert op.hash("http://h:1", out=log) == first
    lines = [line for line in log.getvalue().splitlines() if "?operator=" in line]
    assert len(lines) == 1
    token = lines[0].split("?operator=", 1)[1]
    assert op.matches(token) and not op.matches(token[:-1]) and not op.matches("")
    assert token not in repr(vars(op))


def test_an_operator_token_from_the_environment_is_not_printed(monkeypatch):
    monkeypatch.setenv(deployment.OPERATOR_ENV, "set-by-the-operator-123")
    op, log = deployment._Operator(), io.StringIO()
    assert op.matches("set-by-the-operator-123", "") and not op.matches("stale-token-from-yesterday")
    op.hash(out=log)
    assert log.getvalue() == ""


def test_the_start_script_makes_a_token_in_every_mode(monkeypatch, capsys):
    """scripts/app asks `python -m rt_core.deployment ADDRESS PORT` before it starts the server:
    a personal server gets its token too, since its first proxied request makes it shared."""
    monkeypatch.delenv(deployment.OPERATOR_ENV, raising=False)
    for name in ("RT_SHARED", "RT_DEMO"):
        monkeypatch.delenv(name, raising=False)
    for address, port in (("127.0.0.1", "8501"), ("192.168.1.5", "8600")):
        assert deployment.main([address, port]) == 0
        out, err = capsys.readouterr()
        assert out.strip() and f"http://{address}:{port}/?operator={out.strip()}" in err
    monkeypatch.setenv(deployment.OPERATOR_ENV, "chosen-by-the-operator")
    assert deployment.main(["0.0.0.0", "8501"]) == 0
    assert capsys.readouterr() == ("", "")


def test_permitted_asks_the_rule_for_many_runs_at_once(store):
    _stored(store, "mine", OWNER)
    _stored(store, "theirs", OTHER)
    assert access_store.permitted(store, visitor(OWNER), Action.EXPORT, ["mine", "theirs"]) == ["mine"]
    assert access_store.permitted(store, Viewer(shared=False), Action.EXPORT, ["mine", "theirs"]) == \
        ["mine", "theirs"]
