"""Results shows every similarity next to the chance band Replay computes (issue 16, item 3):
the run's own and each comparison's, the same band drawn behind the bars, and a sentence
saying where the value stands. Comparisons sit beside the run and never change it."""
from __future__ import annotations

import pytest

from rt_core.run.replay.paper import ChanceBand
from rt_core.types import Proposal, Run, RunConfig, RunRequest
from studio import chance
from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("results-chance")

REFERENCE = "arxiv:2412.17767"  # a replay target with a shipped five-answer summary


OTHER = "arxiv:2404.07738"  # another replay target with a shipped summary
PROPOSAL = Proposal(q1="How can sparse attention speed up long-context agents?",
                    q2="Long tasks are slow.", q3="Memory grows with context.",
                    q4="Prior work kept all tokens.", q5="We sample keys by hashing.")


@pytest.fixture(scope="module")
def compared():
    """A run started with a reference (its own similarity, as the run's evaluate stage
    computes it) and a run started without one, compared afterwards with two papers."""
    from rt_core import community
    from rt_core.models.client import run_async
    from rt_core.models.embed import Embedder
    from rt_core.run.evidence.evaluate import compare, evaluate_against, reference_answers
    from rt_core.store import open_store

    s = open_store()
    community.ensure_loaded(s)
    run = Run(id="chance0001", status="done", created_at="2026-01-01T00:00:00+00:00",
              config=RunConfig(model="scripted/demo", reference_paper_id=REFERENCE), proposal=PROPOSAL)
    reference = run_async(reference_answers(s, s.corpus.get_paper(REFERENCE)))
    run.similarity = compare(Embedder(run.config.embedder, store=s), PROPOSAL, reference)
    s.runs.save(run)
    bare = Run(id="chance0002", status="done", created_at="2026-01-01T00:00:00+00:00",
               config=RunConfig(model="scripted/demo"), proposal=PROPOSAL)
    s.runs.save(bare)
    for paper_id in (REFERENCE, OTHER):
        evaluate_against(bare, paper_id, RunRequest(bare.config), s)
    yield s, run, bare
    s.runs.delete(run.id)
    s.runs.delete(bare.id)


def _band_from_replay(s, sim, paper_id=REFERENCE) -> ChanceBand:
    """The band as Replay computes it, for the same reference and embedder."""
    from rt_core.models.embed import Embedder
    from rt_core.run.evidence.evaluate import Reference
    from rt_core.run.replay.paper import chance_band

    return chance_band(s, Embedder(sim.embedder, store=s),
                       Reference(s.corpus.get_paper(paper_id), sim.reference, sim.reference_source))


def test_results_show_the_replay_chance_band_beside_the_similarity(compared):
    s, run, _ = compared
    expected = _band_from_replay(s, run.similarity)
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


def test_each_comparison_shows_its_own_chance_band(compared):
    """A run started without a reference, compared with two papers: both comparisons are
    listed, each beside the band for its own paper, and the run still has no reference."""
    s, _, bare = compared
    listed = s.comparisons.for_run(bare.id)
    assert [c.paper_id for c in listed] == [REFERENCE, OTHER]
    at = new_app()
    at.session_state["results_run"] = bare.id
    goto(at, "results")
    assert not at.exception and not at.error
    captions = [shown(c.value) for c in at.caption]
    assert any("started without a reference paper" in c for c in captions)
    bands = [c for c in captions if c.startswith("Chance band:")]
    assert len(bands) == 2
    for cmp, line in zip(listed, bands, strict=True):
        expected = _band_from_replay(s, cmp.similarity, cmp.paper_id)
        assert f"median {expected.median:.3f}" in line and f"(n = {expected.n})" in line
        assert f"This comparison's {cmp.similarity.mean:.3f} is" in line
        [chart] = [c for c in at.get("plotly_chart") if f"sim_{bare.id}_{cmp.id}" in str(c.proto.id)]
        assert "chance band" in chart.proto.spec
    assert _band_from_replay(s, listed[0].similarity) != _band_from_replay(s, listed[1].similarity, OTHER)
    assert s.runs.load(bare.id).config.reference_paper_id == ""


def test_answers_pasted_for_one_paper_are_not_offered_for_another(compared):
    s, _, bare = compared
    at = new_app()
    at.session_state["results_run"] = bare.id
    goto(at, "results")
    at.selectbox(key=f"sim_ref_{bare.id}").set_value(REFERENCE).run()
    at.text_area(key=f"sim_pasted_{bare.id}_{REFERENCE}").input("[Question 1] Pasted for the first paper.").run()
    at.selectbox(key=f"sim_ref_{bare.id}").set_value(OTHER).run()
    assert at.text_area(key=f"sim_pasted_{bare.id}_{OTHER}").value == ""
    assert not any("Pasted for the first paper" in (t.value or "") for t in at.text_area)


def test_no_reference_in_the_store_says_so(compared):
    s, run, _ = compared
    orphan = Run(id="x", config=RunConfig(reference_paper_id="arxiv:0000.00000"),
                 similarity=run.similarity)
    band, why = chance.for_run(s, orphan)
    assert band is None and "not in the store" in why
