"""A revised run's Results page in a real browser: the score trajectory per reviewer and
the per-question diff, shown as text. The run is made here with the improving scripted
model (tests/revisehelp.py) in the server's store before the server starts; the server
only shows it. RT_UPDATE_SCREENSHOTS=1 copies the screenshot to docs/screenshots/."""
from __future__ import annotations

import os
import shutil

import pytest

from tests import test_browser
from tests.reliability.browserhelp import SHORT
from tests.revisehelp import revised_run
from tests.test_browser import ARTIFACTS, ROOT, expect, open_app, start_server, stop_server

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
page = test_browser.page
NAME = "revision-rounds"


@pytest.fixture(scope="module")
def revised(tmp_path_factory):
    from rt_core.store import Store

    data = tmp_path_factory.mktemp("rounds-browser")
    s = Store(data / "studio.sqlite3")
    run = revised_run(s)
    s.close()
    assert run.status == "done", run.errors
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "rounds-server.log")
    yield url, run
    stop_server(proc)


def test_the_trajectory_and_the_diff_of_a_revised_run(revised, page):
    url, run = revised
    # The root first: a freshly started server that is first asked for a deep link runs
    # that page without app.py's set-up (Streamlit's pages/ fallback; seen on main too).
    open_app(page, url)
    page.goto(f"{url}/results?run={run.id}")
    heading = page.get_by_role("heading", name="Revision rounds")
    expect(heading).to_be_visible(timeout=60_000)
    chart = page.get_by_test_id("stPlotlyChart").filter(has_text="round (0 = first proposal)")
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=SHORT)
    expect(chart).to_contain_text("mean")  # the legend: each reviewer and the mean
    codes = page.get_by_test_id("stCode")
    expect(codes).to_have_count(2)  # one rewritten answer in each of the two rounds
    expect(codes.first).to_contain_text("{+IMPROVED:")
    expect(page.get_by_text("Q1. What is the problem? — answers the reviewers' weakness")).to_be_visible()
    expect(page.get_by_text("The mean score did not improve")).to_be_visible()
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    path = ARTIFACTS / f"{NAME}.png"
    page.screenshot(path=str(path))
    if os.environ.get("RT_UPDATE_SCREENSHOTS") == "1":
        dest = ROOT / "docs" / "screenshots"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / f"{NAME}.png")
