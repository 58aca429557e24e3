"""Runs that can be linked and survive a new session (AppTest): the empty state a fresh
visitor sees, a `?run=ID` link's read-only view, a failed run's progress, and the Run
page's key caption agreeing with what Start does."""
from __future__ import annotations

import pytest

from rt_core.errors import Unreachable
from rt_core.types import Run, RunConfig, StageError
from tests.apphelp import errors, goto, infos, module_data_dir, new_app, shown

data_dir = module_data_dir("app-links")
SCRIPTED = "Scripted demo model (tests and demos, no real model)"
JARGON = ("--api-key-env", "RT_ALLOWED_BASE_URLS", "read · run")


@pytest.fixture(scope="module")
def model(module_demo):
    return module_demo


@pytest.fixture
def someone_elses_failed_run():
    """A failed run in the store, started by another visitor."""
    from rt_core.store import open_store

    s = open_store()
    run = Run(id="other0failed", config=RunConfig(researcher_ids=["r-neubig-graham"],
                                                  model="scripted/demo"),
              status="failed", created_at="2026-01-01T00:00:00+00:00",
              errors=[StageError("read", "run", "ProviderError", "the server went away")])
    s.runs.save(run)
    yield run
    s.runs.delete(run.id)


def test_a_fresh_visitor_gets_an_empty_state_not_someone_elses_run(someone_elses_failed_run):
    at = goto(new_app(), "results")
    assert "No run open yet" in infos(at)
    assert not at.selectbox  # nothing picked for them
    assert not any(m.label == "Status" for m in at.metric)
    links = {p.proto.page for p in at.get("page_link")}
    assert {"run", "history"} <= links, links


def test_a_run_link_opens_that_run_read_only(someone_elses_failed_run, monkeypatch):
    monkeypatch.setenv("RT_SHARED", "1")  # on a personal server the one user controls every run
    at = new_app()
    at.query_params["run"] = someone_elses_failed_run.id
    goto(at, "results")
    assert at.selectbox(key="results_pick").value == someone_elses_failed_run.id
    assert [m.value for m in at.metric if m.label == "Status"] == ["failed"]
    assert any("read-only" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == f"results_resume_{someone_elses_failed_run.id}"]
    # The stage error reads as the part of the run, not as "read · run".
    shown_errors = errors(at)
    assert "Reading: researcher profiles: the server went away" in shown_errors
    assert not any(j in shown_errors for j in JARGON)


def test_the_same_run_opened_from_history_has_its_controls(someone_elses_failed_run):
    """A personal server (the default): whoever sits at it controls every stored run."""
    at = new_app()
    at.session_state["results_run"] = someone_elses_failed_run.id
    goto(at, "results")
    assert at.button(key=f"results_resume_{someone_elses_failed_run.id}")
    assert not any("read-only" in c.value for c in at.caption)


def test_an_unknown_run_link_says_so_and_offers_the_way_on():
    at = new_app()
    at.query_params["run"] = "nosuchrun000"
    goto(at, "results")
    assert any("no run nosuchrun000" in shown(w.value) for w in at.warning)
    assert "No run open yet" in infos(at)


def test_a_failed_run_shows_where_it_failed_not_a_full_bar(model):
    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED).run()
    at.session_state["num_reviewers"] = 0
    at.run()
    model.responder = lambda messages, params: (_ for _ in ()).throw(
        Unreachable("nothing answers at the model's address"))
    try:
        at.button(key="run_start").click().run()
        job = at.session_state["jobs"][at.session_state["current_run"]]
        assert job.wait(timeout=120)
    finally:
        from rt_core.models.scripted import demo_responder
        model.responder = demo_responder
    at.run()
    assert job.run.status == "failed"
    overall = at.get("progress")[0]
    assert overall.value < 1.0 and "stopped at" in overall.proto.text
    label = " ".join(n.label for n in at.main if type(n).__name__ == "Status")
    assert "failed while Reading: researcher profiles" in label, label
    assert any("failed here" in m.value for m in at.markdown)
    from rt_core.store import open_store

    open_store().runs.delete(job.run_id)


def _run_page_with(model_name: str, base_url: str, key: str = "") -> object:
    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.session_state["provider"] = "Any OpenAI-compatible URL"
    at.session_state["model"] = model_name
    at.session_state["base_url"] = base_url
    at.session_state["api_key"] = key
    at.session_state["num_reviewers"] = 0
    at.run()
    return at


def test_the_key_caption_and_start_agree_at_a_typed_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-key")  # the operator's: not for this URL
    at = _run_page_with("openai/x", "http://127.0.0.1:9/v1")
    said = "\n".join(shown(w.value) for w in at.warning) + "\n".join(c.value for c in at.caption)
    assert "fine for a local server" not in said
    assert "Type a key for this server" in said or "type any text" in said.lower(), said
    at.button(key="run_start").click().run()
    assert "no API key for model 'openai/x'" in errors(at)
    hint = infos(at)
    assert "API key field" in hint and not any(j in hint + errors(at) for j in JARGON), hint


def test_with_a_typed_key_the_caption_and_start_both_let_it_go(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = _run_page_with("openai/x", "http://127.0.0.1:9/v1", key="none")
    assert not [w for w in at.warning if "key" in w.value.lower()]
    assert any("Using the API key from: typed in this browser session" in shown(c.value)
               for c in at.caption)
    # Start passes the key check (the run then fails at the first call: nothing listens).
    at.button(key="run_start").click().run()
    assert "no API key" not in errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=120)
    from rt_core.store import open_store

    open_store().runs.delete(job.run_id)


def test_a_missing_provider_key_is_said_in_the_apps_words(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = _run_page_with("gpt-4o-mini", "")
    assert any("No API key for this provider yet" in shown(w.value) for w in at.warning)
    at.button(key="run_start").click().run()
    assert "OPENAI_API_KEY is not set" in errors(at)
    assert "API key field" in infos(at) and "--api-key-env" not in infos(at)


def test_picking_another_run_is_not_pulled_back_by_the_address(someone_elses_failed_run):
    from rt_core.store import open_store

    s = open_store()
    second = Run(id="second0run00", config=someone_elses_failed_run.config, status="failed",
                 created_at="2026-01-02T00:00:00+00:00")
    s.runs.save(second)
    try:
        at = new_app()
        at.query_params["run"] = someone_elses_failed_run.id
        goto(at, "results")
        at.session_state["results_run"] = second.id  # opened from History meanwhile
        at.run()
        assert at.selectbox(key="results_pick").value == second.id
        at.selectbox(key="results_pick").select(someone_elses_failed_run.id).run()
        at.selectbox(key="results_pick").select(second.id).run()
        assert at.selectbox(key="results_pick").value == second.id
        assert at.query_params["run"] == [second.id] or at.query_params["run"] == second.id
    finally:
        s.runs.delete(second.id)
