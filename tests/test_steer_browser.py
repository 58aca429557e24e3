"""Steering an idea in a real browser: a finished run (scripted model) opened on Results,
its Q1 edited, the new reviews of the edited text and the tree of two versions; then a
reload and the new version opened by its own link.

Same server pattern as tests/test_browser.py (RT_SCRIPTED=demo; the run is made in this
process with the scripted model and stored where the server reads). Synchronisation is
Playwright's `expect` only. The screenshot goes to test-artifacts/steer.png.
"""
from __future__ import annotations

import re

import pytest

from tests import test_browser
from tests.reliability.browserhelp import SHORT, settle
from tests.test_browser import ARTIFACTS, expect, shot, start_server, stop_server
from tests.test_steer_app import NEW_Q1

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
page = test_browser.page
STEERED = 120_000  # ms: the reviews and the meta-review of the new version, on a loaded machine


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_demo):
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import Store
    from rt_core.types import RunConfig, RunRequest

    data = tmp_path_factory.mktemp("steer-browser-data")
    s = Store(data / "studio.sqlite3")
    community.ensure_loaded(s)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                    paper_ids=preset["paper_ids"][:2], num_reviewers=2)
    run = Simulation(RunRequest(cfg, max_retries=0), s).run_sync()
    assert run.status == "done", run.errors
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "steer-server.log")
    yield url, run.id
    stop_server(proc)


def versions(page):
    """The version tree's nodes: the options of the Version radio."""
    return page.get_by_test_id("stRadio").filter(has_text="the run's proposal").get_by_role("radio")


def test_an_edited_q1_is_reviewed_and_its_version_has_a_link(server, page):
    url, run_id = server
    page.goto(f"{url}/results?run={run_id}")
    heading = page.get_by_role("heading", name="Versions")
    expect(heading).to_be_visible(timeout=60_000)
    heading.scroll_into_view_if_needed()  # a long page draws its lower parts as they come into view
    expect(versions(page)).to_have_count(1, timeout=SHORT)
    settle(page)
    box = page.get_by_role("textbox", name="Your answer")
    expect(box).to_be_visible(timeout=SHORT)
    box.fill(NEW_Q1)
    box.press("Control+Enter")  # a text area commits on Ctrl+Enter
    settle(page)
    page.get_by_role("button", name="Steer", exact=True).click()

    review = page.get_by_text(f'Clear research question: "{NEW_Q1}"')
    expect(review.first).to_be_visible(timeout=STEERED)
    expect(review).to_have_count(2)  # both of the run's reviewers, about the edited text
    expect(versions(page)).to_have_count(2, timeout=SHORT)
    expect(page.get_by_text(re.compile(r"you changed Q1 · mean \d"))).to_be_visible(timeout=SHORT)
    expect(page).to_have_url(re.compile(r"version=s[0-9a-f]{10}"), timeout=SHORT)
    vid = re.search(r"version=(s[0-9a-f]{10})", page.url).group(1)
    settle(page)
    shot(page, "steer")

    page.reload()  # a new session: the address alone brings the version back
    link = page.get_by_text(f"version={vid}")
    expect(link).to_be_visible(timeout=60_000)
    expect(versions(page)).to_have_count(2, timeout=SHORT)
    expect(page.get_by_text(f'Clear research question: "{NEW_Q1}"').first).to_be_visible(timeout=SHORT)

    other = page.context.new_page()  # the link, as another tab opens it
    other.goto(f"{url}/results?run={run_id}&version={vid}")
    expect(other.get_by_text(f"version={vid}")).to_be_visible(timeout=60_000)
    expect(other.get_by_role("radio", name=re.compile(vid))).to_be_checked(timeout=SHORT)
    expect(other.get_by_text(f"+ {NEW_Q1}")).to_be_visible(timeout=SHORT)  # its diff against the run's Q1
    assert page.dialogs == []
