"""One revision round end to end on the embedded base model (Gemma 3 270M): only the
questions a review or an automatic check flagged are rewritten, each change names its
flag, the same reviewers review again, and a re-run makes no call. The base model's text
varies in the odd token with what shares its decode batch, so now and then nothing is
flagged; the run must then say so and stop (the rewrite path itself is pinned down with
the scripted model in test_revise.py)."""
from __future__ import annotations

import pytest

from rt_core import community
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.revision.diff import changed_questions
from rt_core.run.revision.quotes import points
from rt_core.run.revision.report import stop_words
from rt_core.run.revision.stem import flags
from rt_core.run.styles.stem_checks import proposal_checks
from rt_core.types import RunConfig, RunRequest


@pytest.mark.slow
def test_one_revision_round_on_the_embedded_model(store):
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(researcher_ids=[preset["researcher_ids"][0], preset["researcher_ids"][4]],
                    paper_ids=preset["paper_ids"][:2] + preset["paper_ids"][4:6], num_reviewers=2,
                    revision_rounds=1, model=LOCAL_MODEL, embedder=LOCAL_EMBEDDER)
    sim = Simulation(RunRequest(cfg), store)
    run = sim.run_sync()
    assert run.status == "done", run.errors
    first = run.rounds[0]
    flagged = flags(first.proposal, first.reviews, sim.state.ctx.grounding)
    if len(run.rounds) == 1:  # nothing flagged, or nothing usable came back for a flagged question
        assert "changed nothing" in stop_words(first)
        return
    second = run.rounds[1]
    rewritten = [c.question for c in second.changes]
    assert rewritten == changed_questions(first.proposal, second.proposal)
    assert set(rewritten) <= set(flagged)  # only flagged questions move
    failed_checks = proposal_checks(first.proposal, sim.state.ctx.grounding)[1]
    said = points(first.reviews)
    for c in second.changes:
        assert c.answers in [f.words for f in flagged[c.question]]
        assert c.answers in failed_checks + said + ["Two answers largely repeat each other."] or \
            c.answers.startswith("Parts missing")
    # The rewrites leave no more automatic-check failures than round 0 had.
    assert len(proposal_checks(second.proposal, sim.state.ctx.grounding)[1]) <= len(failed_checks)
    assert [r.reviewer_id for r in second.reviews] == [r.reviewer_id for r in first.reviews]
    assert second.meta_review is not None and second.stopped
    again = Simulation(RunRequest(cfg), store).run_sync()
    assert again.usage.calls == 0
    assert [r.to_dict() for r in again.rounds] == [r.to_dict() for r in run.rounds]
