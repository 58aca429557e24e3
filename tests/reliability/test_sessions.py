"""Ten app sessions at once (AppTest instances through app.py, each in its own thread),
each running a simulation against the loopback server: all finish, none sees another's
selection, key or run, and the store stays consistent."""
from __future__ import annotations

import json
import os
import pprint
import sqlite3
import statistics
import threading
import time
from pathlib import Path

import pytest

from rt_core.models.scripted import demo_responder
from tests.openai_server import OpenAIServer
from tests.reliability.apphelp import DataDir, goto, new_app

PRESETS = ["nlp-astronomy", "nlp-criminology", "nlp-biology"]


# AppTest compiles and runs page scripts in the calling thread, and CPython 3.11's parser
# is not thread-safe there ("SystemError: AST constructor recursion depth mismatch" when
# ten AppTests run scripts at the same instant). Page runs therefore take turns; the ten
# simulations they start run at the same time in their own job threads, on one store.
PAGE_TURN = threading.Lock()


def warm_up_the_provider_path() -> None:
    """One model call before the crowd: litellm imports its
    provider modules on the first call (their classes are built with exec(), which parses),
    and that must not happen in a job thread while an AppTest parses a page."""
    from rt_core.models.client import LLMClient, ModelSettings, run_async

    spare = OpenAIServer(responder=lambda messages: "ready")  # not the server under test
    try:
        client = LLMClient(ModelSettings(model="openai/warm-up", api_key="k", base_url=spare.base_url))
        run_async(client.complete([{"role": "user", "content": "warm up"}], max_tokens=8))
    finally:
        spare.close()


def import_all_of_rt_core() -> None:
    """Import every rt_core module and litellm now, in this thread. The ten job threads
    would otherwise import (and, on a fresh clone without bytecode, compile) the lazily
    loaded ones while an AppTest parses a page, which is the same parser race as above."""
    import importlib
    import pkgutil

    import rt_core

    for mod in pkgutil.walk_packages(rt_core.__path__, "rt_core."):
        if mod.name != "rt_core.__main__":
            importlib.import_module(mod.name)
    from rt_core.models.registry import litellm

    litellm()  # its import builds classes with exec(), which parses too


def session(i: int, base_url: str, out: dict, timings: list, lock: threading.Lock) -> None:
    def timed(step):
        with PAGE_TURN:
            t = time.perf_counter()
            step()
            took = time.perf_counter() - t
        with lock:
            timings.append(took)

    at = None
    try:
        with PAGE_TURN:
            at = new_app()
        timed(lambda: at.button(key=f"preset_{PRESETS[i % len(PRESETS)]}").click().run())
        hood = list(at.session_state["hood_r"])[: 2 + i % 3]  # each session its own selection
        at.session_state["hood_r"] = hood
        timed(lambda: goto(at, "run"))
        timed(lambda: at.selectbox(key="provider").select("Any OpenAI-compatible URL").run())
        at.session_state["model"] = f"openai/session-{i}"
        at.session_state["base_url"] = base_url
        at.session_state["api_key"] = f"sk-session-{i}-key"
        at.session_state["num_reviewers"] = 1
        at.session_state["mode"] = "agent"
        timed(at.run)
        timed(lambda: at.button(key="run_start").click().run())
        job = at.session_state["jobs"][at.session_state["current_run"]]
        assert job.wait(600), "the run did not finish"
        timed(at.run)
        at.session_state["results_run"] = job.run_id
        timed(lambda: goto(at, "results"))
        out[i] = {"status": job.run.status, "hood": hood, "run_hood": job.run.config.researcher_ids,
                  "model": job.run.config.model, "jobs": list(at.session_state["jobs"]),
                  "run_id": job.run_id, "exception": [e.value for e in at.exception],
                  "shown_status": [m.value for m in at.metric if m.label == "Status"]}
    except BaseException as exc:  # reported by the test, with the session number and its page
        out[i] = {"error": f"{type(exc).__name__}: {exc}", "page": page_report(at)}


