"""The Candidates view and Send to a study in a real browser: a stored brainstorm run
(tests/candidates_run.py) opened from History, its ranked cards, win matrix and the judge's
reasons, then a study of its candidates made from the page and opened from its link.

Same server pattern as tests/test_browser.py. The screenshot goes to
test-artifacts/candidates.png and, with RT_UPDATE_SCREENSHOTS=1, to docs/screenshots/.
"""
from __future__ import annotations

import os
import re
import shutil

import pytest

from tests import test_browser
from tests.candidates_run import REASON, brainstorm_run
from tests.reliability.browserhelp import SHORT, settle
from tests.test_browser import ARTIFACTS, ROOT, expect, go, open_app, shot, start_server, stop_server

pytestmark = pytest.mark.browser
RUN_ID = "brainstorm01"
SIGNALS_ID = "brainstorm02"
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
page = test_browser.page


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from rt_core import community
    from rt_core.store import Store

    data = tmp_path_factory.mktemp("candidates-browser-data")
    s = Store(data / "studio.sqlite3")
    community.ensure_loaded(s)
    s.runs.save(brainstorm_run(RUN_ID))
    s.runs.save(brainstorm_run(SIGNALS_ID, method="signals"))
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "candidates-server.log")
    yield url
    stop_server(proc)


def publish(path) -> None:
    if os.environ.get("RT_UPDATE_SCREENSHOTS") == "1":
        dest = ROOT / "docs" / "screenshots"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / path.name)


def test_candidates_view_and_send_to_a_study(server, page):
    open_app(page, server)
    go(page, "History")
    page.get_by_test_id("stSelectbox").filter(has_text="Run").last.click()
    page.get_by_role("option", name="scripted/demo").click()
    page.get_by_role("button", name="Open in Results").click()
    expect(page.get_by_role("heading", name="Candidates")).to_be_visible(timeout=SHORT)
    cards = page.get_by_text("#1 · c2")
    expect(cards).to_be_visible()
    expect(page.get_by_text("1 near-duplicate merged at similarity ≥ 0.9")).to_be_visible()
    expect(page.get_by_text("no close match found in 120 papers searched").first).to_be_visible()
    link = page.get_by_role("link", name="Gaia Data Release 3: summary of the content (2023)").first
    expect(link).to_have_attribute("href", "https://arxiv.org/abs/2208.00211")
    expect(page.get_by_role("heading", name="How the judge compared them")).to_be_visible()
    page.get_by_text("The judge's reasons, pair by pair (6 pairs)").click()
    expect(page.get_by_text(REASON).first).to_be_visible()
    settle(page)
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    path = shot(page, "candidates")
    publish(path)

    page.get_by_role("button", name="Send to a study").click()
    expect(page.get_by_text("Study created. Code")).to_be_visible(timeout=SHORT)
    expect(page.get_by_text("?study=").first).to_be_visible()
    expect(page.get_by_text("organiser=").first).to_be_visible()
    page.get_by_role("link", name="Open the study's results").click()
    expect(page.get_by_role("heading", name="Study results")).to_be_visible(timeout=SHORT)
    # The study this session just made, unlocked: four candidates, every pair a unit.
    expect(page.get_by_role("combobox", name="Study")).to_have_value(
        re.compile("^Candidates of run " + RUN_ID + " · "))
    expect(page.get_by_text("0 of 6", exact=True)).to_be_visible()
    assert page.dialogs == []


def test_a_base_models_ranking_reads_as_signals_never_as_a_judge(server, page):
    open_app(page, server)  # a fresh server runs app.py first (a page opened cold is not set up)
    page.goto(f"{server}/results?run={SIGNALS_ID}")
    expect(page.get_by_role("heading", name="Candidates")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("The embedded base model cannot judge proposals")).to_be_visible()
    expect(page.get_by_role("heading", name="The measured signals")).to_be_visible()
    expect(page.get_by_text("Signal score").first).to_be_visible()
    expect(page.get_by_role("heading", name="How the judge compared them")).to_have_count(0)
    # A personal server (this one listens on loopback): whoever sits at it may make the study,
    # whichever way the run was opened (rt_core.access; read-only links are a shared server's).
    expect(page.get_by_role("button", name="Send to a study")).to_be_enabled()
    settle(page)
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    publish(shot(page, "candidates-signals"))
