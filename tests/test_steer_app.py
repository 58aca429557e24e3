"""Steering on the Results page, through app.py (AppTest): the edit becomes a version
the run's reviewers review, picked in the tree, with its diff and its link; the steer
runs as a background job that a reload finds again."""
from __future__ import annotations

import threading

from rt_core.run.steer import job as steer_job
from tests.apphelp import errors, goto, module_data_dir, new_app, shown

data_dir = module_data_dir("steer-app")
NEW_Q1 = "How can light curves of variable stars test web agents for drift?"
HELD_Q1 = "Can the drift of a web agent be read like a light curve of a star?"  # under 16 words: quoted whole
JOB_WAIT = 300  # s: the most a steer job may take on a loaded machine (a bound, not a sleep)
# s: the most the held model holds a call. Only a page that waited for the steer itself
# reaches it: the steer then ends inside the click, and `not job.done` below fails.
HELD_FOR = 120


def finished_run():
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import open_store
    from rt_core.types import RunConfig, RunRequest

    store = open_store()
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                    paper_ids=preset["paper_ids"][:2], num_reviewers=2)
    return Simulation(RunRequest(cfg, max_retries=0), store).run_sync()


def test_an_edit_becomes_a_reviewed_version_of_the_tree(module_demo):
    run = finished_run()
    assert run.status == "done", run.errors
    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    pick = at.radio(key=f"steer_pick_{run.id}")
    assert len(pick.options) == 1 and pick.value == "v0" and "Versions" in [h.value for h in at.header]
    at.text_area(key=f"steer_text_{run.id}_v0_1").input(NEW_Q1).run()
    at.button(key=f"steer_go_{run.id}").click().run()
    assert not at.exception and not at.error, errors(at)
    assert steer_job.live(run.id).wait(JOB_WAIT), "the steer did not finish"
    at.run()
    pick = at.radio(key=f"steer_pick_{run.id}")
    assert len(pick.options) == 2 and pick.value != "v0"  # the new version is picked
    assert any(NEW_Q1 in c.value and c.value.startswith("- ") for c in at.code)  # the Q1 diff
    reviews = [t.value for t in at.text if NEW_Q1 in t.value and "Clear research question" in t.value]
    assert len(reviews) == 2  # both reviewers reviewed the edited text
    assert any(f"version={pick.value}" in shown(c.value) for c in at.caption)  # its own link


def _results(run_id: str, address: bool = False):
    """Results of the run: this session's (by its state) or a reload's (by the address)."""
    at = new_app()
    if address:
        at.query_params["run"] = run_id
    else:
        at.session_state["results_run"] = run_id
    return goto(at, "results")


def test_a_steer_is_a_background_job_whose_version_lands_in_the_tree(module_demo):
    """The model is held until the test lets it answer, so the page is seen while the steer
    is still running: the click returns at once with the progress and without the form,
    a reload shows the same live steer; once the job is done both pages show the new
    version, picked, with the reviews of the edited text."""
    from rt_core.models.scripted import demo_responder

    run = finished_run()
    assert run.status == "done", run.errors
    gate = threading.Event()
    at = _results(run.id)
    at.text_area(key=f"steer_text_{run.id}_v0_1").input(HELD_Q1).run()

    def held(messages: list, params: dict) -> str:
        gate.wait(HELD_FOR)  # answered once the test has looked at the page
        return demo_responder(messages, params)

    module_demo.responder = held
    try:
        at.button(key=f"steer_go_{run.id}").click().run()  # returns while every model call waits
        assert not at.exception and not at.error, errors(at)
        job = steer_job.live(run.id)
        assert job is not None and not job.done
        assert "Steering this run" in [h.value for h in at.subheader]
        assert not [b for b in at.button if b.key == f"steer_go_{run.id}"]  # one steer at a time
        assert len(at.radio(key=f"steer_pick_{run.id}").options) == 1  # nothing stored yet
        again = _results(run.id, address=True)  # a reload: a new session, the address only
        assert "Steering this run" in [h.value for h in again.subheader]
    finally:
        gate.set()
        module_demo.responder = demo_responder
    assert job.wait(JOB_WAIT), "the steer did not finish"
    assert job.error is None and not job.unexpected, (job.error, job.unexpected)
    for page in (at.run(), again.run()):
        assert not page.exception and not page.error, errors(page)
        pick = page.radio(key=f"steer_pick_{run.id}")
        assert len(pick.options) == 2 and pick.value == job.steered.last.id
        reviews = [t.value for t in page.text if f'Clear research question: "{HELD_Q1}"' in t.value]
        assert len(reviews) == 2
        assert [b for b in page.button if b.key == f"steer_go_{run.id}"]  # the form is back
