"""The Run page warms what a run with its settings will load, the ranking's fit included, and
nothing else (issue 49): a run from the papers' facets makes no model call to hide an import
behind, so the first run of a process paid the ranking's import and shared the interpreter
with the page's import of litellm and the OpenAI SDK, which it never uses; the estimate
missed both that run and the next. The command line still warms the ranking only once a
run's first stage has begun (tests/test_plan.py)."""
from __future__ import annotations

import pytest

from rt_core.run.pipeline import warmup
from tests.apphelp import PRESET, goto, module_data_dir, new_app

data_dir = module_data_dir("warmup-page")


@pytest.fixture
def warmed(monkeypatch):
    """Every part `warm_up` was asked for (nothing is imported)."""
    asked: set[str] = set()

    def recording(parts=warmup.ALL, preload=None):
        asked.update(parts)
        return warmup.Warming([])

    monkeypatch.setattr(warmup, "warm_up", recording)
    # The app's default brainstorm. Its defaults are read once, when studio.loop_settings is
    # first imported (the test suite's conftest sets 1 candidate for speed), so the default
    # itself is set here: an environment variable set now would pass only when this module
    # is the first to import them (it failed in the whole test command).
    from studio import loop_settings, state

    monkeypatch.setitem(loop_settings.DEFAULTS, "loop_candidates", 4)
    monkeypatch.setitem(state.PERSISTENT, "loop_candidates", 4)  # the session's defaults, taken in at import
    return asked


def _run_page():
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    return goto(at, "run")


def test_the_run_page_warms_the_ranking_and_not_the_model_client_of_an_offline_run(warmed):
    at = _run_page()
    assert at.selectbox(key="provider").value == "Embedded offline demo model"
    assert {warmup.RANKING, warmup.EMBEDDER} <= warmed, warmed  # planted: no ranking warmed
    assert not warmed & {warmup.CLIENT, warmup.SDK}, warmed  # planted: the page warms ALL too


def test_the_run_page_warms_the_model_client_once_a_model_it_calls_is_chosen(warmed):
    at = _run_page()
    assert not warmed & {warmup.CLIENT, warmup.SDK}
    at.selectbox(key="provider").select("OpenAI").run()
    assert {warmup.CLIENT, warmup.SDK, warmup.RANKING} <= warmed, warmed  # planted: warmed at first draw only
