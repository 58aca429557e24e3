"""A study in real browsers: the organiser creates a 10-item pairwise study, two raters in two
browser contexts rate it at the same time (one with the keyboard shortcuts), and the results
page shows alpha, the Bradley-Terry ranking, judge calibration and a safe CSV download.

Same server pattern as tests/test_browser.py (streamlit run as a subprocess, RT_SCRIPTED=demo,
its own RT_DATA_DIR); screenshots go to test-artifacts/study-*.png.
"""
from __future__ import annotations

import csv
import io
import time

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, SCRIPTED_PRESET, start_server, stop_server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

FORMULA = "=SUM(1+1)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from rt_core.store import Store
    from tests.test_study import seed_runs

    data = tmp_path_factory.mktemp("study-browser-data")
    s = Store(data / "studio.sqlite3")
    seed_runs(s)  # eight finished runs: two modes on four reference papers
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "study-server.log")
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    return context, context.new_page()


def shot(page, name: str) -> None:
    idle(page)
    expect(page.locator("[data-testid^='stSkeleton']")).to_have_count(0, timeout=30_000)  # widgets loaded
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.main-svg'))", timeout=30_000)
    size = page.viewport_size
    height = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                           " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 7000))})
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


def join(page, link: str, rater: str) -> None:
    page.goto(link)
    expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
    page.get_by_role("textbox", name="Your rater id").fill(rater)
    page.get_by_role("button", name="Start or resume").click()
    expect(page.get_by_text("Item 1 of")).to_be_visible(timeout=30_000)


def idle(page) -> None:
    """The script run that draws the current item has finished (a condition, not a sleep)."""
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                          timeout=30_000)


def fill_with_keys(page, key: str, label: str, n: int) -> None:
    """The keyboard path: each key press answers the next criterion."""
    idle(page)
    expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(0)  # a fresh item
    page.get_by_role("heading", name="Rate proposals").click()  # focus off any input
    for i in range(1, n + 1):
        idle(page)
        page.keyboard.press(key)
        expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(i, timeout=15_000)


def fill_with_clicks(page, label: str, n: int) -> None:
    idle(page)
    radios = page.get_by_test_id("stRadio")
    expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(0)
    for i in range(n):
        radios.nth(i).get_by_text(label, exact=True).click()
        expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(i + 1, timeout=15_000)


def test_two_browsers_rate_at_once_and_results_show_everything(server, browser):
    org_ctx, org = new_page(browser)
    started = time.perf_counter()
    org.goto(f"{server}/study_create")
    expect(org.get_by_role("heading", name="Create a study")).to_be_visible(timeout=60_000)
    expect(org.get_by_text("10 items in 3 arms, 8 pairs to rate")).to_be_visible(timeout=30_000)
    shot(org, "study-create")
    org.get_by_role("button", name="Create study").click()
    expect(org.get_by_text("Study created").first).to_be_visible(timeout=60_000)
    print(f"\norganiser: page opened -> study created in {time.perf_counter() - started:.1f} s (report only)")
    link = org.get_by_test_id("stCode").filter(has_text="?study=").first.inner_text().strip()
    assert link.startswith(server + "/?study=")  # the root: app.py opens the rating page

    contexts = [new_page(browser) for _ in range(2)]
    (_, ann), (_, bob) = contexts
    join(ann, link, "ann")
    join(bob, link, "bob")
    expect(ann.get_by_text("Left proposal")).to_be_visible()
    expect(ann.get_by_text("mode: global")).to_have_count(0)  # blind
    shot(ann, "study-rate")
    tasks = 8
    for i in range(tasks):
        fill_with_keys(ann, "ArrowLeft", "Left is stronger", 5)
        ann.get_by_role("textbox", name="Rationale (a sentence or two)").fill(FORMULA if i == 0 else f"ann {i}")
        fill_with_clicks(bob, "Tie", 5)
        bob.get_by_role("textbox", name="Rationale (a sentence or two)").fill(f"bob {i}")
        # Both submit together; each must move on with its own answer saved.
        ann.get_by_role("button", name="Submit and go on").click()
        bob.get_by_role("button", name="Submit and go on").click()
        nxt = f"Item {i + 2} of" if i + 1 < tasks else "All done"
        for p in (ann, bob):
            expect(p.get_by_text(nxt)).to_be_visible(timeout=30_000)
    shot(bob, "study-rate-done")

    # The organiser picks an instruction model (the scripted demo) so the judge can run.
    org.goto(server)
    expect(org.get_by_text("Start from a case study")).to_be_visible(timeout=60_000)
    org.get_by_test_id("stSidebarNavLink").get_by_text("Run", exact=True).click()
    org.get_by_test_id("stSelectbox").filter(has_text="Provider").first.click()
    org.get_by_role("option", name=SCRIPTED_PRESET).click()
    expect(org.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
    org.get_by_test_id("stSidebarNavLink").get_by_text("Study results", exact=True).click()
    expect(org.get_by_role("heading", name="Study results")).to_be_visible(timeout=30_000)
    expect(org.get_by_text("Krippendorff's alpha (all)")).to_be_visible(timeout=60_000)
    expect(org.get_by_text("Fleiss' kappa")).to_be_visible()
    expect(org.get_by_role("heading", name="Bradley-Terry ranking of the arms")).to_be_visible()
    expect(org.get_by_role("heading", name="Did raters pick the real paper?")).to_be_visible()
    org.get_by_role("button", name="Run the LLM judge").click()
    expect(org.get_by_text("Position flips")).to_be_visible(timeout=120_000)
    shot(org, "study-results")
    with org.expect_download() as download:
        org.get_by_role("button", name="Answers (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text("utf-8"))))
    assert len(rows) == 2 * tasks * 5
    assert {r["rater_id"] for r in rows} == {"ann", "bob"}
    assert {r["choice"] for r in rows if r["rater_id"] == "ann"} == {"left"}
    assert {r["choice"] for r in rows if r["rater_id"] == "bob"} == {"tie"}
    assert "'" + FORMULA in {r["rationale"] for r in rows}  # neutralised for spreadsheets
    assert all(r["shown_position"] and r["submitted_at"] for r in rows)
    for ctx, _ in contexts:
        ctx.close()
    org_ctx.close()
