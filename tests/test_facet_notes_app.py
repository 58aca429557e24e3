"""Bad input on a base model's run through the app (AppTest): papers without an abstract,
in a neighbourhood whose papers then share no usable facet, give one clear message on the
Run page, said once, and the run still finishes (written by stems)."""
from __future__ import annotations

import pytest

from rt_core.models import registry
from rt_core.types import Paper
from tests.apphelp import errors, goto, infos, module_data_dir, new_app

data_dir = module_data_dir("facet-notes-app")
BARE = [Paper("bare-1", "A record without an abstract", fields=["criminology"], year=2020),
        Paper("bare-2", "Another bare record", fields=["criminology"], year=2021)]


@pytest.fixture
def base_model(request, scripted):
    """`scripted/base` declared a base model (prompt style stem), as the bundled Gemma is."""
    previous = registry.declare("scripted/base", registry.Capabilities(
        prompt_style=registry.STEM, in_process=True))
    request.addfinalizer(lambda: registry.forget("scripted/base", previous))
    scripted.responder = lambda messages, params: " 6" if "score" in messages[-1]["content"][-80:].lower() \
        else " and compare both with careful measurements."
    return scripted


def test_papers_without_abstracts_are_said_once_on_the_run_page_and_the_run_finishes(base_model):
    from rt_core import community
    from rt_core.store import open_store

    s = open_store()
    community.ensure_loaded(s)
    s.corpus.upsert_papers(BARE)
    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    at.session_state["hood_p"] = [p.id for p in BARE]
    goto(at, "run")
    at.session_state["model"] = "scripted/base"
    at.session_state["num_reviewers"] = 1
    at.run()
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300), "the run did not finish"
    at.run()
    assert job.run.status == "done", job.run.errors
    said = [line for line in infos(at).splitlines() if "no abstract" in line]
    assert len(said) == 1, infos(at)
    assert "“A record without an abstract” and “Another bare record” have no abstract" in said[0]
    assert job.run.proposal is not None and job.run.proposal.q1
