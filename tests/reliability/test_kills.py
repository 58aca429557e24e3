"""SIGKILL the CLI (and an app process) at random points: the store stays intact, no
run stays `running`, nothing finished is lost, and a resume completes."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rt_core.models.scripted import demo_responder
from tests.openai_server import OpenAIServer
from tests.reliability.apphelp import ROOT

AUTHORS = "r-neubig-graham,r-chen-beidi,r-ivezic-zeljko"
FAKE_KEY = "sk-kill-test-FAKE-0a1b2c"


class CountingServer(OpenAIServer):
    """Answers like the demo model and counts the chat requests that arrived. A kill is timed
    with `hold(n)` (the n-th reply waits until the kill), not by waiting for the n-th request:
    a reply already sent lets the run go on and it may finish before the kill lands."""

    def __init__(self):
        self.arrived = 0
        super().__init__(responder=self._answer)

    def _answer(self, messages):
        self.arrived += 1  # under the server's lock
        return demo_responder(messages, {})


def cli_env(data: Path) -> dict:
    env = dict(os.environ, RT_DATA_DIR=str(data), LITELLM_LOCAL_MODEL_COST_MAP="True",
               HF_HUB_OFFLINE="1", KILL_TEST_KEY=FAKE_KEY, PYTHONPATH=str(ROOT))
    env.pop("RT_DB", None)
    return env


def cli(data: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rt_core", "--db", str(data / "studio.sqlite3"), *args],
                            cwd=ROOT, env=cli_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def db_state(path: Path) -> dict:
    con = sqlite3.connect(path)
    try:
        return {"integrity": con.execute("PRAGMA integrity_check").fetchone()[0],
                "runs": dict(con.execute("SELECT id, status FROM runs").fetchall()),
                "models": dict(con.execute("SELECT id, model FROM runs").fetchall()),
                "cache": {r[0] for r in con.execute("SELECT key FROM llm_cache")}}
    finally:
        con.close()


def kill_and_resume(data: Path, server: CountingServer, rng: random.Random, index: int) -> dict:
    db = data / "studio.sqlite3"
    before = db_state(db) if db.exists() else {"runs": {}, "cache": set()}
    # A fresh model name each time, so nothing is cached (profiles are kept per model) and
    # the run makes its 12 calls: 3 profiles, 3 drafts, the merge, 2 reviewer profiles,
    # 2 reviews and the meta-review. The kill lands while a random one of the first 11 waits
    # for its reply.
    target = rng.randint(1, 11)
    hold = server.hold(target)  # the target-th reply waits for the kill: the run cannot end first
    proc = cli(data, "run", "--researchers", AUTHORS, "--model", f"openai/served-{index}", "--base-url",
               server.base_url, "--api-key-env", "KILL_TEST_KEY", "--reviewers", "2", "--timeout", "30")
    reached = hold.wait()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)  # reaps the process (no zombie is left to look alive)
    hold.release()
    after_kill = db_state(db)
    new = [r for r in after_kill["runs"] if r not in before["runs"]]
    out = {"target_call": target, "reached": reached, "integrity_after_kill": after_kill["integrity"],
           "new_runs": len(new)}
    if not new:  # killed before the run was saved: nothing to resume, nothing lost
        out.update(resumed="no run yet", lost=len(before["cache"] - after_kill["cache"]))
        return out
    run_id = new[0]
    res = cli(data, "resume", run_id, "--api-key-env", "KILL_TEST_KEY", "--out-json", str(data / "r.json"))
    _, err = res.communicate(timeout=600)
    final = db_state(db)
    out.update(status_after_kill=after_kill["runs"][run_id], resume_exit=res.returncode,
               resumed=final["runs"][run_id], integrity=final["integrity"],
               running_left=sum(s == "running" for s in final["runs"].values()),
               lost=len(after_kill["cache"] - final["cache"]), stderr_tail=err[-300:])
    return out


def check(result: dict) -> None:
    assert result["reached"], "the run never got that far"
    assert result["integrity_after_kill"] == "ok"
    assert result["lost"] == 0, "a cached answer disappeared"
    if result["new_runs"]:
        assert result["status_after_kill"] == "running"  # what the kill left behind...
        assert result["resume_exit"] == 0, result["stderr_tail"]
        assert result["resumed"] == "done" and result["integrity"] == "ok"
        assert result["running_left"] == 0


def run_kills(tmp_path: Path, count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    server = CountingServer()
    try:
        return [kill_and_resume(tmp_path, server, rng, i) for i in range(count)]
    finally:
        server.close()


def test_two_cli_kills_are_survived(tmp_path):
    for r in run_kills(tmp_path, 2, seed=7):
        check(r)


@pytest.mark.reliability
def test_twenty_cli_kills_are_survived(tmp_path):
    results = run_kills(tmp_path, 20, seed=11)
    out = os.environ.get("RT_RELIABILITY_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "kills.json").write_text(json.dumps(results, indent=1))
    survived = 0
    for r in results:
        check(r)
        survived += 1
    print(f"kills survived: {survived}/{len(results)}")


APP_SCRIPT = textwrap.dedent("""
    import sys
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(sys.argv[1], default_timeout=120)
    at.run()
    at.button(key="preset_nlp-astronomy").click().run()
    at.switch_page("pages/run.py").run()
    at.selectbox(key="provider").select("Any OpenAI-compatible URL").run()
    at.text_input(key="model").input("openai/served").run()
    at.text_input(key="base_url").input(sys.argv[2]).run()
    at.text_input(key="api_key").input("typed-by-visitor").run()
    at.session_state["num_reviewers"] = 2
    at.run()
    at.button(key="run_start").click().run()
    job = at.session_state["jobs"][at.session_state["current_run"]]
    print("started", job.run_id, flush=True)
    job.wait(600)
""")


@pytest.mark.reliability
def test_killing_an_app_process_leaves_a_run_the_next_app_resumes(tmp_path):
    """An app process (the app run through AppTest in its own interpreter) is killed in the
    middle of a run; another app process on the same store marks it interrupted at start,
    and one click in History resumes it."""
    from tests.reliability.apphelp import DataDir, goto, new_app

    server = CountingServer()
    script = tmp_path / "app_proc.py"
    script.write_text(APP_SCRIPT)
    data = tmp_path / "shared"
    data.mkdir()
    try:
        hold = server.hold(5)  # the fifth reply waits for the kill: the run is still going then
        proc = subprocess.Popen([sys.executable, str(script), str(ROOT / "app.py"), server.base_url],
                                cwd=ROOT, env=cli_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert hold.wait(timeout=300)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        hold.release()
        state = db_state(data / "studio.sqlite3")
        assert state["integrity"] == "ok"
        [(run_id, status)] = state["runs"].items()
        assert status == "running"
        d = DataDir(data)
        try:
            at = new_app()
            assert db_state(data / "studio.sqlite3")["runs"][run_id] == "interrupted"
            goto(at, "history")
            at.selectbox(key="hist_pick").set_value(run_id).run()
            # A typed base URL needs a key typed for it (the server's keys never go there):
            # this visitor sets the run's model and server and types one.
            at.session_state["model"] = "openai/served"
            at.session_state["base_url"] = server.base_url
            at.session_state["api_key"] = "typed-by-visitor"
            at.button(key="hist_resume").click().run()
            job = at.session_state["jobs"][run_id]
            assert job.wait(600)
            assert job.run.status == "done", job.run.errors
        finally:
            d.restore()
        final = db_state(data / "studio.sqlite3")
        assert final["runs"] == {run_id: "done"} and final["integrity"] == "ok"
        assert state["cache"] <= final["cache"]
    finally:
        server.close()
