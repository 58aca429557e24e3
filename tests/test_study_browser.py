"""Studies in real browsers. A live room: the organiser creates a study with the defaults, four
raters join one after another through the rater link, rate with fast key presses, and can reach
neither the results nor an arm name; the organiser link shows the results, and the exported
minutes are measured. And two raters at once, with the LLM judge and a safe CSV download.

Same server pattern as tests/test_browser.py (streamlit run as a subprocess, RT_SCRIPTED=demo,
its own RT_DATA_DIR); screenshots go to test-artifacts/study-*.png and, for the live room, also
to /tmp/e-shots/.
"""
from __future__ import annotations

import csv
import io
import shutil
import statistics
import time
from pathlib import Path

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, SCRIPTED_PRESET, start_server, stop_server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

FORMULA = "=SUM(1+1)"
SHOTS = Path("/tmp/e-shots")
# Arm labels as the results show them; the proposals' own words may say "global" or "real paper"
# (the real paper's answers do), so those are checked on the study's pages, not in its texts.
ARMS = ("mode: ", "run-", "scripted", "gold decoy", "Bradley-Terry")


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
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(ARTIFACTS / f"{name}.png", SHOTS / f"{name}.png")


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


def keys_ready(page, item: int) -> None:
    """The shortcut listener for item `item` is installed (study_keys marks the page)."""
    page.wait_for_function(f"() => (document.documentElement.dataset.rtKeysTask || '').endsWith('_{item}')",
                           timeout=30_000)


def press_fast(page, item: int, keys: list[str]) -> None:
    """Press the keys back to back, without waiting for the app between them: every press must
    still count (with st.button shortcuts, presses within one script run were merged)."""
    idle(page)
    keys_ready(page, item)
    page.get_by_role("heading", name="Rate proposals").click()  # focus off any input
    for key in keys:
        page.keyboard.press(key)


def expect_choices(page, labels: list[str]) -> None:
    """Criterion n shows labels[n] as its checked choice."""
    groups = page.get_by_test_id("stRadio")
    for n, label in enumerate(labels):
        expect(groups.nth(n).get_by_role("radio", name=label, checked=True)).to_have_count(1, timeout=15_000)


def fill_with_clicks(page, label: str, n: int) -> None:
    idle(page)
    radios = page.get_by_test_id("stRadio")
    expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(0)
    for i in range(n):
        radios.nth(i).get_by_text(label, exact=True).click()
        expect(page.get_by_role("radio", name=label, checked=True)).to_have_count(i + 1, timeout=15_000)


def confide(page, level: str = "4") -> None:
    """Choose a confidence level: it starts unselected and a submit without one is refused."""
    group = page.get_by_test_id("stRadio").filter(has_text="Confidence in your judgement")
    group.get_by_text(level, exact=True).click()
    expect(group.get_by_role("radio", name=level, checked=True)).to_have_count(1, timeout=15_000)


def create_study(org, server: str) -> tuple[str, str]:
    """The organiser's part on the create page, defaults kept: (rater link, organiser link)."""
    org.goto(f"{server}/study_create")
    expect(org.get_by_role("heading", name="Create a study")).to_be_visible(timeout=60_000)
    expect(org.get_by_text("10 items in 3 arms, 8 pairs to rate")).to_be_visible(timeout=30_000)
    return org


def links(org) -> tuple[str, str]:
    """The two links the create page shows once the new study is drawn (the organiser link
    appears only then; until the run ends, an earlier study's rater link may still be on screen)."""
    expect(org.get_by_test_id("stCode").filter(has_text="organiser=")).to_have_count(1, timeout=30_000)
    idle(org)
    rater = org.get_by_test_id("stCode").filter(has_text="?study=").first.inner_text().strip()
    organiser = org.get_by_test_id("stCode").filter(has_text="organiser=").first.inner_text().strip()
    return rater, organiser


def blind(page) -> None:
    text = page.get_by_test_id("stMain").inner_text()
    assert not [a for a in ARMS if a in text], text[:500]
    expect(page.get_by_test_id("stSidebar")).to_have_count(0)
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)


# Three criteria: novelty, feasibility, overall. Five presses: the fourth and fifth overwrite the
# last criterion, so the end state is reached only when every press has been applied, in order.
FAST = (["ArrowLeft", "ArrowRight", "t", "ArrowRight", "ArrowLeft"],
        ["Left is stronger", "Right is stronger", "Left is stronger"])


