"""Results shows a similarity next to the chance band Replay computes (issue 16, item 3):
the same band, drawn behind the bars, and a sentence saying where the run stands."""
from __future__ import annotations

import pytest

from rt_core.run.replay import ChanceBand
from rt_core.types import Proposal, Run, RunConfig, RunRequest
from studio import chance
from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("results-chance")

REFERENCE = "arxiv:2412.17767"  # a replay target with a shipped five-answer summary


@pytest.fixture(scope="module")
def compared():
    from rt_core import community
    from rt_core.run.evaluate import evaluate_against
    from rt_core.store import open_store

    s = open_store()
    community.ensure_loaded(s)
    run = Run(id="chance0001", status="done", created_at="2026-01-01T00:00:00+00:00",
              config=RunConfig(model="scripted/demo"),
              proposal=Proposal(q1="How can sparse attention speed up long-context agents?",
                                q2="Long tasks are slow.", q3="Memory grows with context.",
                                q4="Prior work kept all tokens.", q5="We sample keys by hashing."))
    s.runs.save(run)
    run = evaluate_against(run, REFERENCE, RunRequest(run.config), s)
    yield s, run
    s.runs.delete(run.id)


def _band_from_replay(s, run) -> ChanceBand:
    """The band as Replay computes it, for the same reference and embedder."""
    from rt_core.models.embed import Embedder
    from rt_core.run.evaluate import Reference
    from rt_core.run.replay import chance_band

    sim = run.similarity
    return chance_band(s, Embedder(sim.embedder, store=s),
                       Reference(s.corpus.get_paper(REFERENCE), sim.reference, sim.reference_source))


def test_results_show_the_replay_chance_band_beside_the_similarity(compared):
    s, run = compared
    expected = _band_from_replay(s, run)
    assert expected is not None and expected.n >= 3
    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    assert not at.exception and not at.error
    captions = [shown(c.value) for c in at.caption]
    line = next(c for c in captions if c.startswith("Chance band:"))
    assert f"median {expected.median:.3f}" in line and f"(n = {expected.n})" in line
    assert f"This run's {run.similarity.mean:.3f} is" in line
    [chart] = [c for c in at.get("plotly_chart") if f"sim_{run.id}" in str(c.proto.id)]
    spec = chart.proto.spec
    assert '"layer":"below"' in spec.replace(" ", "") and "chance band" in spec


def test_the_sentence_places_a_value_against_the_band():
    band = ChanceBand(median=0.2, low=0.15, high=0.3, n=12)
    assert "above the band" in chance.describe(band, 0.45)
    assert "inside the band" in chance.describe(band, 0.22)
    assert "below the band" in chance.describe(band, 0.1)


def test_no_reference_in_the_store_says_so(compared):
    s, run = compared
    orphan = Run(id="x", config=RunConfig(reference_paper_id="arxiv:0000.00000"),
                 similarity=run.similarity)
    band, why = chance.for_run(s, orphan)
    assert band is None and "not in the store" in why
