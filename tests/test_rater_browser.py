"""The rater always knows, in Chromium (issue 48, point 6).

A Submit sent while the line to the server is dead (a relay in front of the app swallows the
click, then drops the connection: tests/reliability/cutproxy.py) is said to be not saved while
the line is down, and is stored exactly once, with the next item shown, when it is back. And the
join link's code leaves the address bar, and "Leave this study" gives a browser that tried the
rater link the whole app back, also after a reload.
"""
from __future__ import annotations

import pytest

from tests.reliability.cutproxy import CutProxy
from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, start_server, stop_server
from tests.test_study_browser import FAST, confide, expect_choices, idle, join, press_fast

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

NOT_SAVED = "Not saved yet"
NO_ANSWER = "No answer from the server yet"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """An app server with a study of eight seeded runs, reached through a relay that can die."""
    from rt_core.store import Store
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs
    from tests.test_study import seed_runs

    data = tmp_path_factory.mktemp("rater-browser-data")
    s = Store(data / "studio.sqlite3")
    made = create_from_runs(s, seed_runs(s), StudySettings(name="Line study"))
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "rater-browser-server.log")
    proxy = CutProxy(int(url.rsplit(":", 1)[1]))
    yield {"url": proxy.url, "proxy": proxy, "code": made["code"], "study": made["id"],
           "db": data / "studio.sqlite3"}
    proxy.close()
    stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def submissions(lab, rater: str) -> list[int]:
    """The positions stored for this rater, one per stored submit."""
    import sqlite3

    with sqlite3.connect(lab["db"]) as db:
        return [r[0] for r in db.execute("SELECT position FROM study_submissions WHERE study_id=? AND "
                                         "rater_id=? ORDER BY position", (lab["study"], rater))]


def connection(page) -> str:
    return page.get_by_test_id("stApp").get_attribute("data-test-connection-state") or ""


def test_a_submit_lost_on_a_dead_line_is_said_unsaved_then_stored_once(lab, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    join(page, f"{lab['url']}/?study={lab['code']}", "line")
    press_fast(page, 1, FAST[0])
    expect_choices(page, FAST[1])
    page.get_by_role("textbox", name="Rationale (a sentence or two)").fill("sent on a dead line")
    confide(page)
    idle(page)

    lab["proxy"].hold()  # the browser still believes it is connected; nothing gets through
    page.get_by_role("button", name="Submit and go on").click()
    expect(page.get_by_text(NO_ANSWER)).to_be_visible(timeout=30_000)  # sent, lost, and said so
    assert submissions(lab, "line") == []
    lab["proxy"].cut()  # now the browser notices, and keeps trying
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                           ".dataset.testConnectionState !== 'CONNECTED'", timeout=60_000)
    expect(page.get_by_text(NOT_SAVED)).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Item 1 of")).to_be_visible()
    assert submissions(lab, "line") == []

    lab["proxy"].restore()
    expect(page.get_by_text("Item 2 of").first).to_be_visible(timeout=120_000)
    expect(page.get_by_text(NOT_SAVED)).to_have_count(0)
    expect(page.get_by_text(NO_ANSWER)).to_have_count(0)
    assert connection(page) == "CONNECTED"
    idle(page)
    assert len(submissions(lab, "line")) == 1, submissions(lab, "line")  # stored exactly once

    # Item 2, answered, then the line goes down where the browser sees it: Streamlit disables its
    # widgets and would drop the shortcut; the press is kept and sent when the line is back.
    press_fast(page, 2, FAST[0])
    expect_choices(page, FAST[1])
    page.get_by_role("textbox", name="Rationale (a sentence or two)").fill("pressed while cut")
    confide(page)
    idle(page)
    lab["proxy"].cut()
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                           ".dataset.testConnectionState !== 'CONNECTED'", timeout=60_000)
    page.get_by_role("heading", name="Rate proposals").click()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text(NOT_SAVED)).to_be_visible(timeout=30_000)
    lab["proxy"].restore()
    expect(page.get_by_text("Item 3 of").first).to_be_visible(timeout=120_000)
    idle(page)
    assert len(submissions(lab, "line")) == 2, submissions(lab, "line")
    ctx.close()


def test_the_code_leaves_the_address_and_leaving_gives_the_app_back(lab, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{lab['url']}/?study={lab['code']}")  # the operator, say, trying the rater link
    expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("textbox", name="Study code")).to_have_value(lab["code"])
    page.wait_for_url(lambda u: "study=" not in u, timeout=30_000)
    page.goto(lab["url"])  # a reload of the root: held on the rating page (the rater cookie)
    expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)

    page.get_by_role("button", name="Leave this study").click()
    expect(page.get_by_test_id("stSidebarNav")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name="Rate proposals")).to_have_count(0)
    page.goto(f"{lab['url']}/history")  # a reload is a new session: the cookie is gone too
    expect(page.get_by_role("heading", name="History")).to_be_visible(timeout=60_000)
    assert not [c for c in ctx.cookies() if c["name"] == "rt_rater"]
    ctx.close()
