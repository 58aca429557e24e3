"""The app in a real browser: `streamlit run` as a subprocess, Debian Chromium via Playwright.

The server runs with RT_SCRIPTED=demo (the scripted fake model) and its own
RT_DATA_DIR. Screenshots go to test-artifacts/ (gitignored).
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rt_core.types import Paper
from tests.test_app import delete_rows

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
XSS = "<script>alert(1)</script>"
PRESET_NAME = "LLMs × galaxy surveys"
SCRIPTED_PRESET = "Scripted demo model (tests and demos, no real model)"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (scripts/setup --dev does)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                               "(pip install -r requirements-dev.txt)")
expect = sync_api.expect


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, deadline_s: float = 90.0) -> None:
    """Poll the health endpoint until it answers, the server dies, or the deadline passes."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)  # polling interval of a condition, not synchronisation
    raise TimeoutError(f"{url} was not healthy within {deadline_s} s")


def start_server(data_dir: Path, log_path: Path, scripted: bool = True, env: dict | None = None,
                 args: tuple[str, ...] = (), own_group: bool = False) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` on a free port; env adds to (or, with None values, removes from)
    this process's environment, args go to streamlit, own_group starts it in a process group
    of its own (so a test can SIGKILL the whole group)."""
    port = free_port()
    full = {**os.environ, "RT_DATA_DIR": str(data_dir)}
    full.pop("RT_DB", None)
    full.pop("RT_SCRIPTED", None)
    if scripted:
        full["RT_SCRIPTED"] = "demo"
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    with open(log_path, "wb") as log:  # the server keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *args],
            cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT, start_new_session=own_group)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
    except Exception:
        stop_server(proc)
        raise
    return proc, url


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("browser-data")
    from rt_core.store import Store

    path = data / "studio.sqlite3"
    s = Store(path)  # a hostile title is in the store before the app starts
    s.corpus.upsert_papers([Paper(id="xss:1", title=XSS, abstract="A paper whose title is a script tag.",
                           year=2024)])
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "streamlit-server.log")
    yield url
    stop_server(proc)
    s = Store(path)  # what this module added goes with it: the hostile paper, the runs
    delete_rows(s, "papers", ["xss:1"])
    for run in s.runs.list():
        s.runs.delete(run["id"])
    s.close()
    if os.environ.get("RT_UPDATE_SCREENSHOTS") == "1":
        publish_screenshots()


def publish_screenshots() -> None:
    """RT_UPDATE_SCREENSHOTS=1: copy the page screenshots to docs/screenshots/ for the README."""
    dest = ROOT / "docs" / "screenshots"
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("neighbourhood", "run-progress", "run-done", "results", "history", "settings",
                 "xss-literal", "results-embedded", "results-provenance"):
        src = ARTIFACTS / f"{name}.png"
        if src.exists():
            shutil.copyfile(src, dest / f"{name}.png")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    yield pg
    context.close()


def shot(page, name: str) -> Path:
    """A screenshot of the whole page: Streamlit scrolls inside its main container, so the
    viewport is stretched to the content's height for the shot."""
    path = ARTIFACTS / f"{name}.png"
    page.wait_for_function(  # charts drawn (a condition, polled by Playwright)
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.main-svg'))", timeout=30_000)
    size = page.viewport_size
    height = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                           " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 6000))})
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


def open_app(page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_text("Start from a case study")).to_be_visible(timeout=60_000)


def go(page, title: str) -> None:
    # Within the page links: a section header may carry the same word ("Run").
    page.get_by_test_id("stSidebarNavLink").get_by_text(title, exact=True).click()
    expect(page.get_by_role("heading", name=title).first).to_be_visible(timeout=30_000)


def choose(page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.get_by_role("option", name=option).click()


def test_golden_path_preset_run_results(server, page):
    open_app(page, server)
    page.get_by_role("button", name=PRESET_NAME, exact=True).click()
    expect(page.get_by_text("Loaded case study")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible()
    expect(page.get_by_text("Community graph")).to_be_visible()
    shot(page, "neighbourhood")

    go(page, "Run")
    expect(page.get_by_text("tiny offline demo model")).to_be_visible()
    choose(page, "Provider", SCRIPTED_PRESET)
    expect(page.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.get_by_text("progress events")).to_be_visible(timeout=60_000)
    shot(page, "run-progress")
    expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
        .to_be_visible(timeout=240_000)
    expect(page.get_by_text("Model calls", exact=True)).to_be_visible()
    shot(page, "run-done")

    page.get_by_role("button", name="Open results").click()
    for i, q in enumerate(["What is the problem?", "Why is it interesting and important?",
                           "Why is it hard?", "Why hasn't it been solved before?",
                           "What are the key components of the approach and results?"], 1):
        expect(page.get_by_text(f"Q{i}. {q}", exact=True).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Review by").first).to_be_visible()
    expect(page.get_by_text("Meta-review", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Download Markdown")).to_be_visible()
    shot(page, "results")

    go(page, "History")
    expect(page.get_by_test_id("stDataFrame")).to_be_visible()
    shot(page, "history")
    go(page, "Settings")
    expect(page.get_by_text("studio.sqlite3")).to_be_visible()
    shot(page, "settings")
    assert page.dialogs == []


def test_hostile_title_is_shown_literally_and_never_runs(server, page):
    open_app(page, server)
    box = page.get_by_label("Search text")
    box.fill("script alert")
    box.press("Enter")
    # the search has been applied once the researchers' tab answers it: people who work on
    # these words (topic search reads their papers), or nothing in the store
    applied = page.get_by_text(re.compile("works on this|Nothing in the store matches")).first
    expect(applied).to_be_visible(timeout=30_000)
    page.get_by_role("tab", name="Papers").click()
    expect(page.get_by_text(XSS, exact=True).first).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Add", exact=True).first.click()  # hidden tabs excluded
    expect(page.get_by_text("📄 " + XSS, exact=True)).to_be_visible(timeout=30_000)
    shot(page, "xss-literal")
    injected = page.evaluate(
        "() => Array.from(document.scripts).some(s => s.textContent.includes('alert(1)'))")
    assert not injected
    assert page.dialogs == []


@pytest.mark.slow
def test_newcomer_runs_the_case_study_on_the_embedded_model(tmp_path, browser):
    """What the README promises: no key, no scripted model, the default settings."""
    proc, url = start_server(tmp_path / "data", ARTIFACTS / "streamlit-embedded.log", scripted=False)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_app(page, url)
        page.get_by_role("button", name=PRESET_NAME, exact=True).click()
        expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
        go(page, "Run")
        # The Run page warms the model client in a thread as it is drawn: give a busy machine time.
        expect(page.get_by_text("tiny offline demo model")).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
            .to_be_visible(timeout=600_000)
        page.get_by_role("button", name="Open results").click()
        expect(page.get_by_text("Q1. What is the problem?", exact=True).first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Review by").first).to_be_visible()
        shot(page, "results-embedded")
    finally:
        context.close()
        stop_server(proc)
        if os.environ.get("RT_UPDATE_SCREENSHOTS") == "1":
            publish_screenshots()


def test_provenance_chips_highlight_the_graph_and_credit_explains(server, page):
    """Issue 18: a chip under an answer rings its author in the community graph; the credit
    button (estimate shown first) gives a sentence per researcher."""
    open_app(page, server)
    page.get_by_role("button", name=PRESET_NAME, exact=True).click()
    expect(page.get_by_text("6 researchers · 7 papers")).to_be_visible(timeout=30_000)
    go(page, "Run")
    choose(page, "Provider", SCRIPTED_PRESET)
    expect(page.get_by_text("scripted demo model returns canned")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.get_by_text("The proposal, reviews and scores are on the Results page")) \
        .to_be_visible(timeout=240_000)
    page.get_by_role("button", name="Open results").click()
    expect(page.get_by_text("Q1. What is the problem?", exact=True).first).to_be_visible(timeout=30_000)
    graph = page.get_by_test_id("stPlotlyChart").filter(has_text="generated paper")
    ring = graph.locator("path.point[style*='stroke: rgb(214, 39, 40)']")  # charts.HIGHLIGHT_RING
    expect(ring).to_have_count(0)
    name = "Graham Neubig"  # an author of the case study: a chip under every answer
    chip = page.get_by_role("radiogroup", name="Draws on").first.get_by_role("radio", name=re.compile(name))
    expect(chip).to_have_attribute("aria-checked", "false")
    chip.click()
    expect(chip).to_have_attribute("aria-checked", "true", timeout=30_000)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=30_000)
    expect(ring).to_have_count(1, timeout=30_000)
    expect(page.get_by_text("Leave-one-out: 6 re-writings")).to_be_visible()
    page.get_by_role("button", name="What each researcher brought").click()
    expect(page.get_by_test_id("stText").filter(has_text=re.compile(r"^Without "))).to_have_count(6, timeout=120_000)
    shot(page, "results-provenance")
    assert page.dialogs == []
