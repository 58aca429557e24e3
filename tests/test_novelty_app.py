"""Results shows a plain run's novelty check under the proposal: verdicts, the nearest
papers as links, the explanation as text, and that offline the store is the literature."""
from __future__ import annotations

import pytest

from rt_core.types import FacetNovelty, NearPaper, Novelty, Proposal, Run, RunConfig
from studio.novelty_view import safe_link
from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("results-novelty")

HOSTILE = "<script>alert(1)</script> [click](javascript:alert(2))"
FAILED = ("every online source failed, so the store is the literature (Semantic Scholar: HTTP 503; "
          "OpenAlex: HTTP 500; arXiv: no answer in time)")
NOVELTY = Novelty(
    facets=[FacetNovelty("q1", [NearPaper("Star maps from kinematics", 0.71, 2020,
                                          "https://arxiv.org/abs/2001.00001", "store", "p1"),
                                NearPaper(HOSTILE, 0.30, None, "javascript:alert(3)", "openalex")],
                         'close prior work: "Star maps from kinematics" (2020)', 7,
                         "The problem is already addressed by [P1]."),
            FacetNovelty("q5", [], "no close match found in 7 papers searched", 7)],
    sources=["store"], online=False, threshold=0.62,
    notes=[FAILED, "the threshold was measured with another embedder"], warning=FAILED)


@pytest.fixture(scope="module")
def checked():
    from rt_core.store import open_store

    s = open_store()
    run = Run(id="novelty0001", status="done", created_at="2026-01-01T00:00:00+00:00",
              config=RunConfig(model="scripted/demo", check_novelty=True),
              proposal=Proposal(q1="How do stars move?", q5="We map them."), novelty=NOVELTY)
    s.runs.save(run)
    yield run
    s.runs.delete(run.id)


def test_results_show_verdicts_and_nearest_papers_as_safe_links(checked):
    at = new_app()
    at.session_state["results_run"] = checked.id
    goto(at, "results")
    assert not at.exception and not at.error
    warnings = [shown(w.value) for w in at.warning]
    assert '**Problem (Q1)**: close prior work: "Star maps from kinematics" (2020)' in warnings
    assert "**Method (Q5)**: no close match found in 7 papers searched" in [
        shown(s.value) for s in at.success]
    papers = next(m.value for m in at.markdown if "similarity 0.71" in m.value)
    assert "(https://arxiv.org/abs/2001.00001)" in papers  # a link
    # the hostile title is escaped text, and a javascript: address is never linked
    assert "](javascript" not in papers and "javascript\\:alert\\(3" not in papers
    assert "<script>" not in papers and "\\<script\\>" in papers
    assert "The problem is already addressed by [P1]." in [t.value for t in at.text]
    failed = [w for w in warnings if w.startswith("every online source failed")]
    assert len(failed) == 1 and "OpenAlex: HTTP 500" in failed[0]
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "Offline: the papers in this store are the literature" in captions


def test_only_web_addresses_become_links():
    assert safe_link("https://x.org/a b(1)") == "https://x.org/a%20b%281%29"
    assert safe_link("javascript:alert(1)") == safe_link("data:text/html,x") == ""
    assert safe_link("/relative") == ""
