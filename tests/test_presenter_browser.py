"""The presenter's path (issue 49, point 4) in a real browser: a stored run opened by its link,
then the case study started on the Run page, whose progress comes into view on its own
(Start sits under every setting); Results of the new run, the Run box switched to the stored
run (it snapped back to the run shown last) and staying there, and its version's link a real
link. Same server pattern as tests/test_browser.py; synchronisation is Playwright's `expect`
and polled page conditions only. Screenshots: test-artifacts/presenter-*.png."""
from __future__ import annotations

import re

import pytest

from tests import test_browser
from tests.reliability.browserhelp import LONG, SHORT, settle
from tests.test_browser import (
    ARTIFACTS,
    PRESET_NAME,
    SCRIPTED_PRESET,
    choose,
    expect,
    go,
    shot,
    start_server,
    stop_server,
)

pytestmark = pytest.mark.browser
browser = test_browser.browser
COLD = 180_000  # ms: a session's first Results page on a heavily loaded machine
# The progress box's top within this many pixels of the viewport's top: scrolled to it.
IN_VIEW = ("() => { const b = document.querySelector('.st-key-run_progress');"
           " if (!b) return false; const r = b.getBoundingClientRect();"
           " return r.top >= -2 && r.top < 160; }")


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_demo):
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import Store
    from rt_core.types import RunConfig, RunRequest

    data = tmp_path_factory.mktemp("presenter-browser-data")
    s = Store(data / "studio.sqlite3")
    community.ensure_loaded(s)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                    paper_ids=preset["paper_ids"][:2], num_reviewers=1)
    run = Simulation(RunRequest(cfg, max_retries=0), s).run_sync()
    assert run.status == "done", run.errors
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "presenter-server.log")
    yield url, run.id
    stop_server(proc)


@pytest.fixture
def page(browser):
    # A laptop's screen: the Run page's settings fill more than one of it.
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    yield pg
    context.close()


def test_start_brings_progress_into_view_and_results_switches_runs(server, page):
    url, stored = server
    try:
        _walk(page, url, stored)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "presenter-failed.png"), full_page=True)
        raise


def _walk(page, url: str, stored: str) -> None:
    page.goto(f"{url}/results?run={stored}")  # a shared link: the stored run, read-only
    expect(page.get_by_text(f"Run {stored} · ")).to_be_visible(timeout=COLD)
    settle(page)
    go(page, "Neighbourhood")  # the same session: the linked run stays in the Run box's list
    page.get_by_role("button", name=PRESET_NAME, exact=True).click()
    expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=SHORT)
    go(page, "Run")
    choose(page, "Provider", SCRIPTED_PRESET)
    expect(page.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=SHORT)
    settle(page)
    page.get_by_role("button", name="Start", exact=True).click()

    # 2. The progress comes into view by itself, its box at the top of the screen.
    expect(page.get_by_role("heading", name="Progress")).to_be_in_viewport(timeout=SHORT)
    page.wait_for_function(IN_VIEW, timeout=SHORT)
    page.screenshot(path=str(ARTIFACTS / "presenter-progress.png"))
    expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
        .to_be_visible(timeout=LONG)
    new = re.search(r"run=([0-9a-f]+)", page.url).group(1)
    settle(page)
    page.get_by_role("button", name="Open results").click()

    # 1. Results of the new run; the Run box switches to the stored run and stays on it.
    expect(page.get_by_text(f"Run {new} · ")).to_be_visible(timeout=COLD)
    settle(page)
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Run", exact=True)).first
    box.click()
    options = page.get_by_role("option")
    if not options.count():  # focused but not opened (a redraw closed it): the keyboard opens it
        box.locator("input").press("ArrowDown")
    expect(options).to_have_count(2, timeout=SHORT)
    options.filter(has_not_text="this session").click()
    expect(page.get_by_text(f"Run {stored} · ")).to_be_visible(timeout=SHORT)
    settle(page)
    expect(page.get_by_text(f"Run {stored} · ")).to_be_visible(timeout=SHORT)  # no snap back
    expect(page.get_by_text(f"Run {new} · ")).to_have_count(0)
    expect(page).to_have_url(re.compile(f"run={stored}"), timeout=SHORT)

    # 5. The version's link is a link to its own address.
    link = page.get_by_role("link", name=re.compile("Link to this version"))
    expect(link).to_have_attribute("href", re.compile(rf"/results\?run={stored}$"), timeout=SHORT)
    shot(page, "presenter-results")
