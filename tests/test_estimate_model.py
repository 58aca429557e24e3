"""What a recorded call's time means on a model whose calls share one engine, and the
re-asks a run makes as a rule: the pieces the wall time before Start is built from.

Every call is planted as a recorded row (tokens, seconds, when it ended), so each test
knows what the model was doing; nothing here is timed.
"""
from __future__ import annotations

import pytest

from rt_core.config import LOCAL_MODEL
from rt_core.models import speeds
from rt_core.models.facts import facts_for
from rt_core.run.candidates import costs as candidate_costs
from rt_core.run.pipeline import budget, costs
from rt_core.store.speeds import CallTime
from rt_core.types import RunConfig

T0 = 1_000_000.0  # an instant in the past, in epoch seconds


@pytest.fixture(autouse=True)
def stem_path(monkeypatch):
    """These tests time the embedded model's stem path: the one it takes when the papers
    share no usable facet. On the facets path it makes no call (tests/test_timing_facets.py)."""
    monkeypatch.setattr(costs, "from_facets", lambda sizes: False)


def call(start: float, seconds: float, written: int = 20, calibration: bool = False) -> CallTime:
    """A call of 300 prompt tokens that started `start` seconds after T0."""
    return CallTime(300, written, seconds, calibration, at=T0 + start + seconds)


# -- calls in flight ---------------------------------------------------------------------------------
def test_calls_one_after_another_were_one_at_a_time():
    assert speeds.in_flight([call(0, 2), call(2, 2), call(5, 1)]) == pytest.approx(1.0)


def test_calls_in_flight_are_their_seconds_over_the_time_the_model_was_busy():
    """Three calls of 4 s beside each other, then one alone for 2 s: 14 s of calls over
    6 s busy (the 3 s idle between them is not the model's time)."""
    calls = [call(0, 4), call(0, 4), call(0, 4), call(7, 2)]
    assert speeds.in_flight(calls) == pytest.approx(14 / 6)
    assert speeds.fit(calls).at_once == pytest.approx(14 / 6)


def test_calls_that_do_not_say_when_they_ended_leave_it_unknown():
    assert speeds.in_flight([CallTime(300, 20, 1.0)]) is None
    assert speeds.fit([CallTime(300, 20, 1.0)]).at_once is None


def test_each_call_gets_its_share_of_the_seconds_it_shared():
    """Two calls overlap for 2 s: each is charged half of those seconds, and the shares
    add up to the time the model was busy."""
    shares = speeds.shares([call(0, 3), call(1, 3)])
    assert [s for s, _ in shares] == pytest.approx([1 + 1.0, 1.0 + 1])
    assert [k for _, k in shares] == pytest.approx([(1 + 2 * 2) / 3, (2 * 2 + 1) / 3])
    assert sum(s for s, _ in shares) == pytest.approx(4.0)


# -- crowding ----------------------------------------------------------------------------------------
def crowded(g: float) -> list[CallTime]:
    """Batches of k equal calls started together, each call's share of the model taking
    0.5 s * k**g: alone, two, four and six at once, twice each."""
    out, start = [], 0.0
    for k in (1, 2, 4, 6, 1, 2, 4, 6):
        seconds = 0.5 * k ** g * k  # each call's wall time: its share times the calls beside it
        out += [call(start, seconds) for _ in range(k)]
        start += seconds + 1
    return out


@pytest.mark.parametrize("g", [0.0, 0.5, 1.0])
def test_crowding_is_how_a_calls_share_grows_with_the_calls_beside_it(g):
    assert speeds.crowding(crowded(g)) == pytest.approx(g)
    assert speeds.fit(crowded(g)).crowding == pytest.approx(g)


def test_calls_all_alike_crowded_say_nothing_of_crowding():
    same = [call(3 * i, 2) for i in range(5)] + [call(3 * i, 2) for i in range(5)]
    assert speeds.crowding(same) == 0.0
    assert speeds.crowding(crowded(1.0)[:3]) == 0.0  # too few calls


def test_wall_time_is_the_calls_seconds_over_those_in_flight_at_their_crowding():
    """Calls measured three at a time: 30 s of their time is 10 s of the model's. Work that
    keeps fewer going is cheaper per call as far as crowding says; uncrowded, it is not."""
    s = speeds.Speed(1.0, 0.0, 0.0, 9, at_once=3.0, crowding=1.0)
    assert s.wall(30.0) == pytest.approx(10.0)
    assert s.wall(30.0, 1.5) == pytest.approx(5.0)
    assert speeds.Speed(1.0, 0.0, 0.0, 9, at_once=3.0).wall(30.0, 1.5) == pytest.approx(10.0)
    assert speeds.Speed(1.0, 0.0, 0.0, 9).wall(30.0) == pytest.approx(30.0)  # never measured: one at a time


