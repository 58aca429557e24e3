"""A run deleted on one app server is no such run on every other at once (issue 48).

The server that ran it keeps the finished job in its live-job table
(rt_core.run.pipeline.jobs) so a page polling the run reads its last events; that entry once
outlived a deletion made elsewhere, and the run's link showed a ghost ("still in progress",
its model and mode, downloads) until the server restarted. Here this test process is the
server that ran the run (AppTest through the entry file, its live-job table holding the
finished job) and the deletion is made by another process through the store, as another
server's History does: the link must then read exactly as a run that never existed."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import access, deployment
from rt_core.run.pipeline import jobs
from tests.apphelp import APP, PRESET, ROOT, SCRIPTED_PRESET, goto, infos, module_data_dir, shown

data_dir = module_data_dir("deleted-link")
STARTER, VISITOR = "deleted-link-starter-token-01", "deleted-link-visitor-token-02"
JOB_WAIT = 300  # s: the most the run may take on a loaded machine (a bound, not a sleep)
DELETE = ("import sys; from rt_core.store import open_store; "
          "sys.exit(0 if open_store().runs.delete(sys.argv[1]) else 3)")


@pytest.fixture(params=["personal", "shared"])
def mode(request, monkeypatch):
    if request.param == "shared":
        monkeypatch.setenv("RT_SHARED", "1")
        monkeypatch.setenv(deployment.OPERATOR_ENV, "deleted-link-operator-token-03")
    else:
        monkeypatch.delenv("RT_SHARED", raising=False)
    deployment.OPERATOR.forget()
    yield request.param
    deployment.OPERATOR.forget()


def browser(token: str, page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=JOB_WAIT)
    at.session_state["_owner_token"] = token
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return goto(at, page) if page else at


def warnings(at: AppTest) -> str:
    return " ".join(shown(w.value) for w in at.warning)


def test_a_run_deleted_by_another_server_is_no_such_run_here(module_demo, mode):
    at = browser(STARTER)
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED_PRESET).run()
    at.button(key="run_start").click().run()
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(JOB_WAIT) and job.error is None
    run_id = job.run_id
    goto(at, "results")
    assert at.selectbox(key="results_pick").value == run_id  # the run, as its starter sees it
    # Another server deletes it: a process of its own, with its own live-job table.
    subprocess.run([sys.executable, "-c", DELETE, run_id], check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    for token in (VISITOR, STARTER):  # a link opened here, by anybody
        for page in ("results", "run"):
            seen = browser(token, page, run=run_id)
            assert warnings(seen) == access.no_such_run(run_id), (token, page)
            assert "still in progress" not in infos(seen)
            assert not seen.get("download_button")
    at.run()  # the starter's own session, whose job ran the run, no longer shows it either
    assert not at.exception
    assert "No run open yet" in infos(at) and not at.get("download_button")
    assert jobs.live(run_id) is None  # the finished job's entry is dropped too
