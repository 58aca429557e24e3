"""Revision rounds: the authors answer the reviews and the same reviewers review again,
with a scripted model that improves on request (tests/revisehelp.py)."""
from __future__ import annotations

import json
import re

import pytest

from rt_core.errors import ConfigError, InputError
from rt_core.run.pipeline.budget import estimate
from rt_core.run.pipeline.plan import plan_for, progress_groups
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.revision.diff import changed_questions, proposal_diff, word_diff
from rt_core.run.revision.quotes import find_weakness
from rt_core.run.revision.report import stop_words
from rt_core.settings import schema
from rt_core.types import Change, Proposal, Review, RunConfig, RunRequest
from tests.revisehelp import MADE_UP, REAL, improving

REVIEWERS = ["r-sam", "r-lee"]


def request(**cfg) -> RunRequest:
    base = dict(model="scripted/demo", researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                reviewer_ids=REVIEWERS)
    return RunRequest(RunConfig(**{**base, **cfg}), max_retries=0)


def revise_calls(history) -> int:
    return sum("The reviews are in" in json.dumps(h["messages"]) for h in history)


# -- rounds ---------------------------------------------------------------------------------
def test_the_trajectory_rises_and_stops_when_it_stops_rising(community, scripted):
    scripted.responder = improving(ceiling=5)
    run = Simulation(request(revision_rounds=3), community).run_sync()
    assert run.status == "done", run.errors
    means = [r.meta_review.score for r in run.rounds]
    assert [r.number for r in run.rounds] == [0, 1, 2] and means == [4.0, 5.0, 5.0]
    for rnd in run.rounds:  # the same reviewers every round, so the scores compare
        assert [rv.reviewer_id for rv in rnd.reviews] == REVIEWERS
    assert not run.rounds[0].stopped and not run.rounds[1].stopped
    assert "did not improve" in stop_words(run.rounds[2])
    assert revise_calls(scripted.history) == 2  # round 3's stages did nothing
    # Round 2 only tied round 1: the run shows the best-scored round, the earlier on a tie
    # (a revision that does not help never replaces what it revised); round 0 stays as it was.
    assert run.proposal.answers() == run.rounds[1].proposal.answers() != run.rounds[2].proposal.answers()
    assert run.meta_review.score == 5.0 and run.reviews == run.rounds[1].reviews
    assert "keeps round 1" in stop_words(run.rounds[2])
    assert "IMPROVED" not in " ".join(run.rounds[0].proposal.answers().values())
    assert run.proposal.drafts  # the authors' drafts stay with the run's proposal


def test_a_rising_trajectory_runs_every_round_asked_for(community, scripted):
    scripted.responder = improving(ceiling=10)
    run = Simulation(request(revision_rounds=2), community).run_sync()
    assert [r.meta_review.score for r in run.rounds] == [4.0, 5.0, 6.0]
    assert "last of the 2" in stop_words(run.rounds[2])


def test_each_change_names_exactly_the_changed_question_and_a_real_weakness(community, scripted):
    scripted.responder = improving(ceiling=10)
    run = Simulation(request(revision_rounds=2), community).run_sync()
    assert run.rounds[1].changes == [Change("q1", REAL, "review")]
    assert run.rounds[2].changes == [Change("q2", REAL, "review")]
    assert [d.question for d in proposal_diff(run.rounds[1].proposal, run.rounds[2].proposal)] == ["q2"]


def test_a_made_up_weakness_is_not_accepted(community, scripted):
    scripted.responder = improving(ceiling=10, quote=MADE_UP)
    run = Simulation(request(revision_rounds=1), community).run_sync()
    assert run.rounds[1].changes == [Change("q1", "", "")]


def test_a_rerun_makes_no_call(community, scripted):
    scripted.responder = improving(ceiling=10)
    first = Simulation(request(revision_rounds=2), community).run_sync()
    before = len(scripted.history)
    again = Simulation(request(revision_rounds=2), community).run_sync()
    assert again.usage.calls == 0 and len(scripted.history) == before
    assert [r.to_dict() for r in again.rounds] == [r.to_dict() for r in first.rounds]


