"""Revising a finished run afterwards (rt_core/run/revision/more.py): only the new rounds'
calls are made, the rest come from the cache, with the scripted model that improves on
request (tests/revisehelp.py)."""
from __future__ import annotations

import json

import pytest

from rt_core.errors import InputError
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.revision import more as revise_more
from rt_core.run.revision.report import stop_words
from rt_core.types import Credit, RunRequest
from tests.revisehelp import improving
from tests.test_revise import REVIEWERS, request, revise_calls

ROUND_CALLS = 1 + len(REVIEWERS) + 1  # the revision, each reviewer, the meta-review


def finished(store, **cfg):
    run = Simulation(request(**cfg), store).run_sync()
    assert run.status == "done", run.errors
    return run


def test_a_finished_run_gets_one_round_with_only_that_rounds_calls(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community)
    assert not base.rounds
    before = len(scripted.history)
    run = revise_more.revise_finished(community, base.id, 1)
    assert run.status == "done", run.errors
    new = scripted.history[before:]
    assert len(new) == ROUND_CALLS and revise_calls(new) == 1
    assert [r.number for r in run.rounds] == [0, 1]
    assert [r.meta_review.score for r in run.rounds] == [4.0, 5.0]
    assert run.rounds[0].proposal.answers() == base.proposal.answers()
    # The run shows its best round (round 1 rose), and the store has it under the same id.
    assert run.proposal.answers() == run.rounds[1].proposal.answers() != base.proposal.answers()
    stored = community.runs.load(base.id)
    assert stored.config.revision_rounds == 1 and len(stored.rounds) == 2
    assert stored.created_at == base.created_at
    assert "last of the 1" in stop_words(stored.rounds[1])


def test_asking_again_comes_from_the_cache(community, scripted):
    scripted.responder = improving(ceiling=10)
    first = revise_more.revise_finished(community, finished(community).id, 1)
    before = len(scripted.history)
    twin = finished(community)  # the same settings: every call cached
    again = revise_more.revise_finished(community, twin.id, 1)
    assert len(scripted.history) == before and again.usage.calls == 0
    assert [r.to_dict() for r in again.rounds] == [r.to_dict() for r in first.rounds]
    resumed = Simulation(RunRequest(again.config), community, run_id=again.id, resume=True).run_sync()
    assert resumed.usage.calls == 0 and len(scripted.history) == before


def test_a_round_that_was_the_last_asked_for_reopens(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community, revision_rounds=1)
    before = len(scripted.history)
    run = revise_more.revise_finished(community, base.id, 1)
    assert len(scripted.history) - before == ROUND_CALLS
    assert [r.meta_review.score for r in run.rounds] == [4.0, 5.0, 6.0]
    assert not run.rounds[1].stopped and "last of the 2" in stop_words(run.rounds[2])


def test_a_round_stopped_by_its_score_gets_the_round_asked_for_and_says_so(community, scripted):
    scripted.responder = improving(ceiling=5)
    base = finished(community, revision_rounds=2)
    assert "did not improve" in stop_words(base.rounds[2])
    before = len(scripted.history)
    run = revise_more.revise_finished(community, base.id, 1)
    assert len(scripted.history) - before == ROUND_CALLS
    assert [r.number for r in run.rounds] == [0, 1, 2, 3]
    assert "a further round was asked for after this stop" in stop_words(run.rounds[2])
    assert "did not improve" in stop_words(run.rounds[3])  # the rule holds for the new round
    assert run.config.revision_reopened == [2]
    assert run.proposal.answers() == run.rounds[1].proposal.answers()  # still the best-scored
    with pytest.raises(InputError, match="already has 3 revision rounds"):
        revise_more.plan(run, 1)


def test_more_than_three_rounds_in_all_is_one_clear_error(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community, revision_rounds=1)
    before = len(scripted.history)
    with pytest.raises(InputError, match="1 to 2 more can be asked for, not 3"):
        revise_more.revise_finished(community, base.id, 3)
    assert len(scripted.history) == before
    assert community.runs.load(base.id).config.revision_rounds == 1


def test_a_run_without_reviews_or_unfinished_cannot_be_revised(community, scripted):
    scripted.responder = improving(ceiling=10)
    plain = finished(community, reviewer_ids=[], num_reviewers=0)
    with pytest.raises(InputError, match="no reviews, so it cannot be revised"):
        revise_more.revise_finished(community, plain.id, 1)
    failed = Simulation(request(), community).run_sync()
    failed.status = "failed"
    community.runs.save(failed)
    with pytest.raises(InputError, match="is not finished"):
        revise_more.plan(community.runs.load(failed.id), 1)


