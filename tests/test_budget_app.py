"""The Run page's budget block (AppTest): the estimate before Start, the cap field, and a
cap smaller than one call refused with one message before any call."""
from __future__ import annotations

import pytest

from tests.apphelp import PRESET, captions, errors, goto, module_data_dir, new_app, run_page

data_dir = module_data_dir("budget-app")


@pytest.fixture
def model(demo):
    return demo




def test_the_run_page_shows_the_estimate_and_refuses_a_tiny_cap(model):
    at = run_page()
    assert "Estimate:" in captions(at) and "model calls" in captions(at)
    at.number_input(key="cap_tokens_field").set_value(40).run()
    at.button(key="run_start").click().run()
    assert "smaller than one model call" in errors(at)
    assert model.history == [] and not at.session_state["jobs"]


def test_the_cap_field_travels_in_the_runs_config(model):
    from rt_core.store import open_store

    at = run_page()
    at.session_state["num_reviewers"] = 0
    at.number_input(key="cap_tokens_field").set_value(500_000).run()
    at.button(key="run_start").click().run()
    assert not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300)
    run = open_store().runs.load(job.run_id)
    assert run.status == "done" and run.config.max_tokens == 500_000 and run.config.max_cost is None


def test_a_run_stopped_by_its_budget_resumes_in_the_app_with_the_run_pages_larger_cap(model):
    from rt_core.store import open_store

    at = run_page()
    at.session_state["num_reviewers"] = 0
    at.number_input(key="cap_tokens_field").set_value(3000).run()
    at.button(key="run_start").click().run()
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300)
    store = open_store()
    stopped = store.runs.load(job.run_id)
    assert stopped.status == "failed" and stopped.errors[-1].kind == "BudgetExceeded"
    made = len(model.history)
    at.run()
    at.number_input(key="cap_tokens_field").set_value(1_000_000).run()
    goto(at, "history")
    at.selectbox(key="hist_pick").set_value(job.run_id).run()
    at.button(key="hist_resume").click().run()
    again = at.session_state["jobs"][job.run_id]
    assert again is not job and again.wait(timeout=300)
    done = store.runs.load(job.run_id)
    assert done.status == "done", (done.errors, done.config)
    assert done.config.max_tokens == 1_000_000
    assert done.usage.calls == len(model.history) - made  # only what had not been asked


def test_the_shared_demos_allowance_stops_a_run_without_being_its_cap(model, monkeypatch):
    """RT_DEMO_MAX_TOKENS (per visitor and UTC day, rt_core.allowance) refuses a Start whose
    first step it cannot pay for, and stops a run that crosses it after the calls in flight;
    it is not copied into the run's own cap, which the visitor may still set."""
    from rt_core.store import open_store

    monkeypatch.setenv("RT_DEMO", "1")
    monkeypatch.setenv("RT_DEMO_MODEL", "scripted/demo")
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "2000")
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    start = at.button(key="run_start")
    assert start.disabled and "too small for today" in start.help, "2,000 tokens cannot pay for the first step"
    assert "larger budget" not in start.help
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "9000")  # the first step fits, the whole run does not
    at.session_state["temperature"] = 0.55  # no call answered by the cache of this module's runs
    at.run()
    at.button(key="run_start").click().run()
    assert not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300)
    run = open_store().runs.load(job.run_id)
    assert run.config.max_tokens is None
    assert run.status == "failed" and run.errors[-1].kind == "AllowanceSpent"
    assert run.usage.prompt_tokens + run.usage.completion_tokens >= 9000
