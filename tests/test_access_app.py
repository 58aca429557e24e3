"""Who sees what, through the entry file (AppTest): a shared server's owner, stranger and operator,
the personal server, and each kind of bad input. A browser is its owner cookie: AppTest has no
cookies, so a test gives a session the token its cookie would hold (`_owner_token`); a new
AppTest with the same token is that browser after a refresh or a restart."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import access, deployment
from rt_core.types import Proposal, Run, RunConfig
from studio import identity
from tests.apphelp import APP, errors, goto, infos, module_data_dir, shared_server, shown

data_dir = module_data_dir("access-app")
MINE, THEIRS = "browser-a-owner-token-0001", "browser-b-owner-token-0002"
OPERATOR = "operator-token-for-the-tests-0003"
SCRIPTED = "Scripted demo model (tests and demos, no real model)"


def store():
    from rt_core.store import open_store

    return open_store()


def _run(run_id: str, token: str, status: str = "done") -> str:
    run = Run(id=run_id, config=RunConfig(model="scripted/demo", mode="global", reference_paper_id="p-gaia"),
              status=status, created_at=f"2026-01-02T00:00:{len(run_id):02d}+00:00")
    run.proposal = Proposal(*(f"Answer {k} of {run_id}" for k in range(1, 6)))
    store().runs.create(run, owner_hash=deployment.token_hash(token))
    return run_id


@pytest.fixture(scope="module")
def runs():
    """A failed run of browser A, a run of browser B, and two runs of A rated in an open study."""
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs

    ids = {"mine": _run("mine0failed1", MINE, "failed"), "theirs": _run("theirs0done1", THEIRS),
           "item": _run("item0blind01", MINE), "item2": _run("item0blind02", THEIRS)}
    made = create_from_runs(store(), [ids["item"], ids["item2"]], StudySettings(name="Blind", mode="absolute"),
                            real_arm=False)
    ids["study"], ids["organiser"] = made["id"], made["organiser_token"]
    return ids


@pytest.fixture
def shared(monkeypatch):
    with shared_server(monkeypatch, OPERATOR):
        yield


def browser(token: str | None = None, page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if token:
        at.session_state["_owner_token"] = token  # what this browser's cookie holds
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return goto(at, page) if page else at


def listed(at: AppTest) -> set[str]:
    goto(at, "history")
    return set(at.dataframe[0].value["id"]) if at.dataframe else set()


def unknown_warning(at: AppTest) -> str:
    return " ".join(shown(w.value) for w in at.warning)


def test_the_owner_keeps_the_controls_after_a_refresh(runs, shared):
    at = browser(MINE, "results", run=runs["mine"])  # a new session: the refresh, or a restart
    assert at.selectbox(key="results_pick").value == runs["mine"]
    assert not any("read-only" in c.value for c in at.caption)
    assert at.button(key=f"results_resume_{runs['mine']}")
    assert listed(at) == {runs["mine"]}, "History: this browser's own runs, no study item"
    assert at.button(key="hist_delete")


def test_a_stranger_sees_a_link_read_only_and_nothing_in_history(runs, shared):
    at = browser(THEIRS, "results", run=runs["mine"])
    assert any("read-only" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == f"results_resume_{runs['mine']}"]
    assert listed(at) == {runs["theirs"]}
    at.selectbox(key="hist_pick").set_value(runs["theirs"]).run()
    assert at.button(key="hist_delete")


@pytest.mark.parametrize("token", [MINE, THEIRS], ids=["its-owner", "a-stranger"])
def test_a_study_items_link_reads_exactly_as_an_unknown_run(runs, shared, token):
    guessed = browser(token, "results", run=runs["item"])
    nothing = browser(token, "results", run="item0blind09")
    assert unknown_warning(guessed) == unknown_warning(nothing).replace("item0blind09", runs["item"])
    assert "no run item0blind01 here" in unknown_warning(guessed)
    assert not any(m.label == "Status" for m in guessed.metric)
    page = str([e.value for e in guessed.main if hasattr(e, "value")])
    assert "scripted/demo" not in page and "Answer 1 of" not in page
    run_page = browser(token, "run", run=runs["item"])
    assert unknown_warning(run_page) == unknown_warning(guessed)


def test_the_operator_link_is_read_once_and_then_sees_everything(runs, shared):
    at = browser(THEIRS, operator=OPERATOR)
    assert identity.OPERATOR_WELCOME in [s.value for s in at.success]
    assert "operator" not in at.query_params
    assert listed(at) >= {runs["mine"], runs["theirs"], runs["item"], runs["item2"]}
    goto(at, "results")
    at.query_params["run"] = runs["item"]
    at.run()
    assert at.selectbox(key="results_pick").value == runs["item"]
    goto(at, "study_results")
    assert at.selectbox(key="study_id").value == runs["study"]


@pytest.mark.parametrize("token", ["not-the-operator-token", OPERATOR[:-1], ""], ids=["wrong", "cut", "empty"])
def test_a_wrong_or_stale_operator_link_gets_one_message_and_nothing_more(runs, shared, token):
    at = browser(THEIRS, operator=token)
    assert errors(at) == identity.WRONG_OPERATOR
    assert "operator" not in at.query_params
    assert listed(at) == {runs["theirs"]}


def test_an_old_owner_link_is_dropped_with_a_word(runs, shared):
    at = browser(THEIRS, run=runs["mine"], owner="an-old-owner-token")
    assert identity.OLD_OWNER_LINK in infos(at)  # said once, on the page the link opened
    assert "owner" not in at.query_params
    goto(at, "results")
    assert any("read-only" in c.value for c in at.caption)


def test_a_deleted_runs_link_says_so(runs, shared):
    gone = _run("gone0deleted", MINE)
    store().runs.delete(gone)
    at = browser(MINE, "results", run=gone)
    assert unknown_warning(at) == access.no_such_run(gone)
    assert not at.exception


def test_only_the_operator_creates_a_study_on_a_shared_server(runs, shared):
    at = browser(MINE, "study_create")
    assert access.OPERATOR_ONLY in infos(at)
    assert not at.multiselect
    at = browser(MINE, operator=OPERATOR)
    goto(at, "study_create")
    assert any(runs["theirs"] in o for o in at.multiselect(key="sc_runs").options)


def test_the_organiser_opens_their_studys_items_by_link(runs, shared):
    at = browser(THEIRS, "study_results", organiser=runs["organiser"])
    goto(at, "results")
    at.query_params["run"] = runs["item"]
    at.run()
    assert at.selectbox(key="results_pick").value == runs["item"]
    assert any("read-only" in c.value for c in at.caption)


def test_a_run_started_here_is_stored_as_this_browsers(module_demo, shared):
    at = browser(MINE)
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED).run()
    at.session_state["num_reviewers"] = 0
    at.run()
    at.button(key="run_start").click().run()
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=120)
    assert "owner" not in at.query_params
    assert store().runs.owner_hash(job.run_id) == deployment.token_hash(MINE)
    assert job.run_id in listed(browser(MINE))
    assert job.run_id not in listed(browser(THEIRS))


def test_a_personal_server_shows_everything_to_whoever_sits_at_it(runs):
    at = browser(THEIRS, "results", run=runs["mine"])
    assert not any("read-only" in c.value for c in at.caption)
    assert at.button(key=f"results_resume_{runs['mine']}")
    assert {runs["mine"], runs["theirs"], runs["item"]} <= listed(at)


@pytest.fixture
def cookies(monkeypatch):
    """What this browser's cookies hold when its session starts (AppTest has none of its own)."""
    jar: dict[str, str] = {}
    monkeypatch.setattr(identity, "_cookie", lambda name: jar.get(name, ""))
    return jar


