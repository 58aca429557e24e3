"""Issue 48, point 6, through the entry file (AppTest): the join code leaves the address, any
browser can leave the rating page for good, an owner is told their run is held by an open study,
and a visitor on a shared server sees no cache-hit count (rt_core.access decides each)."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import access, deployment
from rt_core.access import Viewer
from rt_core.export import run as export
from rt_core.types import Proposal, Run, RunConfig, Usage
from studio import rater_session
from tests.apphelp import APP, goto, infos, module_data_dir, record_downloads, shared_server
from tests.test_app_polish import at_root, rater_only

data_dir = module_data_dir("rater-knows")
OWNER, STRANGER = "owner-browser-token-000001", "stranger-browser-tok-00002"
OPERATOR = "operator-token-for-rater-knows-3"
HELD = "in a study that is still open"


def store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture(scope="module")
def study():
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs
    from tests.test_study import seed_runs

    return create_from_runs(store(), seed_runs(store()), StudySettings(name="Knows study"))


@pytest.fixture
def shared(monkeypatch):
    with shared_server(monkeypatch, OPERATOR):
        yield


def browser(token: str | None = None, page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if token:
        at.session_state["_owner_token"] = token
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return goto(at, page) if page else at


# -- (b) the rating page: the code out of the address, and a way out -------------------------------
def test_the_join_code_is_read_once_and_leaves_the_address(study):
    at = browser(study=study["code"])
    assert rater_only(at)
    assert "study" not in at.query_params  # read, then out of the address bar
    assert at.text_input(key="rate_code").value == study["code"]  # ...and still filled in
    assert rater_only(at.run())


def test_leaving_the_study_gives_the_whole_app_back_and_takes_the_cookie_away(study, monkeypatch):
    cookie = []
    monkeypatch.setattr(rater_session, "joined_before", lambda: True)  # the cookie read at connect
    monkeypatch.setattr(rater_session, "remember", lambda rater=True: cookie.append(rater))
    at = browser(study=study["code"])
    at.text_input(key="rate_rater_input").input("opx")
    next(b for b in at.button if b.label == "Start or resume").click().run()
    assert at.button(key="rate_leave_study")  # also while an item is on screen
    at.button(key="rate_leave_study").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at_root(at)  # the next address typed: the cookie this session read still says "rater"
    assert not rater_only(at)
    assert cookie[-1] is False, cookie  # and the browser is told to drop it
    assert "rate_study" not in at.session_state and "_joined_as_rater" not in at.session_state


# -- (c) an owner whose run is an item of an open study ---------------------------------------------
def _run(run_id: str, token: str, hits: int = 0) -> str:
    run = Run(id=run_id, config=RunConfig(model="scripted/demo", mode="global", reference_paper_id="p-gaia"),
              status="done", created_at="2026-01-03T00:00:00+00:00", usage=Usage(calls=12, cache_hits=hits))
    run.proposal = Proposal(*(f"Answer {k} of {run_id}" for k in range(1, 6)))
    store().runs.create(run, owner_hash=deployment.token_hash(token))
    return run_id


def test_an_owner_is_told_their_run_is_held_by_an_open_study(shared):
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs

    held = [_run("held0item001", OWNER), _run("held0item002", STRANGER)]
    made = create_from_runs(store(), held, StudySettings(name="Held", mode="absolute"), real_arm=False)
    at = browser(OWNER, "history")
    assert HELD in infos(at) and "1 run this browser started" in infos(at)
    assert "started no run yet" not in infos(at)
    assert "held0item001" not in str(at.dataframe[0].value if at.dataframe else "")
    assert HELD in infos(browser(OWNER, "results"))
    assert HELD not in infos(browser("another-browser-tok-000004", "history"))  # nobody else is told
    assert access.hidden_own(Viewer(shared=True, operator=True, owner_hash=deployment.token_hash(OWNER)),
                             {"held0item001": deployment.token_hash(OWNER)},
                             {"held0item001": frozenset({made["id"]})}) == 0  # the operator sees it
    store().studies.set_status(made["id"], "closed")
    at = browser(OWNER, "history")
    assert HELD not in infos(at) and "held0item001" in set(at.dataframe[0].value["id"])


# -- (d) cache hits: shown to the privileged only -------------------------------------------------
def test_cache_hits_are_shown_only_to_the_privileged():
    assert access.shows_cache_hits(Viewer(shared=False))
    assert access.shows_cache_hits(Viewer(shared=True, operator=True))
    assert not access.shows_cache_hits(Viewer(shared=True, owner_hash="x" * 20))
    run = Run(id="r1", config=RunConfig(model="scripted/demo"), usage=Usage(calls=3, cache_hits=8))
    assert "cache hits 8" in export.run_markdown(run)
    assert "cache hits" not in export.run_markdown(run, cache_hits=False)
    assert "cache_hits" not in json.loads(export.run_json(run, cache_hits=False))["usage"]
    assert json.loads(export.run_json(run))["usage"]["cache_hits"] == 8


def test_a_visitors_run_and_its_exports_show_no_cache_hits_on_a_shared_server(shared, monkeypatch):
    downloads = record_downloads(monkeypatch)
    rid = _run("hits0visit01", STRANGER, hits=8)
    at = browser(STRANGER, "results", run=rid)
    assert not at.exception, [e.value for e in at.exception]
    md = downloads[f"researchtown-{rid}.md"].decode() if isinstance(downloads[f"researchtown-{rid}.md"], bytes) \
        else downloads[f"researchtown-{rid}.md"]
    assert "cache hits" not in md and "_calls 12" in md
    assert "cache_hits" not in str(downloads[f"researchtown-{rid}.json"])
    assert not any("cache hits" in (m.help or "") for m in at.metric)
    downloads.clear()
    browser(STRANGER, "results", run=rid, operator=OPERATOR)  # the operator's browser: the count is theirs
    assert "cache hits 8" in str(downloads[f"researchtown-{rid}.md"])


def _start_run(token: str) -> tuple[AppTest, str]:
    at = browser(token)
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.selectbox(key="provider").select("Scripted demo model (tests and demos, no real model)").run()
    at.session_state["num_reviewers"] = 0
    at.run()
    at.button(key="run_start").click().run()
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, job.run_id


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_visitors_live_run_shows_no_cache_hits_from_a_run_before_it(module_demo, shared):
    """The issue's walk: somebody ran the case study; a visitor running the same model and mode
    was answered from the cache, and the Run page said how often."""
    _start_run(OWNER)
    at, rid = _start_run(STRANGER)
    assert store().runs.load(rid).usage.cache_hits > 0  # the leak is there to be shown
    assert metric(at, "Cache hits") == "not shown"
    assert not any("♻️" in m.value for m in at.markdown)
