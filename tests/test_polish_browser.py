"""A rater's browser keeps the rating page alone when the root address is typed over the join
link (a reload is a new Streamlit session, so only the browser can remember it), and the
organiser's link gives that browser the whole app back. Same server pattern as
tests/test_browser.py."""
from __future__ import annotations

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, start_server, stop_server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect


@pytest.fixture(scope="module")
def server_and_study(tmp_path_factory):
    from rt_core.store import Store
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings
    from tests.test_study import seed_runs

    data = tmp_path_factory.mktemp("polish-browser-data")
    s = Store(data / "studio.sqlite3")
    made = create_from_runs(s, seed_runs(s), StudySettings(name="Polish", mode="pairwise"))
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "polish-server.log")
    yield url, made
    stop_server(proc)


def test_a_rater_who_types_the_root_address_keeps_the_rating_page_alone(server_and_study):
    url, made = server_and_study
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_context().new_page()
        page.goto(f"{url}/?study={made['code']}")
        page.get_by_role("textbox", name="Your rater id").fill("rater-b1")
        page.get_by_role("button", name="Start or resume").click()
        expect(page.get_by_text("Left is stronger").first).to_be_visible(timeout=60_000)
        page.wait_for_function("document.cookie.includes('rt_rater=1')", timeout=30_000)
        page.goto(f"{url}/")  # the root typed over the join link: a new session
        expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("ResearchTown Studio")).to_have_count(0)
        expect(page.get_by_role("link", name="History")).to_have_count(0)
        # The organiser, in the same browser: the token opens the app and ends the rater's view.
        page.goto(f"{url}/study_results?organiser={made['organiser_token']}")
        expect(page.get_by_role("heading", name="Study results")).to_be_visible(timeout=60_000)
        page.wait_for_function("!document.cookie.includes('rt_rater=1')", timeout=30_000)
        page.goto(f"{url}/")
        expect(page.get_by_role("heading", name="Neighbourhood", exact=True)).to_be_visible(timeout=60_000)
        browser.close()