def test_the_owner_cookie_alone_brings_the_controls_back(runs, shared, cookies):
    cookies[identity.OWNER_COOKIE] = MINE
    at = browser(None, "results", run=runs["mine"])
    assert at.button(key=f"results_resume_{runs['mine']}")
    cookies[identity.OWNER_COOKIE] = "short"  # not a token this app made: a new browser's
    at = browser(None, "results", run=runs["mine"])
    assert any("read-only" in c.value for c in at.caption)


def _signed_in(token: str = THEIRS) -> tuple[AppTest, str]:
    """A browser that opened the operator link, and what its operator cookie now holds."""
    at = browser(token, operator=OPERATOR)
    return at, at.session_state["_cookie_writes"][identity.OPERATOR_COOKIE]


def test_the_operator_session_survives_a_refresh_until_the_token_changes(runs, shared, cookies, monkeypatch):
    _, value = _signed_in()
    assert value and OPERATOR not in value  # the cookie holds a session, never the token
    cookies[identity.OPERATOR_COOKIE] = value
    assert runs["item"] in listed(browser(THEIRS))
    monkeypatch.setenv(deployment.OPERATOR_ENV, "the-token-of-a-later-start-004")
    deployment.OPERATOR.forget()
    at = browser(THEIRS)
    assert identity.STALE_OPERATOR in [w.value for w in at.warning]
    assert listed(at) == {runs["theirs"]}
    assert at.session_state["_cookie_writes"][identity.OPERATOR_COOKIE] == ""  # the cookie goes