# -- the store keeps when each call ended --------------------------------------------------------------
def test_the_store_gives_back_when_each_call_ended(store):
    planted = [call(0, 4), call(0, 4), call(5, 1)]
    for c in planted:
        store.call_speeds.add(LOCAL_MODEL, c)
    back = store.call_speeds.recent(LOCAL_MODEL)
    assert sorted(c.at for c in back) == sorted(c.at for c in planted)
    assert speeds.in_flight(back) == pytest.approx(9 / 5)
    assert sorted(c.at for c in store.call_speeds.between(LOCAL_MODEL, T0, T0 + 10)) == sorted(c.at for c in planted)


def test_calibration_calls_one_at_a_time_measure_one_at_a_time():
    """The calibration's calls run one after another and say when they ended, so its
    first estimate does not take them for calls that ran beside each other."""
    s = speeds.fit([call(0, 1.4, written=1, calibration=True), call(1.5, 0.8, written=24, calibration=True)])
    assert s.calibrated and s.at_once == pytest.approx(1.0) and s.crowding == 0.0


# -- re-asks made as a rule ----------------------------------------------------------------------------
def stem_sizes(model: str = LOCAL_MODEL, **kw) -> costs.Sizes:
    """Sizes of a run on the embedded model (a base model: the stem style), or on `model`."""
    return costs.Sizes(**{"facts": facts_for(RunConfig(model=model)), "authors": 3, "reviewers": 3,
                          "new_reviewer_profiles": 3, "paper_chars": 6000, "profile_chars": 3000,
                          "candidates": 4, **kw})


def test_a_base_models_reviews_count_the_lines_sent_back():
    """Two lines and a score per review; about one line in five is asked again (3.4 calls
    a review measured), counted over a stage's reviews: three reviews typically make ten
    calls, between the nine without re-asks and twenty-seven with all."""
    one = costs.review(stem_sizes(reviewers=1))
    assert (one.calls, one.max_calls) == (3, 9) and one.typical == 3  # 0.4 of a re-ask: none
    three = costs.review(stem_sizes())
    assert (three.calls, three.typical, three.max_calls) == (9, 10, 27)
    assert three.completion_tokens == (3 * 2 + 1) * costs.STEM_REVIEW_LINE + 3 * costs.STEM_SCORE


def test_a_base_models_review_counts_its_headings_as_lanes():
    """A base model's review asks its headings at once (tests/test_claims.py), so its calls
    go two at a time beside the other reviews': the wall time estimate takes the review
    stages' lanes from there. A chat model's review is one call."""
    from rt_core.run.pipeline import timing
    from rt_core.run.styles import stem

    s = stem_sizes()
    assert timing.lanes("review", s) == 3 * len(stem.REVIEW_HEADINGS) == 6
    assert timing.lanes("review_2", s) == 6  # a revision round's reviews
    assert timing.lanes("review_candidates", s) == 3 * 4 * 2
    assert timing.lanes("review", stem_sizes(model="openai/gpt-4o-mini")) == 3


def test_re_asks_add_up_over_stages_and_candidates():
    s = stem_sizes()
    per_candidate = candidate_costs.review_candidates(s)
    assert per_candidate.typical - per_candidate.calls == 4 * 1  # one re-ask per candidate's reviews
    total = costs.review(s) + costs.write_drafts(s)
    assert total.reasked == costs.review(s).reasked == 1 and total.typical == total.calls + 1


def test_the_plan_of_the_embedded_model_counts_its_typical_re_asks(community):
    """The app's default on the embedded model: its stages' typical calls include the
    reviews' re-asks (one per three reviews: 4 candidates' reviews, and the revision's)."""
    cfg = RunConfig(model=LOCAL_MODEL, researcher_ids=["r-ada", "r-nia", "r-cole"],
                    paper_ids=["p-gaia", "p-llm"], num_reviewers=3, candidates=4, revision_rounds=1)
    total = budget.estimate(cfg, community).total
    assert total.calls < total.typical <= total.max_calls
    assert total.typical - total.calls == 4 + 1


def test_a_chat_models_counts_are_unchanged():
    chat = costs.review(stem_sizes("scripted/demo", reviewers=2))
    assert chat.reasked == 0 and chat.typical == chat.calls == 2


def test_the_estimate_says_how_many_calls_a_run_typically_makes():
    """The count a person reads before Start: the calls without re-asks, the typical count
    with the re-asks a base model's reviews make as a rule, and the most there can be."""
    from rt_core.run.pipeline.costs import Calls

    assert Calls(12, 12).count_text() == "12"
    assert Calls(12, 30).count_text() == "12 (up to 30 with re-asks)"
    assert Calls(12, 30, reasked=6).count_text() == "12 (typically 18, up to 30 with re-asks)"
    cfg = RunConfig(model=LOCAL_MODEL, researcher_ids=["r-a", "r-b"], paper_ids=["p-1"], num_reviewers=2)
    assert "typically" in budget.estimate(cfg).summary()
