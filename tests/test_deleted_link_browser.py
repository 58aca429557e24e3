"""Two app servers on one store, in Chromium: a run started and finished on server A is deleted
from History on server B, and its link on server A says there is no such run at once (issue 48).
Server A still holds the finished job in its live-job table; before, that entry kept showing
the run (model, mode, "still in progress", downloads) until A restarted.

Same server pattern as tests/test_browser.py (streamlit run as a subprocess, RT_SCRIPTED=demo,
one RT_DATA_DIR for both servers)."""
from __future__ import annotations

import re

import pytest

from tests import test_browser
from tests.test_browser import (
    ARTIFACTS,
    PRESET_NAME,
    SCRIPTED_PRESET,
    choose,
    expect,
    go,
    open_app,
    start_server,
    stop_server,
)

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared


def test_a_run_deleted_on_one_server_is_no_such_run_on_the_other(tmp_path, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    a_proc, a_url = start_server(tmp_path / "data", ARTIFACTS / "streamlit-deleted-a.log")
    b_proc = None
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        b_proc, b_url = start_server(tmp_path / "data", ARTIFACTS / "streamlit-deleted-b.log")
        page = context.new_page()
        open_app(page, a_url)
        page.get_by_role("button", name=PRESET_NAME, exact=True).click()
        expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
        go(page, "Run")
        choose(page, "Provider", SCRIPTED_PRESET)
        expect(page.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page).to_have_url(re.compile(r"/run\?run=\w+"), timeout=60_000)
        run_id = re.search(r"run=(\w+)", page.url).group(1)
        expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
            .to_be_visible(timeout=240_000)
        page.goto(f"{a_url}/results?run={run_id}")
        expect(page.get_by_text(f"Run {run_id} ·")).to_be_visible(timeout=60_000)

        other = context.new_page()  # server B's History: the run is there, and goes
        other.goto(f"{b_url}/history")
        expect(other.get_by_text("Open or delete a run")).to_be_visible(timeout=60_000)
        other.get_by_role("button", name="Delete…").click()
        other.get_by_role("button", name="Yes, delete").click()
        expect(other.get_by_text(f"Deleted run {run_id}.")).to_be_visible(timeout=30_000)
        expect(other.get_by_text("No runs stored yet")).to_be_visible()  # it was the only one

        for url in (a_url, b_url):  # the link, on the server that ran it and on the other
            page.goto(f"{url}/results?run={run_id}")
            expect(page.get_by_text(f"There is no run {run_id} here")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("still in progress")).to_have_count(0)
            expect(page.get_by_text(f"Run {run_id} ·")).to_have_count(0)
            expect(page.get_by_role("button", name="Download Markdown")).to_have_count(0)
        page.goto(f"{a_url}/run?run={run_id}")
        expect(page.get_by_text(f"There is no run {run_id} here")).to_be_visible(timeout=60_000)
    finally:
        context.close()
        stop_server(a_proc)
        if b_proc is not None:
            stop_server(b_proc)
