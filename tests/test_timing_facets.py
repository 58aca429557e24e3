"""The wall time of a run on the facets path (the embedded model's, run/facets/): no model
call, so no speed and no calibration, only the work on this machine the stages state
(`costs.Calls.local`), scaled by how long earlier such runs took.

Nothing here is timed: the earlier run's wall time is planted in the store.
"""
from __future__ import annotations

import dataclasses
import datetime

import pytest

from rt_core.config import LOCAL_MODEL
from rt_core.models import calibration
from rt_core.models.facts import facts_for
from rt_core.run.pipeline import budget, costs, timing
from rt_core.types import Run, RunConfig


def cli_default(**kw) -> RunConfig:
    return RunConfig(**{"model": LOCAL_MODEL, "researcher_ids": ["r-ada", "r-nia"],
                        "paper_ids": ["p-gaia", "p-llm"], "num_reviewers": 3, **kw})


def no_speed(monkeypatch, load: float = 1.0) -> None:
    """Asking for the model's speed (which would time it on a fresh store) is a failure here;
    the machine's load is planted."""
    def refuse(*a, **kw):
        raise AssertionError("the facets path asked for the model's speed")
    monkeypatch.setattr(calibration, "speed_for", refuse)
    monkeypatch.setattr(timing, "machine_load", lambda: load)


@pytest.mark.parametrize("load", [1.0, 2.5])
def test_the_facets_path_counts_no_call_and_needs_no_speed(community, monkeypatch, load):
    """The CLI default on the embedded model: 0 calls for writing and reviewing, its time the
    facets' work, then the reviews beside the answers' provenance, then the reviews', at the
    machine's load, with no calibration asked for."""
    no_speed(monkeypatch, load)
    cfg = cli_default()
    assert budget.estimate(cfg, community).total.max_calls == 0
    assert budget.estimate(cfg, community).summary().startswith("Estimate: no model call")
    e = timing.for_config(cfg, community, calibrate=True)
    path = (costs.facets_write(costs.sizes_for(cfg, community)) + max(3 * costs.FACETS_REVIEW, costs.FACETS_PROVENANCE)
            + costs.FACETS_REVIEW_PROVENANCE)
    assert e.seconds == pytest.approx(load * path)
    assert "no model call: the papers' facets" in e.text()


def test_the_apps_default_counts_each_candidates_reviews_and_the_round(community, monkeypatch):
    """Four candidates, the novelty check and a revision round: every review (4 candidates'
    and the round's) is rubric work, and the revision makes no call either."""
    no_speed(monkeypatch)
    cfg = cli_default(candidates=4, check_novelty=True, revision_rounds=1)
    e = timing.for_config(cfg, community)
    reviews = 3 * costs.FACETS_REVIEW_MANY + 3 * costs.FACETS_REVIEW_AGAIN
    write = costs.facets_write(costs.sizes_for(cfg, community))
    assert e.seconds == pytest.approx(write + costs.FACETS_MERGE + costs.FACETS_NOVELTY
                                      + reviews + costs.FACETS_REVIEW_PROVENANCE)
    assert budget.estimate(cfg, community).total.max_calls == 0


def test_more_paper_text_means_more_facets_work():
    """A fixed figure once estimated seven papers' facets like two papers' (an app run of the
    galaxy-surveys case study took about 4 s against 1 s estimated): the work goes with the
    text, about 2.7 times as long for 3.7 times the characters."""
    few = costs.sizes_at(cli_default(), facts_for(cli_default()))
    many = dataclasses.replace(few, paper_chars=few.paper_chars * 37 // 10)
    ratio = costs.facets_write(many) / costs.facets_write(few)
    assert 2.2 < ratio < 3.3


def test_earlier_facets_runs_scale_the_estimate(community, monkeypatch):
    """A finished facets run (no call, no cache hit) that took twice its estimate doubles the
    next one: the work between calls is all a facets run is."""
    no_speed(monkeypatch)
    cfg = cli_default()
    raw = timing.for_config(cfg, community).seconds
    run = Run(id="facets-1", config=cfg, status="done",
              created_at=datetime.datetime.now(datetime.UTC).isoformat())
    community.runs.save(run)
    community.runs.add_wall(run.id, 2 * raw)
    e = timing.for_config(cfg, community)
    assert e.seconds == pytest.approx(2 * raw) and "x2.00, as 1 earlier run took" in e.text()


def test_papers_whose_facets_are_kept_cost_only_their_pairing(community, tmp_path, monkeypatch):
    """Finding a paper's facets and embedding their sentences is paid once (kept in the
    store, or shipped for the bundled papers: run/facets/bundle.py); counted for every run,
    the first run in a fresh data folder, which no longer pays it, took half its estimate."""
    from rt_core.run.facets import bundle
    from rt_core.run.facets.kept import facets_of

    monkeypatch.setattr(bundle, "FILE", tmp_path / "none.json")  # nothing shipped for these
    cfg = cli_default()
    papers = community.corpus.get_papers(cfg.paper_ids)
    chars = sum(len(p.title) + len(p.abstract) + 40 for p in papers)
    before = costs.facets_write(costs.sizes_for(cfg, community))
    facets_of(papers[:1], community)  # the first paper's facets are now kept
    kept = costs.facets_write(costs.sizes_for(cfg, community))
    first = len(papers[0].title) + len(papers[0].abstract) + 40
    assert before == pytest.approx(costs.FACETS_WRITE_FIXED + (costs.FACETS_WRITE_PER_KCHAR
                                                               + costs.FACETS_FIND_PER_KCHAR) * chars / 1000)
    # planted: the unkept characters not counted apart (every paper costs its finding)
    assert before - kept == pytest.approx(costs.FACETS_FIND_PER_KCHAR * first / 1000)
