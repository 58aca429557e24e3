"""The shared demo's allowance in Chromium: a visitor who spent their tokens is refused after a
reload and in a second tab (the same cookies), and a new browser (cookies cleared) is refused by
the server's daily total. Same server pattern as tests/test_access_browser.py."""
from __future__ import annotations

import pytest

from tests import test_browser
from tests.test_browser import ARTIFACTS, PRESET_NAME, expect, go, open_app, start_server, stop_server

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
LONG = 240_000
FULL, NONE = "You have 9,000 of your 9,000 demo tokens left today", "You have 0 of your 9,000 demo tokens left today"
DEMO = {"RT_DEMO": "1", "RT_DEMO_MODEL": "scripted/demo", "RT_OPERATOR_TOKEN": None,
        # a visitor's run stops near 9,000; what the server then has left pays for no first step
        "RT_DEMO_MAX_TOKENS": "9000", "RT_DEMO_TOTAL_TOKENS": "12000"}


def run_page(page, url: str) -> None:
    open_app(page, url)
    page.get_by_role("button", name=PRESET_NAME, exact=True).click()
    expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
    go(page, "Run")


def test_a_spent_allowance_holds_after_a_reload_in_a_second_tab_and_in_a_new_browser(tmp_path, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    data = tmp_path / "data"
    data.mkdir()
    proc, url = start_server(data, ARTIFACTS / "streamlit-allowance.log", env=DEMO)
    visitor, cleared = (browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2))
    try:
        page = visitor.new_page()
        run_page(page, url)
        expect(page.get_by_text(FULL).first).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.get_by_text("the shared demo's tokens for today are used up")).to_be_visible(timeout=LONG)
        expect(page.get_by_text("Set a larger budget")).to_have_count(0)

        page.reload()  # the run's address: its progress again, then the Run page afresh
        expect(page.get_by_text("the shared demo's tokens for today are used up")).to_be_visible(timeout=60_000)
        page.goto(f"{url}/run")
        expect(page.get_by_text(NONE).first).to_be_visible(timeout=60_000)
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_disabled()
        expect(page.get_by_text("Start is off: your share of this demo is used up for today")).to_be_visible()

        tab = visitor.new_page()  # a second tab of the same browser
        tab.goto(f"{url}/run")
        expect(tab.get_by_text(NONE).first).to_be_visible(timeout=60_000)
        expect(tab.get_by_role("button", name="Start", exact=True)).to_be_disabled()

        fresh = cleared.new_page()  # cookies cleared: a new visitor, the same server
        run_page(fresh, url)
        expect(fresh.get_by_text(FULL).first).to_be_visible(timeout=30_000)
        expect(fresh.get_by_role("button", name="Start", exact=True)).to_be_disabled()
        expect(fresh.get_by_text("Start is off: this demo server's tokens for today are nearly used up")) \
            .to_be_visible()
        expect(fresh.get_by_text("renew at 00:00 UTC").first).to_be_visible()
    finally:
        visitor.close()
        cleared.close()
        stop_server(proc)
