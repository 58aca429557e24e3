"""The map of ideas in a real browser: the four-candidate run of tests/test_ideamap_app.py on
Results, the map drawn, a hover over the candidate whose Q1 holds a script tag shows the tag as
text, a click on that point opens its five answers. The map's screenshot goes to
test-artifacts/idea-map.png and, with RT_UPDATE_SCREENSHOTS=1, to docs/screenshots/."""
from __future__ import annotations

import re

import pytest

from tests import test_browser
from tests.candidates_run import XSS
from tests.reliability.browserhelp import SHORT, settle
from tests.test_browser import ARTIFACTS, expect, open_app, start_server, stop_server
from tests.test_candidates_browser import publish
from tests.test_ideamap_app import LOUD, mapped_run

pytestmark = pytest.mark.browser
RUN_ID = "imapb"
browser = test_browser.browser
page = test_browser.page


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from rt_core import community
    from rt_core.store import Store

    data = tmp_path_factory.mktemp("ideamap-browser-data")
    s = Store(data / "studio.sqlite3")
    community.ensure_loaded(s)
    s.runs.save(mapped_run(RUN_ID, s))
    s.close()
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(data, ARTIFACTS / "ideamap-server.log")
    yield url
    stop_server(proc)


def test_the_map_hovers_escaped_and_opens_a_point_on_click(server, page):
    open_app(page, server)
    page.goto(f"{server}/results?run={RUN_ID}")
    expect(page.get_by_role("heading", name="Map of ideas")).to_be_visible(timeout=60_000)
    page.get_by_text("Show the map of ideas").click()
    box = page.locator(f".st-key-ideamap_box_{RUN_ID}")
    chart = box.get_by_test_id("stPlotlyChart")
    points = chart.locator(".scatterlayer .trace path.point")
    expect(points).to_have_count(12, timeout=SHORT)  # four ideas, eight papers
    settle(page)
    chart.scroll_into_view_if_needed()
    label = chart.locator(".hoverlayer .hovertext")
    for i in range(points.count()):  # find c3 by its hover label
        # The label of the point hovered before stays until plotly draws the next one, so
        # read a label only after the mouse has left the chart and the old one is gone
        # (a fresh-clone run read point i-1's label for point i and never found c3).
        page.mouse.move(0, 0)
        expect(label).to_have_count(0)
        points.nth(i).hover(force=True)  # plotly hears the mouse on its drag layer, on top
        expect(label).to_have_count(1)
        if "c3" in (label.text_content() or ""):
            break
    # Both tags as text: plotly draws a <b> it is given (a <script> it leaves as text anyway).
    expect(label).to_contain_text(f"{XSS} {LOUD}")
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "idea-map.png"
    box.screenshot(path=str(path))
    publish(path)
    points.nth(i).click(force=True)
    # (.last: the candidate card's collapsed answers hold the same text, hidden)
    expect(page.get_by_text("Gap of c3.").last).to_be_visible(timeout=SHORT)
    assert page.dialogs == []


# The idea points' fills (one per trace: a trace is a field mix), every point's drawn opacity,
# and whether the legend's box meets the plot area or any point's label.
MAP_STATE = """(box) => {
  const rect = (e) => e.getBoundingClientRect();
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const legend = box.querySelector('.legend');
  const plot = rect(box.querySelector('.nsewdrag'));
  const traces = [...box.querySelectorAll('.scatterlayer .trace')];
  const fills = traces.map(t => [...t.querySelectorAll('path.point')].map(p => p.style.fill))
                      .filter(f => f.length && !f.includes('rgb(110, 110, 110)'));  // not the grey priors
  return {
    fills: fills.map(f => f[0]),
    opacities: [...box.querySelectorAll('.scatterlayer path.point')].map(p => Number(getComputedStyle(p).opacity)),
    legendOverPlot: legend ? meets(rect(legend), plot) : null,
    legendOverLabels: legend ? [...box.querySelectorAll('.scatterlayer .textpoint')]
      .some(t => meets(rect(legend), rect(t))) : null,
  };
}"""


def test_the_map_colours_each_field_mix_and_a_click_fades_nothing(server, page):
    """Three field mixes (c1 and c4 alike, c2 astronomy alone, c3 NLP with systems) in three
    colours; the legend stays off the plot and its labels; after a click every point is drawn
    whole (the camera button's PNG is the map as shown), and that PNG downloads."""
    open_app(page, server)
    page.goto(f"{server}/results?run={RUN_ID}")
    expect(page.get_by_role("heading", name="Map of ideas")).to_be_visible(timeout=60_000)
    page.get_by_text("Show the map of ideas").click()
    box = page.locator(f".st-key-ideamap_box_{RUN_ID}")
    chart = box.get_by_test_id("stPlotlyChart")
    points = chart.locator(".scatterlayer .trace path.point")
    expect(points).to_have_count(12, timeout=SHORT)
    settle(page)
    chart.scroll_into_view_if_needed()
    state = box.evaluate(MAP_STATE)
    assert len(state["fills"]) == 3 and len(set(state["fills"])) == 3, state["fills"]
    assert state["legendOverPlot"] is False and state["legendOverLabels"] is False, state
    points.first.click(force=True)  # a click selects its point: the page hears it so
    expect(page.get_by_text(re.compile(rf"· run {RUN_ID} · novelty distance"))).to_be_visible(timeout=SHORT)
    settle(page)
    expect(points).to_have_count(12, timeout=SHORT)
    state = box.evaluate(MAP_STATE)
    assert min(state["opacities"]) >= 0.7, state["opacities"]  # nothing faded to a fifth
    box.screenshot(path=str(ARTIFACTS / "idea-map-clicked.png"))
    chart.hover()
    with page.expect_download(timeout=SHORT) as got:
        chart.locator('.modebar-btn[data-title="download plot as a png" i]').click()
    assert got.value.suggested_filename == f"idea-map-{RUN_ID}.png"
    got.value.save_as(ARTIFACTS / "idea-map-export.png")
