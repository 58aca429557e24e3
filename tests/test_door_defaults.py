"""Every door that starts work, left at its own defaults on a case study, finishes on the scripted
model: each command of the command line (rt_core's `main`, in this process) and each page's
button (AppTest through the entry file), the pages on a personal and on a shared server, where
the work is also listed in the History of the browser that started it.

The pages start from the app's own brainstorm defaults (four candidates, the novelty check, a
revision round: the app's ideate and novelty doors), not the plain run the rest of the suite
gives its apps (conftest). With those, Replay once failed in every mode (it forced 0 reviewers
and kept the Run page's revision round), and on a shared server it stored its runs without an
owner, so its starter never found them."""
from __future__ import annotations

import importlib
import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import community, deployment
from rt_core.__main__ import main
from studio import loop_settings, state
from tests.apphelp import APP, PRESET, SCRIPTED_PRESET, errors, goto, module_data_dir

data_dir = module_data_dir("door-defaults")
TOKEN = "door-defaults-browser-token-0001"  # what the starting browser's owner cookie holds
OPERATOR = "door-defaults-operator-token-0002"
JOB_WAIT = 600  # s: the most one door's work may take on a loaded machine (a bound, not a sleep)
NEW_Q1 = "Can the drift of a web agent be read like the light curve of a variable star?"
LOOP_VARS = ("RT_APP_CANDIDATES", "RT_APP_ROUNDS", "RT_APP_NOVELTY")

CLI_DOORS = ("run", "ideate", "replay", "bench", "steer", "revise", "credit", "novelty")
PAGE_DOORS = ("run", "replay", "steer", "revise", "credit")
DOORS = [f"cli-{d}" for d in CLI_DOORS] + [f"page-{d}-{m}" for m in ("personal", "shared") for d in PAGE_DOORS]


_STORE = []


def store():
    """The app's store (the module's data folder), opened once."""
    from rt_core.store import open_store

    if not _STORE:
        _STORE.append(open_store())
    return _STORE[0]


def case_study() -> tuple[list[str], list[str]]:
    p = community.preset(PRESET)
    return p["researcher_ids"], p["paper_ids"]


# -- the command line -----------------------------------------------------------------------
def cli(*argv: str) -> int:
    """A command on the app's store (the data folder's, as without --db)."""
    return main(list(argv))


def cli_run(tmp_path) -> str:
    """`run` on the case study with every default but the model: the stored run's id."""
    researchers, papers = case_study()
    out = tmp_path / "run.json"
    assert cli("run", "--researchers", ",".join(researchers), "--papers", ",".join(papers),
               "--model", "scripted/demo", "--out-json", str(out)) == 0
    run_id = json.loads(out.read_text())["id"]
    assert store().runs.load(run_id).status == "done"
    return run_id


def cli_door(door: str, tmp_path) -> None:
    researchers, papers = case_study()
    target = community.replay_targets()[0]["paper_id"]
    if door == "run":
        cli_run(tmp_path)
    elif door == "ideate":
        assert cli("ideate", "--researchers", ",".join(researchers), "--papers", ",".join(papers),
                   "--model", "scripted/demo", "--out-dir", str(tmp_path)) == 0
        run_id = json.loads((tmp_path / "ideate.json").read_text())["id"]
        assert store().runs.load(run_id).status == "done"
    elif door == "replay":  # exit code 0: every mode's run is done
        assert cli("replay", target, "--model", "scripted/demo", "--json") == 0
    elif door == "bench":
        tasks = tmp_path / "tasks.jsonl"
        tasks.write_text(json.dumps({"paper_id": target}) + "\n")
        assert cli("bench", str(tasks), "--model", "scripted/demo", "--out", str(tmp_path / "out"),
                   "--no-progress") == 0
    elif door == "steer":
        run_id = cli_run(tmp_path)
        assert cli("steer", run_id, "--question", "1", "--text", NEW_Q1) == 0
        assert store().runs.load(run_id).status == "done"
    elif door == "revise":
        run_id = cli_run(tmp_path)
        assert cli("revise", run_id) == 0
        run = store().runs.load(run_id)
        assert run.status == "done" and [r.number for r in run.rounds] == [0, 1]
    elif door == "credit":
        run_id = cli_run(tmp_path)
        assert cli("credit", run_id, "--out-dir", str(tmp_path), "--no-progress") == 0
        assert store().runs.load(run_id).credit
    elif door == "novelty":
        run_id = cli_run(tmp_path)
        proposal = tmp_path / "proposal.md"
        proposal.write_text(store().runs.load(run_id).proposal.to_markdown(), "utf-8")
        assert cli("novelty", str(proposal), "--out", str(tmp_path / "novelty.json")) == 0
        assert json.loads((tmp_path / "novelty.json").read_text())["facets"]