def test_a_run_whose_revision_changed_nothing_is_refused_before_any_call(community, scripted):
    """Asking again would bring the same unchanged reply back from the cache."""
    improve = improving(ceiling=10)

    def unchanged(messages, params):
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if "The reviews are in" in system:  # the authors send their proposal back as it was
            mine = messages[-1]["content"].split("read it:", 1)[1].split("The meta-review:", 1)[0]
            return mine.strip()
        return improve(messages, params)

    scripted.responder = unchanged
    base = finished(community)
    run = revise_more.revise_finished(community, base.id, 1)
    assert run.status == "done", run.errors
    assert [r.number for r in run.rounds] == [0] and "changed nothing" in stop_words(run.rounds[0])
    before = len(scripted.history)
    with pytest.raises(InputError, match="changed nothing, and asking again"):
        revise_more.revise_finished(community, base.id, 1)
    assert len(scripted.history) == before


def test_an_estimate_over_the_cap_is_refused_before_any_call(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community)
    need = revise_more.plan(base, 1, community).calls.tokens
    before = len(scripted.history)
    with pytest.raises(InputError, match="more than the cap"):
        revise_more.revise_finished(community, base.id, 1, max_tokens=need - 1)
    assert len(scripted.history) == before
    stored = community.runs.load(base.id)
    assert stored.status == "done" and not stored.rounds


def test_a_cap_that_cannot_hold_one_call_is_refused(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community)
    with pytest.raises(InputError, match="more than zero"):
        revise_more.revise_finished(community, base.id, 1, max_tokens=0)
    with pytest.raises(InputError, match="smaller than one model call"):
        revise_more.revise_finished(community, base.id, 1, max_tokens=5)
    assert community.runs.load(base.id).status == "done" and not community.runs.load(base.id).rounds


def test_the_cap_stops_the_new_round_cleanly_and_keeps_the_run(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community)
    plan = revise_more.plan(base, 1, community)
    cap = plan.calls.tokens + 1  # the estimate fits; the long revision below does not
    scripted.responder = improving(ceiling=10, pad=cap)
    run = revise_more.revise_finished(community, base.id, 1, max_tokens=cap)
    assert run.status == "failed" and run.errors[-1].stage == "budget"
    assert "stage 'review_1'" in run.errors[-1].message
    stored = community.runs.load(base.id)
    assert stored.proposal.answers() == base.proposal.answers()  # round 0 is still the run's
    assert stored.reviews == base.reviews and len(stored.rounds) == 2 and not stored.rounds[1].reviews
    resumed = Simulation(RunRequest(stored.config), community, run_id=base.id, resume=True).run_sync()
    assert resumed.status == "done" and resumed.rounds[1].meta_review is not None


def test_results_made_afterwards_stay_while_they_hold(community, scripted):
    scripted.responder = improving(ceiling=4)  # the revision never raises the score
    base = finished(community)
    base.judge = {"overall": 7}
    community.runs.save(base)
    run = revise_more.revise_finished(community, base.id, 1)
    assert run.proposal.answers() == base.proposal.answers() and run.judge == {"overall": 7}


def test_a_judge_of_the_old_proposal_goes_when_the_proposal_changes(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = finished(community)
    base.judge = {"overall": 7}
    base.credit = [Credit("author", "r-ada", sentence="without Ada, Q5 loses its data")]
    community.runs.save(base)
    run = revise_more.revise_finished(community, base.id, 1)
    assert run.proposal.answers() != base.proposal.answers() and run.judge is None
    assert community.runs.load(base.id).credit == base.credit  # made without revision rounds


# -- the CLI, through the real parser ---------------------------------------------------------
def test_the_cli_prints_the_estimate_then_revises(tmp_path, scripted, capsys):
    from rt_core.__main__ import main

    scripted.responder = improving(ceiling=10)
    db = str(tmp_path / "cli.sqlite3")
    code = main(["--db", db, "run", "--model", "scripted/demo", "--researchers",
                 "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854", "--reviewers", "1",
                 "--out-json", str(tmp_path / "run.json")])
    assert code == 0, capsys.readouterr().err
    run_id = json.loads((tmp_path / "run.json").read_text())["id"]
    capsys.readouterr()
    before = len(scripted.history)
    code = main(["--db", db, "revise", run_id, "--rounds", "1", "--out-json", str(tmp_path / "rev.json"),
                 "--out-md", str(tmp_path / "rev.md")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.index("Revising: round 1, 3 ") < err.index("[revise]")
    assert len(scripted.history) - before == 3  # the revision, one review, the meta-review
    out = json.loads((tmp_path / "rev.json").read_text())
    assert out["id"] == run_id and [r["number"] for r in out["rounds"]] == [0, 1]
    assert "## Revision rounds" in (tmp_path / "rev.md").read_text()
    assert "round 1: mean score 5.00" in err
    code = main(["--db", db, "revise", run_id, "--rounds", "3"])
    err = capsys.readouterr().err
    assert code != 0 and "1 to 2 more can be asked for, not 3" in err and "Traceback" not in err
