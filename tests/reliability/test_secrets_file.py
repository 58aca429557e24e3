"""Secrets from a real secrets file: `streamlit run` reads a fake key from a secrets.toml on
disk (Streamlit's `secrets.files` option), Chromium drives runs, and the key is then
searched for in every file the app wrote (database, WAL, the server output with Streamlit logging at debug level, the
exports the page downloaded), in every page the browser rendered, and in every request
the loopback servers saw: it may appear only in the Authorization header of requests to
the allowed base URL, never at a base URL the visitor typed.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.reliability.browserhelp import (
    DONE,
    LONG,
    OPENAI_URL,
    SHORT,
    TYPED,
    field,
    fill,
    open_with_preset,
    settle,
)
from tests.reliability.leaks import demo_server, sightings_in_files, sightings_in_requests, sightings_outside_auth
from tests.test_browser import CHROMIUM, LAUNCH_ARGS, choose, expect, go, start_server, stop_server, sync_api

pytestmark = pytest.mark.browser

FILE_KEY = "sk-SECRETSFILE-5772156649-secret"
PAGE_KEY = "sk-PAGEFAKE-1414213562-secret"


def without_password_values(html: str, page) -> str:
    """The page's HTML minus what the visitor typed into password fields (their own key, in
    their own browser, is not something the app rendered)."""
    for value in page.eval_on_selector_all('input[type="password"]', "els => els.map(e => e.value)"):
        if value:
            html = html.replace(value, "")
    return html


def test_a_key_in_a_secrets_file_goes_only_to_the_allowed_server(tmp_path):
    allowed, foreign = demo_server(), demo_server()
    secrets = tmp_path / "operator" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(f'OPENAI_API_KEY = "{FILE_KEY}"\n')
    data, logs, downloads = tmp_path / "data", tmp_path / "logs", tmp_path / "downloads"
    for d in (data, logs, downloads):
        d.mkdir()
    proc, url = start_server(
        data, logs / "server.log", scripted=False,
        env={"OPENAI_API_KEY": None, "RT_ALLOWED_BASE_URLS": allowed.base_url, "HF_HUB_OFFLINE": "1",
             "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        args=("--secrets.files", str(secrets), "--logger.level", "debug"))
    pages: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
            try:
                open_with_preset(page, url)
                pages.append(page.content())
                # 1. the allowed base URL: the file's key is used, and said so
                go(page, "Run")
                choose(page, "Provider", OPENAI_URL)
                settle(page)
                expect(field(page, "Model")).to_have_value("openai/my-model", timeout=SHORT)
                fill(page, "Model", "openai/from-secrets-file")
                fill(page, "Base URL (optional)", allowed.base_url)
                fill(page, "Number of reviewers", "2")
                settle(page)
                expect(field(page, "Base URL (optional)")).to_have_value(allowed.base_url, timeout=SHORT)
                # Streamlit also copies a secrets file's root-level entries into the server's
                # environment, so the page names the variable the file's entry became.
                source = page.get_by_text("Using the API key from:")
                expect(source).to_be_visible(timeout=SHORT)
                said = source.inner_text()
                page.get_by_role("button", name="Start", exact=True).click()
                expect(page.get_by_text(DONE)).to_be_visible(timeout=LONG)
                pages.append(without_password_values(page.content(), page))
                # 2. a base URL the visitor typed, no typed key: refused before any call
                fill(page, "Base URL (optional)", foreign.base_url)
                expect(page.get_by_text("only sent to the provider's own endpoint")).to_be_visible(timeout=SHORT)
                page.get_by_role("button", name="Start", exact=True).click()
                expect(page.get_by_text("Type this server's key")).to_be_visible(timeout=60_000)
                assert foreign.requests == []
                pages.append(without_password_values(page.content(), page))
                # 3. the visitor types a key for their server (another model name: no cache replay)
                fill(page, "Model", "openai/typed-for-foreign")
                fill(page, "API key", PAGE_KEY)
                settle(page)
                expect(field(page, "Base URL (optional)")).to_have_value(foreign.base_url, timeout=SHORT)
                expect(page.get_by_text(TYPED)).to_be_visible(timeout=SHORT)
                page.get_by_role("button", name="Start", exact=True).click()
                expect(page.get_by_text(DONE)).to_be_visible(timeout=LONG)
                pages.append(without_password_values(page.content(), page))
                # 4. Results with both exports downloaded, History, Settings
                page.get_by_role("button", name="Open results").click()
                expect(page.get_by_text("Meta-review", exact=True)).to_be_visible(timeout=60_000)
                pages.append(without_password_values(page.content(), page))
                for label in ("Download Markdown", "Download JSON"):
                    with page.expect_download() as dl:
                        page.get_by_role("button", name=label).click()
                    dl.value.save_as(downloads / dl.value.suggested_filename)
                for title in ("History", "Settings"):
                    go(page, title)
                    pages.append(without_password_values(page.content(), page))
            finally:
                browser.close()
        wal_hits, live_files = sightings_in_files(data, (FILE_KEY, PAGE_KEY))  # while the server runs (WAL open)
    finally:
        stop_server(proc)
        allowed.close()
        foreign.close()
    keys = (FILE_KEY, PAGE_KEY)
    file_hits, files = (a + b for a, b in zip(sightings_in_files(data, keys), sightings_in_files(downloads, keys),
                                              strict=True))
    log_hits, _ = sightings_in_files(logs, keys)
    summary = {"route": "secrets file (streamlit run --secrets.files, Chromium)", "page_said": said,
               "files_scanned": files, "files_scanned_while_running": live_files,
               "file_sightings": file_hits + wal_hits,
               "log_bytes_scanned": (logs / "server.log").stat().st_size, "log_sightings": log_hits,
               "pages_scanned": len(pages), "page_sightings": sum(k in p for p in pages for k in keys),
               "requests_to_allowed_url": len(allowed.requests),
               "keys_outside_auth_header": sum(sightings_outside_auth(s, keys) for s in (allowed, foreign)),
               "requests_to_typed_url": len(foreign.requests),
               "file_key_sightings_at_typed_url": sightings_in_requests(foreign, (FILE_KEY,))}
    out = os.environ.get("RT_RELIABILITY_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "secrets_file.json").write_text(json.dumps(summary, indent=1))
    assert len(list(downloads.iterdir())) == 2 and len(foreign.requests) > 0
    assert (summary["file_sightings"], log_hits, summary["page_sightings"],
            summary["keys_outside_auth_header"],
            summary["file_key_sightings_at_typed_url"]) == (0, 0, 0, 0, 0), summary
    # ...and the keys did reach the servers they were meant for (so the test can fail)
    assert any(FILE_KEY in r["headers"].get("authorization", "") for r in allowed.requests)
    assert any(PAGE_KEY in r["headers"].get("authorization", "") for r in foreign.requests)
    assert not any(PAGE_KEY in r["headers"].get("authorization", "") for r in allowed.requests)
