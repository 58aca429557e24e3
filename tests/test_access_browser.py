"""Who sees what on one shared server, in Chromium, with four browsers at once: the owner of a run,
a stranger, a rater of an open study, and the operator (whose link the server prints in its log).
Then the same store on a personal server, where the stranger's view differs.

Same server pattern as tests/test_browser.py (streamlit run as a subprocess, RT_SCRIPTED=demo,
its own RT_DATA_DIR). A study item here is a run the owner's own browser started: even its owner
must not find it while the study is open.
"""
from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests import test_browser
from tests.reliability.browserhelp import settle
from tests.test_browser import (
    ARTIFACTS,
    PRESET_NAME,
    SCRIPTED_PRESET,
    choose,
    expect,
    go,
    open_app,
    start_server,
    stop_server,
)

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
ITEM, OTHER_ITEM = "blinditem01", "blinditem02"
UNKNOWN = "There is no run {} here"
LONG = 240_000


def operator_link(log: Path, deadline_s: float = 60.0) -> str:
    """The operator link the shared server printed (once) in its log."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        found = re.findall(r"http://\S+/\?operator=[\w-]+", log.read_text(errors="replace"))
        if found:
            assert len(found) == 1, "printed once"
            return found[0]
        time.sleep(0.2)  # polling a file for a condition, not synchronisation
    raise TimeoutError("the server printed no operator link")


def history_options(page) -> list[str]:
    """The runs History offers to open (its table is drawn on a canvas; the picker is text),
    read from a History drawn anew whose script run has finished, and from the picker once its
    options are drawn. The options used to be read the moment the picker was clicked, during
    History's run: on a loaded machine that read [] twice (CI) from a History the server had
    drawn with the owner's run in it (its log). A click on the page already shown reruns it
    with nothing to wait for, so such a page is left first."""
    if urlsplit(page.url).path.rstrip("/").endswith("/history"):
        go(page, "Settings")
    go(page, "History")
    settle(page)  # History's heading is this run's, so the run has started; now it has ended
    empty, some = page.get_by_text("no run yet"), page.get_by_text("Open or delete a run")
    expect(empty.or_(some)).to_be_visible(timeout=60_000)
    if empty.count():
        return []
    box = page.get_by_test_id("stSelectbox").filter(has_text="Run").first
    box.locator("input").press("ArrowDown")  # opens it where it is (a click aims at a point)
    options = page.get_by_role("option")
    expect(options.first).to_be_visible(timeout=30_000)
    texts = options.all_inner_texts()
    page.keyboard.press("Escape")
    expect(options).to_have_count(0, timeout=30_000)  # closed: the next step starts clean
    return texts


def seed_items(data: Path, owner_token: str) -> str:
    """Two runs (one of them the owner's) put into an open study; returns the rater link's code."""
    from rt_core.store import Store
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs
    from tests.test_study import make_run

    s = Store(data / "studio.sqlite3")
    for run_id in (ITEM, OTHER_ITEM):
        make_run(s, run_id, "global" if run_id == ITEM else "self", "p-gaia")
    s.db.conn.execute("UPDATE runs SET owner_hash=? WHERE id=?",
                      (hashlib.sha256(owner_token.encode()).hexdigest(), ITEM))
    made = create_from_runs(s, [ITEM, OTHER_ITEM], StudySettings(name="Blind", mode="absolute"), real_arm=False)
    s.close()
    return made["code"]


def test_four_browsers_on_a_shared_server_see_only_what_they_may(tmp_path, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    data, log = tmp_path / "data", ARTIFACTS / "streamlit-access.log"
    data.mkdir()
    proc, url = start_server(data, log, env={"RT_SHARED": "1", "RT_OPERATOR_TOKEN": None})
    contexts = {k: browser.new_context(viewport={"width": 1400, "height": 1000})
                for k in ("owner", "stranger", "rater", "operator")}
    try:
        # The owner starts a run in their browser.
        owner = contexts["owner"].new_page()
        open_app(owner, url)
        owner.get_by_role("button", name=PRESET_NAME, exact=True).click()
        expect(owner.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
        go(owner, "Run")
        choose(owner, "Provider", SCRIPTED_PRESET)
        expect(owner.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
        owner.get_by_role("button", name="Start", exact=True).click()
        expect(owner).to_have_url(re.compile(r"/run\?run=\w+$"), timeout=60_000)  # no owner= in it
        run_id = re.search(r"run=(\w+)", owner.url).group(1)
        expect(owner.get_by_text("The proposal, reviews and scores are on the Results page")) \
            .to_be_visible(timeout=LONG)
        assert "owner=" not in owner.url

        # A stranger: nothing of it in History; its link (given to them) is read-only.
        stranger = contexts["stranger"].new_page()
        open_app(stranger, url)
        assert history_options(stranger) == []
        stranger.goto(f"{url}/results?run={run_id}")
        expect(stranger.get_by_text("A shared view of this run: read-only")).to_be_visible(timeout=60_000)
        expect(stranger.get_by_role("button", name="Compute similarity")).to_have_count(0)
        stranger.goto(f"{url}/?operator=not-the-operators-token")
        expect(stranger.get_by_text("That operator link does not match")).to_be_visible(timeout=60_000)
        assert "operator=" not in stranger.url

        # The owner keeps the controls after a reload, by a cookie kept when the browser closes.
        cookie = {c["name"]: c for c in contexts["owner"].cookies()}.get("rt_owner")
        assert cookie and cookie["expires"] > time.time() + 300 * 24 * 3600, cookie
        owner.goto(f"{url}/results?run={run_id}")
        expect(owner.get_by_text("Q1. What is the problem?", exact=True).first).to_be_visible(timeout=60_000)
        owner.reload()
        expect(owner.get_by_role("button", name="Compute similarity")).to_be_visible(timeout=60_000)
        expect(owner.get_by_text("A shared view of this run: read-only")).to_have_count(0)

        # One of the owner's runs goes into an open study: hidden from all but the operator.
        code = seed_items(data, cookie["value"])
        assert "Variant" not in " ".join(history_options(owner))  # the items' titles
        for page in (stranger, owner):
            page.goto(f"{url}/results?run={ITEM}")
            expect(page.get_by_text(UNKNOWN.format(ITEM))).to_be_visible(timeout=60_000)
            expect(page.get_by_text("answer 1 about p-gaia")).to_have_count(0)
        assert history_options(stranger) == []
        stranger.goto(f"{url}/results?run=nosuchrun00")  # a guess and a study item read the same
        expect(stranger.get_by_text(UNKNOWN.format("nosuchrun00"))).to_be_visible(timeout=60_000)

        # The rater: the rating page, whatever address they type.
        rater = contexts["rater"].new_page()
        rater.goto(f"{url}/?study={code}")
        expect(rater.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        # The rater's cookie is written by a component once the rating page has drawn; a typed
        # address before that would be a new browser as far as the server can tell.
        rater.wait_for_function("document.cookie.includes('rt_rater=1')", timeout=30_000)
        rater.goto(f"{url}/results?run={ITEM}")
        expect(rater.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        for secret in (ITEM, "scripted/demo", "mode: global"):
            expect(rater.get_by_text(secret)).to_have_count(0)

        # The operator, by the link from the server's log: everything, also after a reload.
        link = operator_link(log)
        op = contexts["operator"].new_page()
        op.goto(link)
        expect(op.get_by_text("This browser is now the operator's")).to_be_visible(timeout=60_000)
        expect(op).not_to_have_url(re.compile("operator="))
        op.wait_for_function("document.cookie.includes('rt_operator=')", timeout=30_000)
        op.reload()
        listed = history_options(op)
        assert len(listed) == 3 and all(any(f"Variant {v}" in o for o in listed) for v in ("one", "two")), listed
        op.goto(f"{url}/results?run={ITEM}")
        expect(op.get_by_text("answer 1 about p-gaia").first).to_be_visible(timeout=60_000)
    finally:
        for c in contexts.values():
            c.close()
        stop_server(proc)

    # The same store on a personal server (this computer only): whoever sits at it sees every run.
    proc, url = start_server(data, ARTIFACTS / "streamlit-access-personal.log")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        open_app(page, url)
        listed = history_options(page)
        assert len(listed) == 3, listed  # the owner's run and the study's items
        page.goto(f"{url}/results?run={run_id}")
        expect(page.get_by_role("button", name="Compute similarity")).to_be_visible(timeout=60_000)
        page.goto(f"{url}/results?run={ITEM}")
        expect(page.get_by_text("answer 1 about p-gaia").first).to_be_visible(timeout=60_000)
    finally:
        context.close()
        stop_server(proc)
