"""Helpers for driving a real `streamlit run` server in Chromium in the reliability suite
(the server and browser set-up itself lives in tests/test_browser.py)."""
from __future__ import annotations

from tests.test_browser import PRESET_NAME, expect

SHORT = 30_000  # ms: one page rerun on a loaded 2-core machine
LONG = 300_000  # ms: a whole simulation
OPENAI_URL = "Any OpenAI-compatible URL"
DONE = "The proposal, reviews and scores are on the Results page"
TYPED = "Using the API key from: typed in this browser session"


def field(page, label: str):
    """A text or number input by its label."""
    return page.locator(f'input[aria-label="{label}"]')


def settle(page) -> None:
    """Wait until the page's script run has finished (Streamlit marks its root element with
    the run state), so the next input is not overwritten by what an earlier run sends."""
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                            timeout=SHORT)


def fill(page, label: str, value: str) -> None:
    """Type into a text or number input, commit it (Enter) and wait for the rerun."""
    settle(page)
    box = field(page, label)
    box.fill(value)
    box.press("Enter")
    settle(page)
    expect(box).to_have_value(value, timeout=SHORT)


def open_with_preset(page, url: str) -> None:
    """A new browser session on url with the case study's neighbourhood loaded."""
    page.goto(url)
    page.get_by_role("button", name=PRESET_NAME, exact=True).click(timeout=LONG)
    expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=60_000)