def page_report(at) -> dict:
    """What the session's page showed when it failed: its exceptions and error boxes."""
    try:
        return {"exception": [(e.value, e.stack_trace) for e in at.exception],
                "errors": [e.value for e in at.error],
                "warnings": [w.value for w in at.warning], "title": [t.value for t in at.title]}
    except BaseException as exc:  # no page yet (new_app failed), or the tree is unreadable
        return {"unreadable": repr(exc)}


def page_tracebacks(caplog) -> str:
    """The tracebacks of the page errors Streamlit logged ("Uncaught app execution")."""
    import logging

    return "\n".join(logging.Formatter().format(r) for r in caplog.records if r.exc_info) or "(none)"


@pytest.fixture
def one_parser_at_a_time(monkeypatch):
    """CPython 3.11's conversion between AST objects and the compiler's tree is not
    thread-safe ("AST constructor recursion depth mismatch": one counter in the _ast
    module's state is shared by every thread). Both directions go through the builtin
    compile(): ast.parse and literal_eval call it with PyCF_ONLY_AST, and Streamlit's
    script cache calls it with the tree its magic pass rewrote. Locking ast.parse alone
    left that second call free, and CI caught the two meeting. Only this test runs ten
    AppTests at once, so it serialises compile() for its duration; the app's behaviour
    under test is unchanged."""
    import builtins

    lock = threading.RLock()
    original = builtins.compile

    def compile_one_at_a_time(*args, **kwargs):
        with lock:
            return original(*args, **kwargs)

    monkeypatch.setattr(builtins, "compile", compile_one_at_a_time)


@pytest.mark.reliability
@pytest.mark.usefixtures("one_parser_at_a_time")
def test_ten_sessions_at_once(tmp_path, caplog):
    server = OpenAIServer(responder=lambda messages: demo_responder(messages, {}))
    d = DataDir(tmp_path)
    out: dict[int, dict] = {}
    timings: list[float] = []
    lock = threading.Lock()
    try:
        new_app()  # the store and the starter community, once, before the crowd arrives
        import_all_of_rt_core()
        warm_up_the_provider_path()
        threads = [threading.Thread(target=session, args=(i, server.base_url, out, timings, lock))
                   for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(900)
    finally:
        d.restore()
        server.close()
    failed = {i: o for i, o in out.items() if "error" in o}
    # A plain string: pytest shortens a dict's repr. The page shows a redacted message, so
    # the tracebacks Streamlit logged for uncaught page errors come with it.
    assert len(out) == 10 and not failed, (f"{sorted(out)} finished; failed: {pprint.pformat(failed, width=110)}"
                                           f"\npage errors logged:\n{page_tracebacks(caplog)}")
    for i, o in out.items():
        assert o["status"] == "done" and not o["exception"], o
        assert o["run_hood"] == o["hood"], "a session ran someone else's selection"
        assert o["model"] == f"openai/session-{i}" and o["jobs"] == [o["run_id"]]
        assert o["shown_status"] == ["done"]
    for r in server.chat_requests():  # every request carried its own session's key
        n = r["body"]["model"].split("-")[-1]
        assert r["headers"]["authorization"] == f"Bearer sk-session-{n}-key"
    con = sqlite3.connect(tmp_path / "studio.sqlite3")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    statuses = dict(con.execute("SELECT id, status FROM runs").fetchall())
    con.close()
    assert statuses == {o["run_id"]: "done" for o in out.values()}
    summary = {"sessions": 10, "finished": sum(o["status"] == "done" for o in out.values()),
               "page_responses": len(timings), "median_page_s": round(statistics.median(timings), 3),
               "slowest_page_s": round(max(timings), 3)}
    print("sessions:", json.dumps(summary))
    dest = os.environ.get("RT_RELIABILITY_OUT")
    if dest:
        Path(dest).mkdir(parents=True, exist_ok=True)
        Path(dest, "sessions.json").write_text(json.dumps(summary, indent=1))
