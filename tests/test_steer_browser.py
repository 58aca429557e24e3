"""Steering an idea in a real browser: a finished run (scripted model) opened on Results,
its Q1 edited, the new reviews of the edited text and the tree of two versions; then a
reload and the new version opened by its own link.

Same server pattern as tests/test_browser.py (RT_SCRIPTED=demo; the run is made in this
process with the scripted model and stored where the server reads). Synchronisation is
Playwright's `expect` on exact conditions only: before each input the page's script run
has ended (`settle`, Streamlit's `data-test-script-state`), so no rerun still in flight
can redraw or reset what the test types. The steer runs as a background job whose
progress the page polls; the test waits for what its end draws. The screenshot goes to
test-artifacts/steer.png (and test-artifacts/steer-failed.png when a step fails).
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
COLD = 180_000  # ms: a session's first Results page (imports, charts) on a heavily loaded machine
STEERED = 240_000  # ms: the steer job (reviews, meta-review) and the page's rerun at its end
REVIEWED = f'Clear research question: "{NEW_Q1}"'  # the scripted reviewer quotes the Q1 it read


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


def versions(pg):
    """The version tree's nodes: the options of the Version radio (the one radio whose
    options name the run's proposal; the Edit/Comment radio does not)."""
    return pg.get_by_test_id("stRadio").filter(has_text="the run's proposal").get_by_role("radio")


def open_results(pg, url: str) -> None:
    """A Results address in this tab, once its Versions section is drawn and its run ended."""
    pg.goto(url)
    heading = pg.get_by_role("heading", name="Versions")
    expect(heading).to_be_visible(timeout=COLD)
    settle(pg)


def steer_q1(pg) -> None:
    """Type the new Q1 (committed with Ctrl+Enter, the page rerun it causes waited out),
    then press Steer."""
    box = pg.get_by_role("textbox", name="Your answer")
    expect(box).to_be_editable(timeout=SHORT)
    box.fill(NEW_Q1)
    box.press("Control+Enter")  # a text area commits on Ctrl+Enter (or on leaving it)
    settle(pg)
    expect(box).to_have_value(NEW_Q1, timeout=SHORT)  # the rerun kept it (the key is the version's)
    pg.get_by_role("button", name="Steer", exact=True).click()


def test_an_edited_q1_is_reviewed_and_its_version_has_a_link(server, page):
    url, run_id = server
    try:
        _steer_reload_and_link(page, url, run_id)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "steer-failed.png"), full_page=True)
        raise


def _steer_reload_and_link(page, url: str, run_id: str) -> None:
    page.goto(url)  # the app's first page, as a user arrives (its first run loads the store)
    expect(page.get_by_text("Start from a case study")).to_be_visible(timeout=COLD)
    settle(page)
    open_results(page, f"{url}/results?run={run_id}")
    expect(versions(page)).to_have_count(1, timeout=SHORT)
    steer_q1(page)

    # The job's end reruns the page with its version picked: its reviews, then the tree.
    reviews = page.get_by_text(REVIEWED)
    expect(reviews).to_have_count(2, timeout=STEERED)  # both of the run's reviewers read the edit
    expect(versions(page)).to_have_count(2, timeout=SHORT)
    expect(page.get_by_text(re.compile(r"you changed Q1 · mean \d"))).to_be_visible(timeout=SHORT)
    expect(page).to_have_url(re.compile(r"version=s[0-9a-f]{10}"), timeout=SHORT)
    vid = re.search(r"version=(s[0-9a-f]{10})", page.url).group(1)
    settle(page)
    shot(page, "steer")

    page.reload()  # a new session: the address alone brings the version back
    expect(page.get_by_text(f"version={vid}")).to_be_visible(timeout=COLD)  # its link's caption
    settle(page)
    expect(versions(page)).to_have_count(2, timeout=SHORT)
    expect(page.get_by_role("radio", name=re.compile(vid))).to_be_checked(timeout=SHORT)
    expect(page.get_by_text(REVIEWED)).to_have_count(2, timeout=SHORT)

    other = page.context.new_page()  # the link, as another tab opens it
    open_results(other, f"{url}/results?run={run_id}&version={vid}")
    expect(other.get_by_text(f"version={vid}")).to_be_visible(timeout=SHORT)
    expect(other.get_by_role("radio", name=re.compile(vid))).to_be_checked(timeout=SHORT)
    expect(other.get_by_text(f"+ {NEW_Q1}")).to_be_visible(timeout=SHORT)  # its diff against the run's Q1
    assert page.dialogs == []