# -- the pages ------------------------------------------------------------------------------
@pytest.fixture
def app_defaults():
    """The app's own defaults for the brainstorm loop, as an operator who sets none gets them."""
    saved = {v: os.environ.pop(v) for v in LOOP_VARS if v in os.environ}
    importlib.reload(loop_settings)
    before = dict(state.PERSISTENT)
    state.PERSISTENT.update(loop_settings.DEFAULTS)
    yield
    os.environ.update(saved)
    importlib.reload(loop_settings)
    state.PERSISTENT.clear()
    state.PERSISTENT.update(before)


@pytest.fixture
def server_mode(monkeypatch):
    """Set the server's mode: shared (RT_SHARED=1, with an operator token) or personal."""
    def set_mode(mode: str) -> None:
        if mode == "shared":
            monkeypatch.setenv("RT_SHARED", "1")
            monkeypatch.setenv(deployment.OPERATOR_ENV, OPERATOR)
        else:
            monkeypatch.delenv("RT_SHARED", raising=False)
        deployment.OPERATOR.forget()

    yield set_mode
    deployment.OPERATOR.forget()


def browser(page: str | None = None) -> AppTest:
    """The starting browser (its owner cookie's token), a new session of it."""
    at = AppTest.from_file(APP, default_timeout=JOB_WAIT)
    at.session_state["_owner_token"] = TOKEN
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return goto(at, page) if page else at


def ok(at: AppTest) -> None:
    assert not at.exception and not at.error, ([e.value for e in at.exception], errors(at))


def listed() -> set[str]:
    """The runs History lists for the starting browser, in a new session of it."""
    at = browser("history")
    return set(at.dataframe[0].value["id"]) if at.dataframe else set()


def run_page(at: AppTest) -> str:
    """Load the case study, pick the scripted model, press Start with the rest as it is."""
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED_PRESET).run()
    at.button(key="run_start").click().run()
    ok(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(JOB_WAIT) and job.error is None and not job.unexpected, (job.error, job.unexpected)
    at.run()
    ok(at)
    run = store().runs.load(job.run_id)
    assert run.status == "done", run.errors
    assert (run.config.candidates, run.config.check_novelty, run.config.revision_rounds) == \
        (4, True, 1), "the app's own defaults"
    return job.run_id


def page_door(door: str) -> list[str]:
    """Drive one page's door; the ids of the runs it made or changed."""
    at = browser()
    if door == "replay":
        at.button(key=f"preset_{PRESET}").click().run()
        goto(at, "run")
        at.selectbox(key="provider").select(SCRIPTED_PRESET).run()  # Replay uses the Run page's model
        goto(at, "replay")
        at.button(key="replay_start").click().run()
        ok(at)
        job = at.session_state["replay_jobs"][at.session_state["replay_current"]]
        assert job.wait(JOB_WAIT) and job.error is None and not job.unexpected, (job.error, job.unexpected)
        at.run()
        ok(at)
        rows = job.result.rows()
        assert len(rows) == 4 and all(r["status"] == "done" for r in rows), [r["error"] for r in rows]
        at.button(key="replay_open").click().run()  # a mode's run, one click away on Results
        ok(at)
        assert at.selectbox(key="results_pick").value == rows[0]["run_id"]
        return [r["run_id"] for r in rows]
    run_id = run_page(at)
    if door == "run":
        return [run_id]
    goto(at, "results")
    ok(at)
    if door == "steer":
        at.text_area(key=f"steer_text_{run_id}_v0_1").input(NEW_Q1).run()
        at.button(key=f"steer_go_{run_id}").click().run()
        ok(at)
        from rt_core.run.steer import job as steer_job

        job = steer_job.live(run_id)
        assert job.wait(JOB_WAIT) and job.error is None and not job.unexpected, (job.error, job.unexpected)
        assert job.steered.nodes
    elif door == "revise":
        at.button(key=f"revise_more_go_{run_id}").click().run()
        ok(at)
        job = at.session_state["jobs"][run_id]
        assert job.kind == "revise" and job.wait(JOB_WAIT)
        assert job.error is None and not job.unexpected, (job.error, job.unexpected)
        assert any(e.stage == "revise" and e.status == "done" for e in job.snapshot())
    elif door == "credit":
        at.button(key=f"credit_go_{run_id}").click().run()  # re-writes while the page waits
        ok(at)
        assert store().runs.load(run_id).credit
    at.run()
    ok(at)
    assert store().runs.load(run_id).status == "done"
    return [run_id]


@pytest.mark.parametrize("door", DOORS)
def test_a_door_left_at_its_defaults_finishes(door, module_demo, app_defaults, server_mode, tmp_path):
    kind, name, *mode = door.split("-")
    community.ensure_loaded(store())
    if kind == "cli":
        cli_door(name, tmp_path)
        return
    server_mode(mode[0])
    made = page_door(name)
    if mode[0] == "shared":
        assert all(store().runs.owner_hash(i) == deployment.token_hash(TOKEN) for i in made)
    assert set(made) <= listed()  # on a personal server everything is listed anyway