@pytest.mark.parametrize("kind", ["raw-token", "forged", "made-up"])
def test_a_forged_or_old_operator_cookie_gets_one_message_and_a_visitor(runs, shared, cookies, kind):
    _, value = _signed_in()
    cookies[identity.OPERATOR_COOKIE] = {"raw-token": OPERATOR,  # what older versions kept
                                         "forged": value.split(".")[0] + "." + "f" * 64,
                                         "made-up": "x" * 32 + "." + value.split(".")[1]}[kind]
    at = browser(THEIRS)
    assert [w.value for w in at.warning] == [identity.STALE_OPERATOR]
    assert not at.exception and listed(at) == {runs["theirs"]}
    assert not [w.value for w in at.warning]  # said once, not on every page


def test_sign_out_ends_the_operator_session_here_and_in_every_other_browser_session(runs, shared, cookies):
    at, value = _signed_in()
    cookies[identity.OPERATOR_COOKIE] = value
    other_tab = browser(THEIRS)
    assert other_tab.session_state["_operator"]
    goto(at, "settings")
    at.button(key="operator_sign_out").click().run()
    assert not at.exception and identity.SIGNED_OUT in infos(at)
    assert at.session_state["_cookie_writes"][identity.OPERATOR_COOKIE] == ""
    assert listed(at) == {runs["theirs"]}
    goto(at, "settings")
    assert "operator_sign_out" not in [b.key for b in at.button]
    other_tab.run()  # its next run (AppTest's page switches skip the entry file, a browser's do not)
    assert [w.value for w in other_tab.warning] == [identity.STALE_OPERATOR]  # it asked the store
    assert listed(other_tab) == {runs["theirs"]}
    assert identity.STALE_OPERATOR in [w.value for w in browser(THEIRS).warning]  # a reload, later


def test_a_personal_server_keeps_the_operators_sign_in_for_when_it_turns_shared(runs, monkeypatch):
    monkeypatch.delenv("RT_SHARED", raising=False)
    monkeypatch.setenv(deployment.OPERATOR_ENV, OPERATOR)
    deployment.OPERATOR.forget()
    try:
        at = browser(THEIRS, operator=OPERATOR)
        assert identity.PERSONAL_OPERATOR in infos(at) and "operator" not in at.query_params
        value = at.session_state["_cookie_writes"][identity.OPERATOR_COOKIE]
        assert value and OPERATOR not in value and at.session_state["_operator"]
        assert errors(browser(THEIRS, operator="not-the-operators-token")) == identity.WRONG_OPERATOR
    finally:
        deployment.OPERATOR.forget()