def test_an_interrupted_round_keeps_the_earlier_rounds_and_resumes(community, scripted):
    scripted.responder = improving(ceiling=10, fail_reviews_of=lambda p: "IMPROVED" in p)
    failed = Simulation(request(revision_rounds=1), community).run_sync()
    assert failed.status == "failed"
    assert failed.errors[-1].stage == "revise" and "round 1" in failed.errors[-1].message
    assert failed.rounds[0].meta_review.score == 4.0  # round 0 kept, whole
    assert failed.proposal.answers() == failed.rounds[0].proposal.answers()  # not the unreviewed one
    stored = community.runs.load(failed.id)
    assert len(stored.rounds) == 2 and not stored.rounds[1].reviews
    scripted.responder = improving(ceiling=10)
    before = len(scripted.history)
    resumed = Simulation(request(revision_rounds=1), community, run_id=failed.id, resume=True).run_sync()
    assert resumed.status == "done" and resumed.rounds[1].meta_review.score == 5.0
    new = scripted.history[before:]
    assert revise_calls(new) == 0  # the revision came from the cache
    assert len(new) == len(REVIEWERS) + 1  # the two reviews of round 1 and its meta-review


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("rounds", [-1, 4])
def test_rounds_out_of_range_are_one_config_error(rounds):
    with pytest.raises(ConfigError, match="between 0 and 3"):
        schema.check_config(RunConfig(revision_rounds=rounds))


def test_a_run_without_reviewers_cannot_be_revised(community, scripted):
    with pytest.raises(InputError, match="without reviewers cannot be revised"):
        Simulation(request(reviewer_ids=[], num_reviewers=0, revision_rounds=1), community).start()


def test_a_run_whose_reviews_all_failed_says_it_cannot_be_revised(community, scripted):
    scripted.responder = improving(ceiling=10, fail_reviews_of=lambda p: True)
    run = Simulation(request(revision_rounds=1), community).run_sync()
    assert run.status == "failed" and not run.rounds
    assert "no reviews, so it cannot be revised" in run.errors[-1].message
    assert revise_calls(scripted.history) == 0


def test_rounds_respect_the_budget_and_keep_what_finished(community, scripted):
    scripted.responder = improving(ceiling=10)
    base = Simulation(request(), community).run_sync()  # the same first round, now cached
    est = estimate(request(revision_rounds=1).config).stages
    cap = max(c.tokens for name, c in est.items() if not name[-1].isdigit()) + 1
    # Every first-round stage fits the cap (and costs nothing: cached); the revision is
    # admitted by its estimate, and its long reply leaves too little for round 1's reviews.
    scripted.responder = improving(ceiling=10, pad=cap)
    run = Simulation(request(revision_rounds=1, max_tokens=cap), community).run_sync()
    assert run.status == "failed" and run.errors[-1].stage == "budget"
    assert "stage 'review_1'" in run.errors[-1].message
    assert "not finished: review 1, meta review 1" in run.errors[-1].message
    assert run.proposal.answers() == base.proposal.answers()  # round 0 is still the run's
    assert len(run.rounds) == 2 and not run.rounds[1].reviews
    resumed = Simulation(request(revision_rounds=1), community, run_id=run.id, resume=True).run_sync()
    assert resumed.status == "done" and resumed.rounds[1].meta_review is not None


# -- the plan -------------------------------------------------------------------------------
def test_rounds_are_stages_after_the_reviews_with_estimates_and_a_progress_bar():
    cfg = RunConfig(model="scripted/demo", researcher_ids=["r"], reviewer_ids=["q"], revision_rounds=2,
                    reference_paper_id="x")
    plan = {s.name: s for s in plan_for(cfg)}
    names = list(plan)
    assert names[names.index("meta_review") + 1:] == [
        "revise_1", "review_1", "meta_review_1", "revise_2", "review_2", "meta_review_2", "evaluate",
        "provenance", "review_provenance"]
    assert plan["provenance"].needs == ("meta_review_2",)  # sources of the final proposal
    assert plan["revise_1"].needs == ("meta_review",) and plan["revise_2"].needs == ("meta_review_1",)
    assert plan["evaluate"].needs == ("meta_review_2",)  # the reference sees the final proposal
    est = estimate(cfg)
    assert est.stages["revise_1"].calls == 1 and est.stages["review_1"] == est.stages["review"]
    assert ("revise", "Revising: rounds after review") in progress_groups(cfg)
    assert "revise_1" not in [s.name for s in plan_for(RunConfig(researcher_ids=["r"]))]


# -- the diff and the quotes ------------------------------------------------------------------
def test_the_diff_names_exactly_the_changed_questions():
    a = Proposal(q1="How can we map stars?", q2="It matters.", q3="Hard.", q4="Open.", q5="We will.")
    b = Proposal(q1="How can we map stars?", q2="It  matters.\n", q3="Hard because of noise.",
                 q4="Open.", q5="We will use Gaia data.")
    assert changed_questions(a, b) == ["q3", "q5"]  # spacing alone is no change
    diffs = proposal_diff(a, b)
    assert [d.question for d in diffs] == ["q3", "q5"]
    assert diffs[0].text == "[-Hard.-] {+Hard because of noise.+}"
    assert word_diff("we map the disk", "we model the disk") == "we [-map-] {+model+} the disk"


