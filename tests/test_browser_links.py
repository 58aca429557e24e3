"""Runs that survive a refresh and can be linked, in a real browser.

The app server (`streamlit run`, as in test_browser.py) calls an OpenAI-compatible server
that this test runs on 127.0.0.1; its replies wait on a gate the test opens, so the run is
deterministically still going while the page is refreshed and the link is opened
elsewhere (no sleeps). Screenshots go to /tmp/g1-shots/ and test-artifacts/.
"""
from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest

from tests import test_browser
from tests.reliability.browserhelp import SHORT, field, fill, settle
from tests.test_browser import (
    ARTIFACTS,
    PRESET_NAME,
    choose,
    expect,
    go,
    open_app,
    shot,
    start_server,
    stop_server,
)

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
SHOTS = Path("/tmp/g1-shots")


def snap(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    shutil.copyfile(shot(page, name), SHOTS / f"{name}.png")


@pytest.fixture
def gated_model():
    """An OpenAI-compatible server whose answers wait until the test opens the gate."""
    from rt_core.models.scripted import demo_responder
    from tests.openai_server import OpenAIServer

    gate, called = threading.Event(), threading.Event()

    def answer(messages: list) -> str:
        called.set()
        gate.wait(timeout=300)
        return demo_responder(messages, {})

    server = OpenAIServer(responder=answer)
    server.gate, server.called = gate, called  # type: ignore[attr-defined]
    yield server
    gate.set()
    server.close()


def test_a_refresh_reattaches_and_a_link_opens_the_run_elsewhere(tmp_path, browser, gated_model):
    ARTIFACTS.mkdir(exist_ok=True)
    # Shared: on a personal server the one person at it controls every run, also from a link.
    proc, url = start_server(tmp_path / "data", ARTIFACTS / "streamlit-links.log", env={"RT_SHARED": "1"})
    owner = browser.new_context(viewport={"width": 1400, "height": 1000})
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = owner.new_page()
        open_app(page, url)
        page.get_by_role("button", name=PRESET_NAME, exact=True).click()
        expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
        go(page, "Run")
        choose(page, "Provider", "Any OpenAI-compatible URL")
        # typing before the preset's own rerun lands would be overwritten by it (once, under
        # load, the model box read "openai/my-modelopenai/gated")
        settle(page)
        expect(field(page, "Model")).to_have_value("openai/my-model", timeout=SHORT)
        for name, value in (("Model", "openai/gated"), ("Base URL (optional)", gated_model.base_url),
                            ("API key", "none")):
            fill(page, name, value)
        expect(page.get_by_text("Using the API key from: typed in this browser session")) \
            .to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.get_by_text("progress events")).to_be_visible(timeout=60_000)
        assert gated_model.called.wait(timeout=120), "the model was never called"
        expect(page).to_have_url(re.compile(r"/run\?run=\w+"), timeout=30_000)
        run_id = re.search(r"run=(\w+)", page.url).group(1)

        # A refresh is a new session: the address brings the run back, the owner cookie its controls.
        page.reload()
        expect(page.get_by_text("progress events")).to_be_visible(timeout=60_000)
        expect(page.get_by_text(re.compile(r"^Running · "))).to_be_visible(timeout=30_000)
        expect(page.get_by_role("button", name="Cancel")).to_be_visible()
        snap(page, "refresh-reattached")

        # The same link in another browser (another owner cookie): progress, no controls.
        viewer = other.new_page()
        viewer.goto(f"{url}/run?run={run_id}")
        expect(viewer.get_by_text("You are watching a run started elsewhere")).to_be_visible(timeout=60_000)
        expect(viewer.get_by_text("progress events")).to_be_visible(timeout=30_000)
        expect(viewer.get_by_role("button", name="Cancel")).to_have_count(0)
        snap(viewer, "shared-live-view")

        gated_model.gate.set()
        expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
            .to_be_visible(timeout=240_000)
        expect(viewer.get_by_text("See the results")).to_be_visible(timeout=60_000)
        viewer.goto(f"{url}/results?run={run_id}")
        expect(viewer.get_by_text("Q1. What is the problem?", exact=True).first).to_be_visible(timeout=60_000)
        expect(viewer.get_by_text("A shared view of this run: read-only")).to_be_visible()
        expect(viewer.get_by_role("button", name="Compute similarity")).to_have_count(0)
        snap(viewer, "shared-results")

        # Typed addresses open their pages; a fresh visitor's Results is an empty state.
        fresh = other.new_page()
        fresh.goto(f"{url}/neighbourhood")
        expect(fresh.get_by_text("Start from a case study")).to_be_visible(timeout=60_000)
        fresh.goto(f"{url}/history")
        expect(fresh.get_by_role("heading", name="History").first).to_be_visible(timeout=60_000)
        fresh.goto(f"{url}/results")
        expect(fresh.get_by_text("No run open yet")).to_be_visible(timeout=60_000)
        expect(fresh.get_by_text("Page not found")).to_have_count(0)
        snap(fresh, "fresh-results")
    finally:
        gated_model.gate.set()
        owner.close()
        other.close()
        stop_server(proc)
