"""The presenter's path (issue 26, point 5) and the headline of a base-model run (point 4),
through the app (AppTest): a running run reads as running to whoever watches it, an unknown
run link gets one message, a base model's run leads with what was measured, and refusals
name people."""
from __future__ import annotations

import threading

import pytest

from rt_core.types import MetaReview, Proposal, Review, Run, RunConfig
from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("presenter-app")
SCRIPTED = "Scripted demo model (tests and demos, no real model)"
ANSWERS = {"q1": "How can language agents classify stellar spectra?", "q2": "Surveys are large.",
           "q3": "Labels are rare.", "q4": "The fields are apart.", "q5": "We will label spectra."}


@pytest.fixture(scope="module")
def model(module_demo):
    return module_demo


def _store():
    from rt_core.store import open_store

    return open_store()


def _status(at):
    return next(n for n in at.main if type(n).__name__ == "Status")


def test_a_shared_view_of_a_running_run_shows_it_running_not_done(model, monkeypatch):
    from rt_core.models.scripted import demo_responder

    monkeypatch.setenv("RT_SHARED", "1")  # the watcher is another browser, read-only
    gate, entered = threading.Event(), threading.Event()

    def blocking(messages, params):
        entered.set()
        gate.wait(timeout=120)
        return demo_responder(messages, params)

    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED).run()
    at.session_state["num_reviewers"] = 0
    at.run()
    model.responder = blocking
    try:
        at.button(key="run_start").click().run()
        run_id = at.session_state["current_run"]
        assert entered.wait(timeout=120), "the model was never called"
        watcher = new_app()
        watcher.query_params["run"] = run_id
        goto(watcher, "run")
        assert any("watching a run started elsewhere" in c.value for c in watcher.caption)
        status = _status(watcher)
        assert status.label.startswith("Running") and status.state == "running", (status.label, status.state)
        at.run()
        assert _status(at).state == "running"  # and so does the page that started it
    finally:
        gate.set()
        model.responder = demo_responder
    job = at.session_state["jobs"][run_id]
    assert job.wait(timeout=120)
    _store().runs.delete(run_id)


def test_an_unknown_run_link_on_the_run_page_gets_one_message():
    at = new_app()
    at.query_params["run"] = "does-not-exist"
    goto(at, "run")
    said = [shown(w.value) for w in at.warning]
    assert len(said) == 1 and said[0].startswith("There is no run does-not-exist here"), said
    assert not any("not going in this app" in c.value for c in at.caption)


def _stored_run(run_id: str, model_name: str) -> Run:
    run = Run(id=run_id, config=RunConfig(researcher_ids=["r-neubig-graham"], model=model_name),
              status="done", created_at="2026-01-02T00:00:00+00:00",
              proposal=Proposal(**ANSWERS),
              reviews=[Review("r-chen-beidi", "- The proposal is clear.", "- However, it is vague.", 8,
                              checked=["weaknesses"]),
                       Review("r-zhao-wayne-xin", "- The proposal is new.", "- However, it is small.", 9)],
              meta_review=MetaReview("- clear", "- vague", 8.5))
    _store().runs.save(run)
    return run


@pytest.fixture
def two_runs():
    base, chat = _stored_run("base00model0", "local/gemma-3-270m"), _stored_run("chat00model0", "scripted/demo")
    yield base, chat
    for r in (base, chat):
        _store().runs.delete(r.id)


def test_a_base_model_run_leads_with_what_was_measured(two_runs):
    base, chat = two_runs
    at = new_app()
    at.session_state["results_run"] = base.id
    goto(at, "results")
    labels = [m.label for m in at.metric]
    assert "Mean review score" not in labels
    assert labels[:3] == ["Status", "Questions answered", "Sections written"], labels
    values = {m.label: m.value for m in at.metric}
    assert values["Questions answered"] == "5 of 5" and values["Sections written"] == "3 of 4"
    worth = next(c.value for c in at.caption if c.value.startswith("Mean review score 8.5"))
    assert "close to noise" in worth and "8, 9" in worth
    # An instruction model's run keeps its score in the headline.
    at = new_app()
    at.session_state["results_run"] = chat.id
    goto(at, "results")
    assert "Mean review score" in [m.label for m in at.metric]
    # History: the side-by-side comparison and the note under the table.
    at = goto(new_app(), "history")
    at.selectbox(key="hist_cmp_a").select(base.id)
    at.selectbox(key="hist_cmp_b").select(chat.id).run()
    labels = [m.label for m in at.metric]
    assert "Questions answered" in labels and labels.count("Mean score") == 1, labels
    assert any("close to noise" in c.value and "local/gemma-3-270m" in c.value for c in at.caption)


def test_refusals_name_people_not_ids(community):
    from rt_core.errors import InputError
    from rt_core.models.facts import facts_for
    from rt_core.run.evidence.evaluate import evaluate_against
    from rt_core.run.pipeline.validation import validate
    from rt_core.types import Profile, RunRequest

    run = Run(id="masked", config=RunConfig(researcher_ids=["r-ada"]), proposal=Proposal(**ANSWERS),
              profiles={"r-ada": Profile("r-ada", "Ada Astro publishes in Astronomy.", "m", ["p-gaia"])})
    with pytest.raises(InputError) as got:
        evaluate_against(run, "p-gaia", RunRequest(run.config), community)
    assert "profile of Ada Astro" in str(got.value) and "r-ada" not in str(got.value)
    with pytest.raises(InputError) as got:
        clash = RunConfig(researcher_ids=["r-ada"], reviewer_ids=["r-ada"])
        validate(clash, community, facts_for(clash))
    assert "Ada Astro" in str(got.value) and "r-ada" not in str(got.value)
