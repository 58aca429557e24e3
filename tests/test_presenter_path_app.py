"""The presenter's path (issue 49, point 4) where it is decided on the server, through app.py
(AppTest): the Run box on Results switches runs, a steer reads as running with its expected
wall time, agents are named (a candidate's reviewer as "Name on c1"), a version's link is a
link, History's CSV keeps the estimate and the wall time, and a run's wall time is said in
the same words on the Run page, on Results and in History. The browser half (progress
brought into view, the map's colours and clean export) is tests/test_presenter_browser.py."""
from __future__ import annotations

import csv
import io
import threading

import pytest

from rt_core import agents
from rt_core.run.steer import job as steer_job
from tests.apphelp import PRESET, errors, goto, module_data_dir, new_app, shown, texts

data_dir = module_data_dir("presenter-path-app")
SCRIPTED = "Scripted demo model (tests and demos, no real model)"
HELD_FOR = 120  # s: the most the held model holds a call (a bound, not a sleep)
JOB_WAIT = 300  # s: the most a run or steer may take on a loaded machine


def _store():
    from rt_core.store import open_store

    return open_store()


def _finished_run(reviewers: int = 2):
    """A stored run with the scripted model, made without the app (as a CLI run would be)."""
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.types import RunConfig, RunRequest

    store = _store()
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                    paper_ids=preset["paper_ids"][:2], num_reviewers=reviewers)
    run = Simulation(RunRequest(cfg, max_retries=0), store).run_sync()
    assert run.status == "done", run.errors
    return run


def _estimate_said(at) -> bool:
    """The steer's estimate, in timing.Expected's words."""
    return any(shown(c.value).startswith(("This steer: expected wall time", "This steer: wall time not known"))
               for c in at.caption)


def _caption_names_run(at, run_id: str) -> bool:
    return any(shown(c.value).startswith(f"Run {run_id} · ") for c in at.caption)


def test_the_run_box_on_results_switches_to_the_run_picked_and_stays_there(module_demo):
    a, b = _finished_run(0), _finished_run(0)
    at = new_app()
    at.session_state["results_run"] = a.id
    goto(at, "results")
    at.session_state["results_run"] = b.id  # a second run opened (History's "Open in Results")
    at.run()
    assert _caption_names_run(at, b.id)
    assert len(at.selectbox(key="results_pick").options) == 2  # (the options as labelled)
    at.selectbox(key="results_pick").set_value(a.id).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="results_pick").value == a.id, "the box snapped back"
    assert _caption_names_run(at, a.id) and not _caption_names_run(at, b.id)
    at.run()  # any later rerun (a toggle, a refresh of the page) keeps the choice
    assert at.selectbox(key="results_pick").value == a.id and _caption_names_run(at, a.id)


def test_a_running_steer_reads_as_running_with_its_expected_wall_time_and_a_link(module_demo):
    from rt_core.models.scripted import demo_responder

    run = _finished_run()
    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    # The version's address is a link to open, not text to copy by hand.
    links = [b for b in at.get("link_button") if b.proto.label == "Link to this version"]
    assert len(links) == 1 and links[0].proto.url.endswith(f"/results?run={run.id}"), links
    assert _estimate_said(at), [shown(c.value) for c in at.caption]  # under the steer form
    at.text_area(key=f"steer_text_{run.id}_v0_1").input("How can agents read light curves?").run()
    gate = threading.Event()

    def held(messages: list, params: dict) -> str:
        gate.wait(HELD_FOR)  # answered once the test has looked at the page
        return demo_responder(messages, params)

    module_demo.responder = held
    try:
        at.button(key=f"steer_go_{run.id}").click().run()
        assert not at.exception and not at.error, errors(at)
        job = steer_job.live(run.id)
        assert job is not None and not job.done
        status = [n for n in at.main if type(n).__name__ == "Status"]
        assert len(status) == 1 and status[0].state == "running", [(s.label, s.state) for s in status]
        assert _estimate_said(at), [shown(c.value) for c in at.caption]  # in the run's words
    finally:
        gate.set()
        module_demo.responder = demo_responder
    assert job.wait(JOB_WAIT), "the steer did not finish"
    at.run()
    vid = at.radio(key=f"steer_pick_{run.id}").value
    links = [b for b in at.get("link_button") if b.proto.label == "Link to this version"]
    assert len(links) == 1 and links[0].proto.url.endswith(f"/results?run={run.id}&version={vid}")


def test_agent_names_read_as_people_and_candidates():
    names = {"r-jia-zhihao": "Zhihao  Jia"}
    assert agents.label("c1:r-jia-zhihao", names) == "Zhihao Jia on c1"
    assert agents.label("profile:r-jia-zhihao", names) == "Zhihao Jia"
    assert agents.label("r-jia-zhihao", names) == "Zhihao Jia"
    assert agents.label("c12", names) == "c12"
    assert agents.label("merge", names) == "merging near-duplicates"
    assert agents.label("c1:r-unknown", names) == "r-unknown on c1"  # no other name to give
    assert agents.people(["c1:r-jia-zhihao", "profile:r-b", "c2", "merge", "r-c"]) == \
        {"r-jia-zhihao", "r-b", "r-c"}


@pytest.fixture(scope="module")
def brainstorm(module_demo):
    """Two candidates started on the Run page (scripted model), finished, the page redrawn."""
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED).run()
    at.session_state["loop_candidates"] = 2
    at.session_state["loop_novelty"] = False
    at.session_state["num_reviewers"] = 2
    at.run()
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=JOB_WAIT), "the run did not finish"
    at.run()
    assert job.run.status == "done", job.run.errors
    return at, job


def test_progress_names_each_candidates_reviewer(brainstorm):
    at, job = brainstorm
    listed = "\n".join(texts(at))
    reviewers = {r.reviewer_id for c in job.run.candidates for r in c.reviews}
    assert reviewers, "the candidates were reviewed"
    names = _store().corpus.researcher_names(reviewers)
    assert all(f"{names[r]} on c1" in listed for r in reviewers), listed
    assert ":r-" not in listed and not any(f" {r}" in listed for r in reviewers), listed


def test_a_runs_wall_time_is_said_alike_on_run_results_and_history_and_kept_in_the_csv(brainstorm):
    from rt_core.export.run import stored_runs_csv

    at, job = brainstorm
    estimate, wall = _store().runs.wall_times([job.run_id])[job.run_id]
    assert wall is not None
    done = [shown(s.value) for s in at.success]
    assert len(done) == 1 and done[0].startswith("Done. Wall time: "), done
    said = done[0].removeprefix("Done. Wall time: ").split(". The proposal")[0]
    goto(at, "history")
    table = at.dataframe[0].value
    assert table.loc[table["id"] == job.run_id, "wall time"].item() == said
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    assert f"Wall time: {said}" in [shown(c.value) for c in at.caption]
    # History's download: the same words, and both figures as numbers for a spreadsheet.
    [row] = [r for r in csv.DictReader(io.StringIO(stored_runs_csv(_store(), [job.run_id]).decode()))]
    assert row["wall_time"] == said
    assert float(row["wall_seconds"]) == pytest.approx(wall, abs=0.06)
    assert (row["estimate_seconds"] == "") == (estimate is None)
