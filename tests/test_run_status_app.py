"""What a stored run's status means is rt_core's (rt_core/run/pipeline/progress.py); a page
only asks. Here the idea map's empty state: a run still being written says its ideas are
to come, a run that ended without any explains how to get a map."""
from __future__ import annotations

import pytest

from tests.apphelp import infos


def _empty_map(status: str) -> None:
    from rt_core.types import Run, RunConfig
    from studio import idea_map_view

    idea_map_view._empty([Run(id="st1", config=RunConfig(candidates=3), status=status)])


@pytest.mark.parametrize(("status", "says"), [
    ("pending", "No idea written yet"), ("running", "No idea written yet"),
    ("failed", "Nothing to map"), ("done", "Nothing to map"), ("interrupted", "Nothing to map")])
def test_the_idea_maps_empty_state_follows_the_runs_status(status, says):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_empty_map, args=(status,)).run()
    assert not at.exception
    assert infos(at).startswith(says), infos(at)