def test_a_live_room_four_raters_by_the_rater_link(server, browser):
    org_ctx, org = new_page(browser)
    create_study(org, server)
    shot(org, "study-create")
    org.get_by_role("button", name="Create study").click()
    expect(org.get_by_text("Study created").first).to_be_visible(timeout=60_000)
    rater_link, organiser_link = links(org)
    assert rater_link.startswith(server + "/?study=")
    assert organiser_link.startswith(server + "/study_results?organiser=")
    shot(org, "study-created")
    org_ctx.close()
    code = rater_link.rsplit("=", 1)[1]

    items = {}
    for n, rid in enumerate(("ann", "bob", "cat", "dan")):  # one after another, nobody turned away
        ctx, page = new_page(browser)
        join(page, rater_link, rid)
        blind(page)
        if n == 0:
            shot(page, "study-rate")
        item = 1
        while True:
            press_fast(page, item, FAST[0])
            expect_choices(page, FAST[1])
            page.get_by_role("textbox", name="Rationale (a sentence or two)").fill(f"{rid} {item}")
            confide(page)
            page.get_by_role("button", name="Submit and go on").click()
            done = page.get_by_text("All done")
            expect(done.or_(page.get_by_text(f"Item {item + 1} of"))).to_be_visible(timeout=30_000)
            if done.is_visible():
                break
            blind(page)
            item += 1
        items[rid] = item
        # The rater's browser reaches no result: not by typing the results address (it stays on
        # the rating page: studio/rater_session.py), not with the code, and the rater link itself
        # has no navigation to follow.
        page.goto(f"{server}/study_results")
        expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Agreement")).to_have_count(0)
        assert not [a for a in ARMS if a in page.get_by_test_id("stMain").inner_text()]
        page.goto(f"{server}/study_results?study={code}")
        expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        blind(page)
        ctx.close()
    assert all(v >= 5 for v in items.values()), items  # at least the prior's ten-minute queue

    org_ctx, org = new_page(browser)
    org.goto(organiser_link)
    expect(org.get_by_role("heading", name="Study results")).to_be_visible(timeout=60_000)
    expect(org.get_by_role("heading", name="Bradley-Terry ranking of the arms")).to_be_visible(timeout=60_000)
    assert "organiser=" not in org.url  # the token left the address bar
    shot(org, "study-results-room")
    with org.expect_download() as download:
        org.get_by_role("button", name="Answers (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text("utf-8"))))
    assert {r["rater_id"] for r in rows} == {"ann", "bob", "cat", "dan"}
    assert all(float(r["minutes"]) > 0 for r in rows)
    per_item = [float(r["seconds"]) for r in rows if r["criterion"] == "overall"]
    print(f"\nlive room: items per rater {items}; time per item median {statistics.median(per_item):.1f} s "
          f"(min {min(per_item):.1f}, max {max(per_item):.1f}, n={len(per_item)})")
    org_ctx.close()


def test_two_browsers_rate_at_once_and_results_show_everything(server, browser):
    org_ctx, org = new_page(browser)
    started = time.perf_counter()
    create_study(org, server)
    org.get_by_role("button", name="Create study").click()
    expect(org.get_by_text("Study created").first).to_be_visible(timeout=60_000)
    print(f"\norganiser: page opened -> study created in {time.perf_counter() - started:.1f} s (report only)")
    link, organiser_link = links(org)

    contexts = [new_page(browser) for _ in range(2)]
    (_, ann), (_, bob) = contexts
    join(ann, link, "ann")
    join(bob, link, "bob")
    expect(ann.get_by_text("Left proposal")).to_be_visible()
    n_crit = 3
    for i in range(8):  # every pair: items take seconds, so ten minutes cover all eight
        press_fast(ann, i + 1, ["ArrowLeft"] * n_crit)
        expect_choices(ann, ["Left is stronger"] * n_crit)
        ann.get_by_role("textbox", name="Rationale (a sentence or two)").fill(FORMULA if i == 0 else f"ann {i}")
        fill_with_clicks(bob, "Tie", n_crit)
        bob.get_by_role("textbox", name="Rationale (a sentence or two)").fill(f"bob {i}")
        confide(ann)
        confide(bob, "2")
        # Both submit together; each must move on with its own answer saved.
        ann.get_by_role("button", name="Submit and go on").click()
        bob.get_by_role("button", name="Submit and go on").click()
        nxt = f"Item {i + 2} of" if i + 1 < 8 else "All done"
        for p in (ann, bob):
            expect(p.get_by_text(nxt)).to_be_visible(timeout=30_000)
    shot(bob, "study-rate-done")

    # The organiser opens the results with the organiser link, then picks an instruction model
    # (the scripted demo) in the same session so the judge can run.
    org.goto(organiser_link)
    expect(org.get_by_role("heading", name="Study results")).to_be_visible(timeout=60_000)
    org.get_by_test_id("stSidebar").locator("a[href$='/run']").click()  # by address: titles may change
    org.get_by_test_id("stSelectbox").filter(has_text="Provider").first.click()
    org.get_by_role("option", name=SCRIPTED_PRESET).click()
    expect(org.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
    org.get_by_test_id("stSidebar").locator("a[href$='/study_results']").click()
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
    rows = [r for r in csv.DictReader(io.StringIO(download.value.path().read_text("utf-8")))
            if r["rater_id"] in ("ann", "bob")]
    assert len(rows) == 2 * 8 * n_crit
    assert {r["choice"] for r in rows if r["rater_id"] == "ann"} == {"left"}
    assert {r["choice"] for r in rows if r["rater_id"] == "bob"} == {"tie"}
    assert "'" + FORMULA in {r["rationale"] for r in rows}  # neutralised for spreadsheets
    assert all(r["shown_position"] and r["submitted_at"] and float(r["minutes"]) > 0 for r in rows)
    for ctx, _ in contexts:
        ctx.close()
    org_ctx.close()
