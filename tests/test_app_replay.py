"""The Replay page through the app's entry file (AppTest), on the scripted model."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.apphelp import goto, module_data_dir, new_app

TARGET = "arxiv:2410.16179"


data_dir = module_data_dir("replay-app")


def replay_page() -> AppTest:
    at = goto(new_app(), "replay")
    return at


def test_replay_page_runs_two_modes_and_shows_them_against_chance(demo):
    at = replay_page()
    assert at.selectbox(key="replay_target").value == "arxiv:2412.17767"  # targets first
    at.selectbox(key="replay_target").set_value(TARGET).run()
    assert any(m.label == "Cited papers" and m.value == "5" for m in at.metric)
    at.session_state["model"] = "scripted/demo"
    for mode in ("agent", "global"):
        at.checkbox(key=f"replay_mode_{mode}").uncheck()
    at.run()
    at.button(key="replay_start").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    job = at.session_state["replay_jobs"][TARGET]
    assert job.wait(timeout=300) and job.error is None and not job.unexpected
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["mode"]) == ["self", "data"] and table["mean"].notna().all()
    captions = "\n".join(c.value for c in at.caption)
    assert "Evaluator for every score below: local/all" in captions.replace("\\", "")
    assert "Chance band: median" in captions
    assert at.get("plotly_chart")
    # Each mode's run is a normal stored run, one click from the Results page.
    assert at.selectbox(key="replay_open_pick").options


def test_no_mode_ticked_means_no_replay(demo):
    at = replay_page()
    for mode in ("self", "agent", "data", "global"):
        at.checkbox(key=f"replay_mode_{mode}").uncheck()
    at.run()
    assert at.button(key="replay_start").disabled
