"""Steering on the Results page, through app.py (AppTest): the edit becomes a version
the run's reviewers review, picked in the tree, with its diff and its link."""
from __future__ import annotations

from tests.apphelp import errors, goto, module_data_dir, new_app, shown

data_dir = module_data_dir("steer-app")
NEW_Q1 = "How can light curves of variable stars test web agents for drift?"


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
    pick = at.radio(key=f"steer_pick_{run.id}")
    assert len(pick.options) == 2 and pick.value != "v0"  # the new version is picked
    assert any(NEW_Q1 in c.value and c.value.startswith("- ") for c in at.code)  # the Q1 diff
    reviews = [t.value for t in at.text if NEW_Q1 in t.value and "Clear research question" in t.value]
    assert len(reviews) == 2  # both reviewers reviewed the edited text
    assert any(f"version={pick.value}" in shown(c.value) for c in at.caption)  # its own link
