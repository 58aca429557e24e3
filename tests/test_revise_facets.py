"""A revision round on the facets path (run/revision/facets.py): each failed rubric check
answered from the neighbourhood's facets by template, the grounds kept, what changed and
why said in the round's record, and nothing changed when nothing can be improved."""
from __future__ import annotations

import dataclasses

from rt_core.run.facets import rubric
from rt_core.run.facets.kept import facets_of
from rt_core.run.facets.write import write
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.revision import facets as revise_facets
from rt_core.types import Ground, Paper, Proposal, Review
from tests.test_facets import HOOD, _pairs, _stem_request

# A criminology paper that states a gap; no pairing of HOOD quotes one.
GAP = Paper("c3", "Hot spots", abstract="Crime concentrates in few street segments. However, "
            "existing theories cannot explain why hot spots persist over decades, a limitation "
            "that remains open. We use police records from one city to measure persistence.", fields=["criminology"])
FOUND = [f for pf in facets_of([*HOOD, GAP]).values() for f in pf.facets]
TITLES = {p.id: p.title for p in [*HOOD, GAP]}
FIELDS = ["materials", "criminology"]


def _proposal(pairing) -> Proposal:
    w = write(pairing, str.title, TITLES)
    grounds = {k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs] for k, fs in w.grounds}
    return Proposal(**dict(w.answers), grounds=grounds)


def _review(p: Proposal, reviewer: str = "r-x") -> Review:
    r = rubric.check(p, reviewer, "criminology", FIELDS, str.title, None)
    return Review(reviewer, "", "", r.score, rubric={c.key: c.holds for c in r.checks})


def _gapless():
    """The best pairing with its gaps taken away: Q4 then quotes none."""
    plans = _pairs()
    return plans, dataclasses.replace(plans.pick(0), gaps=())


def test_a_proposal_without_a_stated_gap_gains_one_and_its_review_then_holds_the_check():
    plans, bare = _gapless()
    before = _proposal(bare)
    assert _review(before).rubric["gap"] is False
    after, changes = revise_facets.revised(before, [_review(before)], plans, FIELDS, str.title, TITLES, FOUND)
    assert _review(after).rubric["gap"] is True
    gaps = [g for g in after.grounds["q4"] if g.facet == "gap"]
    assert gaps and gaps[0].sentence in after.q4  # quoted, and kept as its ground
    # Only Q4 changed, and its record says which check it answers and what was taken.
    assert [c.question for c in changes] == ["q4"]
    assert "Q4 names no stated gap (1 of 1 reviewers)" in changes[0].answers
    assert gaps[0].sentence in changes[0].answers and changes[0].source == "check"
    assert all(after.grounds[k] for k in ("q1", "q2", "q3", "q5"))  # the other grounds kept
    assert after.q1 == before.q1


def test_a_round_with_nothing_to_improve_changes_nothing():
    plans = _pairs()
    before = _proposal(plans.pick(0))
    held = Review("r-x", "", "", 9, rubric={k: True for k in rubric.KEYS})
    after, changes = revise_facets.revised(before, [held], plans, FIELDS, str.title, TITLES, FOUND)
    assert after is before and changes == []


def test_a_proposal_too_close_to_a_paper_takes_the_next_pairing():
    plans = _pairs()
    before = _proposal(plans.pick(0))
    close = Review("r-x", "", "", 5, rubric={**{k: True for k in rubric.KEYS}, "prior": False})
    after, changes = revise_facets.revised(before, [close], plans, FIELDS, str.title, TITLES, FOUND)
    assert after.q1 != before.q1 and {c.question for c in changes} >= {"q1"}
    assert "the next pairing" in next(c.answers for c in changes if c.question == "q1")


def test_a_base_model_runs_revision_round_keeps_the_grounds_and_the_rubric(community, scripted):
    run_ = Simulation(_stem_request(revision_rounds=1), community).run_sync()
    assert run_.status == "done", run_.errors
    first = run_.rounds[0]
    assert first.proposal.grounds  # round 0 keeps what it was written from
    if len(run_.rounds) > 1:  # a round that changed something is reviewed by rubric again
        assert run_.rounds[1].proposal.grounds
        assert all(r.rubric for r in run_.rounds[1].reviews)
    else:
        assert first.stopped is not None
    assert run_.proposal.grounds and all(r.rubric for r in run_.reviews)
    assert not scripted.history  # no model call on the facets path, revision included