def test_a_quote_must_be_found_in_the_reviews():
    reviews = [Review("r", weaknesses="- The data plan is vague and the survey is not named.\n"
                                      "- Baselines are not named.")]
    from rt_core.run.revision.quotes import points

    ps = points(reviews)
    assert find_weakness("the data plan is vague", ps) == ps[0]  # a stretch, any case
    assert find_weakness("Baselines are not named", ps) == "Baselines are not named."
    assert find_weakness("Baselines were never named", ps) == ""  # a paraphrase
    assert find_weakness(MADE_UP, ps) == ""
    assert find_weakness("not named", ps) == ""  # too short to tell


def test_a_base_model_rewrites_only_flagged_questions():
    from rt_core.run.revision.stem import Flag, flags
    from rt_core.run.styles.grounding import Grounding
    from rt_core.run.styles.stem_checks import CheckKind

    p = Proposal(q1="How can a", q2="This matters because b", q3="It is hard because c",
                 q4="Earlier work has not solved it because d", q5="We will think.")
    reviews = [Review("r", weaknesses="- Q3 does not say why the noise is hard to model.")]
    found = flags(p, reviews, Grounding([]))
    assert set(found) == {"q3", "q5"}
    assert found["q5"][0].check is CheckKind.Q5_DATA_METRIC and found["q5"][0].source == "check"
    assert found["q3"] == [Flag(None, "Q3 does not say why the noise is hard to model.", "review")]


def test_revised_runs_round_trip_through_the_store(community, scripted):
    scripted.responder = improving(ceiling=10)
    run = Simulation(request(revision_rounds=1), community).run_sync()
    loaded = community.runs.load(run.id)
    assert [r.to_dict() for r in loaded.rounds] == [r.to_dict() for r in run.rounds]
    assert re.search("IMPROVED", loaded.rounds[1].proposal.q1)


def test_the_revision_sees_the_nearest_prior_work_when_novelty_was_checked(community, scripted):
    scripted.responder = improving(ceiling=10)
    run = Simulation(request(revision_rounds=1, check_novelty=True), community).run_sync()
    assert run.status == "done", run.errors
    titles = [p.title for f in run.novelty.facets for p in f.nearest]
    assert titles
    revise_prompt = next(json.dumps(h["messages"]) for h in scripted.history
                         if "The reviews are in" in json.dumps(h["messages"]))
    assert "nearest prior work" in revise_prompt and json.dumps(titles[0])[1:-1] in revise_prompt


# -- the CLI and the export -------------------------------------------------------------------
def test_the_cli_revises_and_the_markdown_carries_the_rounds(tmp_path, scripted, capsys):
    from rt_core.__main__ import main

    scripted.responder = improving(ceiling=5)
    code = main(["--db", str(tmp_path / "cli.sqlite3"), "run", "--model", "scripted/demo",
                 "--researchers", "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854",
                 "--reviewers", "1", "--revision-rounds", "2", "--out-json", str(tmp_path / "run.json"),
                 "--out-md", str(tmp_path / "run.md")])
    assert code == 0, capsys.readouterr().err
    run = json.loads((tmp_path / "run.json").read_text())
    assert [r["number"] for r in run["rounds"]] == [0, 1, 2]
    md = (tmp_path / "run.md").read_text()
    assert "## Revision rounds" in md and "did not improve" in md
    assert f"**Q1** answers (a review): {REAL}" in md and "{+IMPROVED:" in md


def test_the_cli_refuses_rounds_out_of_range_in_one_line(tmp_path, capsys):
    from rt_core.__main__ import main

    code = main(["--db", str(tmp_path / "cli.sqlite3"), "run", "--model", "scripted/demo",
                 "--researchers", "r-neubig-graham", "--revision-rounds", "5"])
    err = capsys.readouterr().err
    assert code != 0 and "revision rounds must be between 0 and 3, not 5" in err
    assert "Traceback" not in err


def test_with_candidates_the_rounds_revise_the_best_one_after_the_ranking(community, scripted):
    scripted.responder = improving(ceiling=10)
    sim = Simulation(request(revision_rounds=1, candidates=2), community)
    run = sim.run_sync()
    assert run.status == "done", run.errors
    assert sim.started.index("revise_1") > sim.started.index("rank")
    best = next(c for c in run.candidates if c.id == run.tournament.order[0])
    assert run.rounds[0].proposal.answers() == best.proposal.answers()
    assert [rv.reviewer_id for rv in run.rounds[1].reviews] == [rv.reviewer_id for rv in best.reviews]
