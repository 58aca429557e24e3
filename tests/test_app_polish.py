"""What a new user trips over (AppTest through app.py): a page opened cold by its address,
a rater who types the root address, the app's words for a stored hint, an organiser token
for an older study, a candidates study's organiser panel."""
from __future__ import annotations

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from rt_core.types import Run, RunConfig, StageError
from tests.apphelp import APP, module_data_dir

data_dir = module_data_dir("app-polish")
APP_NAME = "ResearchTown Studio"


@pytest.fixture
def stored_run():
    from rt_core.store import open_store

    s = open_store()
    run = Run(id="polish0run", config=RunConfig(researcher_ids=["r-neubig-graham"], model="scripted/demo"),
              status="failed", created_at="2026-01-01T00:00:00+00:00",
              errors=[StageError("read", "run", "ProviderError", "the server went away")])
    s.runs.save(run)
    yield run
    s.runs.delete(run.id)


def cold_open(page: str, **params) -> AppTest:
    """The first request of a freshly started server is this page's address: Streamlit
    decides then whether it is in its legacy `pages/` mode (PagesManager's flag, unset)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("page", ["results", "run", "replay", "history"])
def test_a_page_opened_by_its_address_on_a_fresh_server_is_set_up(page, stored_run, monkeypatch):
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    at = cold_open(page, run=stored_run.id)
    assert not at.exception, [e.value for e in at.exception]
    assert any(APP_NAME in m.value for m in at.markdown)  # app.py ran: its frame and navigation
    if page == "results":
        assert at.selectbox(key="results_pick").value == stored_run.id


@pytest.fixture(scope="module")
def study():
    from rt_core.store import open_store
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings
    from tests.test_study import seed_runs

    s = open_store()
    runs = seed_runs(s)
    made = create_from_runs(s, runs, StudySettings(name="Polish", mode="pairwise"))
    return {"code": made["code"], "id": made["id"], "token": made["organiser_token"], "runs": runs}


def joined_rater(code: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["study"] = code
    at.run()
    at.text_input(key="rate_rater_input").input("rater-polish")
    next(b for b in at.button if b.label == "Start or resume").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rater_only(at: AppTest) -> bool:
    """The rating page alone: app.py stopped before its frame (the app's name, the navigation)."""
    alone = [t.value for t in at.title] == ["Rate proposals"] and not at.get("page_link")
    return alone and not any(APP_NAME in m.value for m in at.markdown)


def at_root(at: AppTest, **params) -> AppTest:
    """The root address typed into the same session, with these parameters only."""
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page("app.py")
    return at.run()


def test_a_rater_who_types_the_root_address_still_sees_only_the_rating_page(study):
    at = joined_rater(study["code"])
    assert rater_only(at)
    at_root(at)
    assert not at.exception, [e.value for e in at.exception]
    assert rater_only(at)
    assert not any("History" in m.value for m in at.markdown)


def test_the_organiser_in_the_same_session_gets_the_whole_app_back(study):
    at = joined_rater(study["code"])
    assert not rater_only(at_root(at, organiser=study["token"]))
    assert "_joined_as_rater" not in at.session_state  # no longer a rater's, for the rest of the session


def test_a_candidates_study_says_it_takes_no_other_runs_instead_of_offering_them(study):
    from rt_core.errors import InputError
    from rt_core.store import open_store
    from rt_core.study.candidates import create_from_candidates
    from rt_core.study.create import add_runs
    from tests.candidates_run import brainstorm_run

    s = open_store()
    run = brainstorm_run("polish0cands")
    s.runs.save(run)
    made = create_from_candidates(s, run)
    other = s.studies.items(study["id"])  # a run of the study of runs, with a proposal
    some_run = next(i.run_id for i in other.values() if i.run_id)
    with pytest.raises(InputError) as raised:
        add_runs(s, made["id"], [some_run])
    assert "candidates" in str(raised.value) and "arm" not in str(raised.value)
    assert "Create a study page" in raised.value.hint
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["organiser"] = made["organiser_token"]
    at.run()
    at.switch_page("pages/study_results.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="study_id").value == made["id"]
    assert not [m for m in at.multiselect if m.key == f"sr_more_{made['id']}"]
    assert any("takes no other runs" in c.value for c in at.caption)


def test_a_run_stopped_by_its_budget_shows_the_apps_words_and_the_cli_keeps_its_own(community, demo):
    from rt_core.run.pipeline import budget
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import open_store
    from rt_core.types import RunRequest
    from tests.apphelp import goto, new_app, shown

    cfg = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                    num_reviewers=0, max_tokens=0)
    cfg.max_tokens = budget.estimate(cfg, community).total.tokens // 2
    stopped = Simulation(RunRequest(cfg, max_retries=0), community).run_sync()
    err = stopped.errors[-1]
    assert stopped.status == "failed" and err.kind == "BudgetExceeded"
    assert f"python -m rt_core resume {stopped.id} --max-tokens" in err.hint  # the CLI's words, unchanged
    app = open_store()
    stopped.version = 0  # a new row in the app's store
    app.runs.save(stopped)
    try:
        at = new_app()
        at.session_state["opened_runs"] = [stopped.id]  # opened from History: its controls
        at.query_params["run"] = stopped.id
        goto(at, "results")
        hints = [shown(c.value) for c in at.caption if c.value.startswith("💡")]
        assert hints and all("python -m" not in h and "--max" not in h for h in hints), hints
        assert any("larger budget on the Run page" in h for h in hints), hints
    finally:
        app.runs.delete(stopped.id)


def test_an_older_study_without_an_organiser_token_gets_one_from_the_command_line(study, capsys):
    from rt_core.__main__ import main
    from rt_core.store import open_store
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings
    s = open_store()
    old = create_from_runs(s, study["runs"], StudySettings(name="Before tokens", mode="pairwise"))
    with s.transaction() as db:  # as the m009 migration left a study made before it
        db.execute("UPDATE studies SET organiser_hash=NULL WHERE id=?", (old["id"],))
    assert s.studies.by_organiser_token(old["organiser_token"]) is None
    assert main(["study-token", old["code"].lower()]) == 0
    printed = capsys.readouterr().out
    token = printed.split("shown once: ", 1)[1].split()[0]
    assert f"study_results?organiser={token}" in printed
    assert open_store().studies.by_organiser_token(token)["id"] == old["id"]
    # Never replaced: a second call (or anyone else's) cannot take the study from its organiser.
    assert main(["study-token", old["code"]]) == 2
    assert "already has an organiser token" in capsys.readouterr().err
    assert open_store().studies.by_organiser_token(token)["id"] == old["id"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["organiser"] = token
    at.run()
    at.switch_page("pages/study_results.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="study_id").value == old["id"]


def test_run_page_settings_survive_other_pages_and_are_not_sent_back_on_a_rerun():
    """The settings' widgets keep their values through Streamlit's persist_state (studio/
    persist.py): a trip to another page, with two runs there, and back keeps them, and a
    rerun of the Run page itself sends none of them back to the browser. The browser test
    (tests/test_settings_browser.py) reads the same from the websocket, where the old
    write-back was seen sending every field again."""
    from tests.apphelp import goto, new_app

    at = goto(new_app(), "run")
    at.text_input(key="base_url").input("http://127.0.0.1:9/v1").run()
    at.text_input(key="model").input("openai/some-model").run()  # the next field's own rerun
    assert not at.exception, [e.value for e in at.exception]
    for key in ("base_url", "model", "provider"):
        widget = at.text_input(key=key) if key != "provider" else at.selectbox(key=key)
        assert not widget.proto.set_value, f"{key} was echoed back on a rerun of the Run page"
    assert at.text_input(key="base_url").value == "http://127.0.0.1:9/v1"
    goto(at, "results")
    at.run()  # a second run of another page: the values must still be kept
    goto(at, "run")
    assert at.text_input(key="base_url").value == "http://127.0.0.1:9/v1"
    assert at.text_input(key="model").value == "openai/some-model"
    assert at.text_input(key="base_url").proto.set_value  # arriving again
