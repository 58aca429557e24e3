"""Secrets: a recognisable fake key given by environment, by secrets and by the page is
found in no file the app wrote (database, WAL, caches, logs, exports), in no page it
rendered, and in no request to a base URL that was not allowed."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from rt_core.export.run import run_json, run_markdown
from tests.reliability.apphelp import (
    DataDir,
    everything_rendered,
    goto,
    new_app,
    openai_run_page,
    start_and_wait,
)
from tests.reliability.leaks import demo_server, sightings_in_files, sightings_in_requests, sightings_outside_auth

ENV_KEY = "sk-ENVFAKE-3141592653-secret"
SECRETS_KEY = "sk-SECRETSFAKE-2718281828-secret"
PAGE_KEY = "sk-PAGEFAKE-1618033988-secret"
KEYS = (ENV_KEY, SECRETS_KEY, PAGE_KEY)


def page(app, base_url: str, temperature: float):
    """The Run page at base_url; each run gets its own temperature so none is a cache replay."""
    at = openai_run_page(app, base_url)
    at.session_state["temperature"] = temperature
    at.run()
    return at


@pytest.fixture
def logs(tmp_path):
    """Everything logged at any level while the test runs, to a file the test then scans."""
    path = tmp_path / "logs" / "app.log"
    path.parent.mkdir()
    handler = logging.FileHandler(path)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield path
    root.removeHandler(handler)
    root.setLevel(old)
    handler.close()


def test_no_key_sighting_anywhere(tmp_path, monkeypatch, logs):
    allowed, foreign = demo_server(), demo_server()
    data = tmp_path / "data"
    d = DataDir(data)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("RT_ALLOWED_BASE_URLS", allowed.base_url)
    pages: list[str] = []
    runs = []
    try:
        # 1. the environment's key, to the allowed server
        at = page(new_app(), allowed.base_url, 0.1)
        runs.append(start_and_wait(at).run)
        pages.append(everything_rendered(at))
        # 2. a secrets key (environment cleared), to the allowed server
        monkeypatch.delenv("OPENAI_API_KEY")
        at = page(new_app(secrets={"OPENAI_API_KEY": SECRETS_KEY}), allowed.base_url, 0.2)
        runs.append(start_and_wait(at).run)
        pages.append(everything_rendered(at))
        # 3. both server keys present, a foreign base URL and no typed key: neither goes
        #    there; the run is refused before any call, with one message
        monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
        at = page(new_app(secrets={"OPENAI_API_KEY": SECRETS_KEY}), foreign.base_url, 0.3)
        at.button(key="run_start").click().run()
        assert "Type this server's key" in everything_rendered(at) and foreign.requests == []
        pages.append(everything_rendered(at))
        # 4. a key typed in the page, to the foreign server (its own choice), then Results
        at = page(new_app(), foreign.base_url, 0.4)
        at.text_input(key="api_key").input(PAGE_KEY).run()
        job = start_and_wait(at)
        runs.append(job.run)
        pages.append(everything_rendered(at))
        at.session_state["results_run"] = job.run_id
        goto(at, "results")
        pages.append(everything_rendered(at))
        goto(at, "history")
        pages.append(everything_rendered(at))
        goto(at, "settings")
        pages.append(everything_rendered(at))
    finally:
        d.restore()
    assert all(r.status == "done" for r in runs), [r.errors for r in runs]
    exports = data / "exports"
    exports.mkdir()
    for r in runs:
        (exports / f"{r.id}.json").write_text(run_json(r))
        (exports / f"{r.id}.md").write_text(run_markdown(r))
    from rt_core.store import open_store

    open_store(data / "studio.sqlite3").db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    file_hits, files = sightings_in_files(data, KEYS)
    log_hits = sum(k in logs.read_text(errors="replace") for k in KEYS)
    page_hits = sum(k in p for p in pages for k in KEYS)
    foreign_server_keys = sightings_in_requests(foreign, (ENV_KEY, SECRETS_KEY))
    summary = {"files_scanned": files, "file_sightings": file_hits, "log_sightings": log_hits,
               "pages_scanned": len(pages), "page_sightings": page_hits,
               "requests_to_foreign_url": len(foreign.requests),
               "server_key_sightings_at_foreign_url": foreign_server_keys,
               "requests_to_allowed_url": len(allowed.requests),
               "key_sightings_outside_auth_header_at_allowed_url": sightings_outside_auth(allowed, KEYS)}
    def route(key: str) -> dict:  # where one route's key was seen
        return {"files": sightings_in_files(data, (key,))[0], "logs": int(key in logs.read_text(errors="replace")),
                "pages": sum(key in p for p in pages),
                "requests_where_not_allowed": 0 if key == PAGE_KEY else sightings_in_requests(foreign, (key,)),
                "outside_auth_header": sum(sightings_outside_auth(s, (key,)) for s in (allowed, foreign))}

    summary["by_route"] = {"environment": route(ENV_KEY), "secrets (AppTest at.secrets)": route(SECRETS_KEY),
                           "typed in the page": route(PAGE_KEY)}
    out = os.environ.get("RT_RELIABILITY_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "secrets.json").write_text(json.dumps(summary, indent=1))
    allowed.close()
    foreign.close()
    assert files >= 2 and len(foreign.requests) > 0
    assert (file_hits, log_hits, page_hits, foreign_server_keys) == (0, 0, 0, 0), summary
    assert summary["key_sightings_outside_auth_header_at_allowed_url"] == 0, summary
    assert sightings_outside_auth(foreign, KEYS) == 0, summary
    # and the keys did reach the servers they were meant for (the test can fail)
    assert any(ENV_KEY in r["headers"].get("authorization", "") for r in allowed.requests)
    assert any(SECRETS_KEY in r["headers"].get("authorization", "") for r in allowed.requests)
    assert any(PAGE_KEY in r["headers"].get("authorization", "") for r in foreign.requests)
