"""The notebook of ideas in a real browser: the operator stars ideas of two runs on the Ideas
page and makes a study of them; a rater in another browser context joins through the rater
link and rates the pair blind (no run, model or idea id on screen).

Same server pattern as tests/test_study_browser.py (streamlit run as a subprocess, its own
RT_DATA_DIR with two stored runs)."""
from __future__ import annotations

import re

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, start_server, stop_server
from tests.test_study_browser import FAST, confide, expect_choices, idle, join, links, press_fast

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

RUNS = {"alpha0000001": ("Can telescope time be scheduled around cloudy nights?", "Forecast the weather."),
        "beta00000001": ("Do language models memorise benchmark answers?", "Probe them with prompts.")}
HIDDEN = ("alpha0000001", "beta00000001", "scripted", ":proposal")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from rt_core.store import Store
    from rt_core.types import Proposal, Run, RunConfig

    data = tmp_path_factory.mktemp("ideas-browser-data")
    s = Store(data / "studio.sqlite3")
    for n, (rid, (q1, q5)) in enumerate(RUNS.items()):
        s.runs.create(Run(id=rid, config=RunConfig(model="scripted/demo"), status="done",
                          created_at=f"2026-01-0{n + 1}T00:00:00+00:00",
                          proposal=Proposal(q1, "It matters.", "It is hard.", "It is new.", q5)))
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "ideas-server.log")
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def pick_and_star(page, idea_id: str) -> None:
    idle(page)
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Idea", exact=True))
    box.click()
    page.keyboard.type(idea_id)
    page.keyboard.press("Enter")
    idle(page)
    expect(page.get_by_text(f"of run {idea_id.split(':')[0]}").first).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Star").click()
    idle(page)
    expect(page.get_by_role("button", name="Unstar")).to_be_visible(timeout=30_000)


def test_starred_ideas_of_two_runs_make_a_study_rated_blind(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    org = ctx.new_page()
    org.goto(f"{server}/ideas")
    expect(org.get_by_role("heading", name="Ideas", exact=True)).to_be_visible(timeout=60_000)
    for rid in RUNS:
        pick_and_star(org, f"{rid}:proposal")
    org.get_by_role("button", name="Create the study").click()
    expect(org.get_by_text("Study created").first).to_be_visible(timeout=60_000)
    rater_link, _ = links(org)
    org.screenshot(path=str(ARTIFACTS / "ideas-study-created.png"), full_page=True)
    ctx.close()

    rctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = rctx.new_page()
    join(page, rater_link, "ann")
    # the item is drawn after the join form goes: wait for it (a condition), then read the page
    either = "|".join(re.escape(RUNS[r][0]) for r in ("alpha0000001", "beta00000001"))
    expect(page.get_by_test_id("stMain")).to_contain_text(re.compile(either), timeout=60_000)
    text = page.get_by_test_id("stMain").inner_text()
    assert RUNS["alpha0000001"][0] in text or RUNS["beta00000001"][0] in text  # the ideas themselves
    assert not [h for h in HIDDEN if h in text], text[:500]  # and nothing that names where they came from
    press_fast(page, 1, FAST[0])
    expect_choices(page, FAST[1])
    page.get_by_role("textbox", name="Rationale (a sentence or two)").fill("the first is sharper")
    confide(page)
    page.get_by_role("button", name="Submit and go on").click()
    expect(page.get_by_text("All done")).to_be_visible(timeout=30_000)
    rctx.close()
