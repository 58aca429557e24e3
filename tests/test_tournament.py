"""The tournament: a scripted judge with a known taste, in Swiss rounds, both orders."""
from __future__ import annotations

import itertools

import pytest
from scipy.stats import kendalltau

from rt_core.errors import ConfigError
from rt_core.export.candidates import tournament_notes
from rt_core.models.facts import facts_for
from rt_core.run.candidates import judging, ranking, tournament
from rt_core.run.pipeline import budget
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.pipeline.validation import check_candidates
from rt_core.settings.endpoint import Key
from rt_core.types import Judgement, RunConfig, RunRequest
from tests.ideas import JUDGE_MARK, by_order, number, responder

AUTHORS = ["r-ada", "r-nia", "r-cole"]
PAPERS = ["p-gaia", "p-llm", "p-crime"]


def request(n: int, reviewers: int = 0, **cfg) -> RunRequest:
    return RunRequest(RunConfig(model="scripted/demo", researcher_ids=AUTHORS, paper_ids=PAPERS,
                                num_reviewers=reviewers, candidates=n, **cfg), max_retries=0)


def judge_calls(scripted) -> list[dict]:
    return [h for h in scripted.history
            if any(JUDGE_MARK in str(m.get("content", "")) for m in h["messages"])]


def test_a_judge_with_a_hidden_order_is_recovered(community, scripted):
    hidden = [4, 1, 6, 2, 5, 3]  # best first
    scripted.responder = responder(by_order(hidden))
    run = Simulation(request(6), community).run_sync()
    assert run.status == "done", run.errors
    t = run.tournament
    assert t.method == "judge" and t.judge_model == "scripted/demo"
    recovered = [number(c) for c in t.order]
    tau = kendalltau([hidden.index(c) for c in recovered], range(len(hidden))).statistic
    print(f"Kendall tau, recovered vs hidden order (n=6, Swiss): {tau:.3f}")
    assert tau >= 0.85 and recovered[0] == hidden[0]
    # Every pair it met was judged in both orders, and never more than the formula allows.
    pairs = {}
    for j in t.judgements:
        pairs.setdefault(frozenset((j.first, j.second)), []).append((j.first, j.second))
    assert all(len(o) == 2 and o[0] == o[1][::-1] for o in pairs.values())
    assert len(t.judgements) == len(judge_calls(scripted)) <= judging.planned_calls(6) < 30
    # A consistent judge has no position bias; the scores come with intervals around them.
    assert t.position_bias == 0.5
    assert all(t.intervals[c][0] <= t.scores[c] + 1e-9 and t.scores[c] <= t.intervals[c][1] + 1e-9
               for c in t.order)
    assert sum(t.wins[a][b] for a in t.wins for b in t.wins[a]) == len(t.judgements)
    assert all(j.reason for j in t.judgements)
    # The best candidate is the run's proposal.
    best = next(c for c in run.candidates if c.id == t.order[0])
    assert run.proposal == best.proposal


def test_a_judge_that_always_picks_the_first_shown_moves_nothing(community, scripted):
    scripted.responder = responder(lambda a, b: "A")
    run = Simulation(request(4), community).run_sync()
    t = run.tournament
    assert t.position_bias == 1.0
    assert len(set(t.scores.values())) == 1  # every candidate won as often as it lost
    assert t.order == ["c1", "c2", "c3", "c4"]  # the tie-break: candidate order


def test_a_reply_without_a_decision_is_asked_once_more_then_counts_for_no_one(community, scripted):
    scripted.responder = responder(lambda a, b: None)
    run = Simulation(request(3), community).run_sync()
    t = run.tournament
    assert run.status == "done", run.errors
    assert t.judgements and all(j.winner == "" for j in t.judgements)
    assert len(judge_calls(scripted)) == 2 * len(t.judgements)  # each asked twice, no more
    assert t.position_bias is None and len(set(t.scores.values())) == 1
    assert not any("no decision" in n for n in t.notes)  # counted where it is shown, not stored
    assert f"{len(t.judgements)} of {len(t.judgements)} judgements gave no decision (asked twice); " \
           "they count for neither side." in tournament_notes(run)


def test_a_decision_given_when_asked_again_counts(community, scripted):
    asked: dict[frozenset, int] = {}

    def prefer(a, b):
        key = frozenset((a, b, "order", a))
        asked[key] = asked.get(key, 0) + 1
        return None if asked[key] == 1 else ("A" if a < b else "B")

    scripted.responder = responder(prefer)
    run = Simulation(request(2), community).run_sync()
    assert [j.winner for j in run.tournament.judgements] == ["c1", "c1"]


def test_swiss_pairing_needs_n_log_n_comparisons_and_meets_no_pair_twice():
    for n in range(2, 13):
        ids = [f"c{i}" for i in range(1, n + 1)]
        met: set[frozenset] = set()
        played = 0
        for r in range(judging.rounds(n)):
            pairs = tournament.swiss_pairs(ids[r % n:] + ids[:r % n], met)
            assert not {frozenset(p) for p in pairs} & met
            assert len({x for p in pairs for x in p}) == 2 * len(pairs)
            met |= {frozenset(p) for p in pairs}
            played += len(pairs)
        assert played <= judging.planned_pairs(n) <= n * (n - 1) // 2
    assert judging.planned_calls(6) == 24 and judging.planned_calls(12) == 60


def test_bradley_terry_and_the_win_matrix_come_from_choix_on_the_decisions():
    ids = ["c1", "c2", "c3"]
    js = [Judgement(a, b, a) for a, b in itertools.permutations(ids, 2) if a < b]
    js += [Judgement(b, a, a) for a, b in itertools.permutations(ids, 2) if a < b]
    scores = ranking.bradley_terry(3, ranking.decisions(js, ids))
    assert list(scores.argsort()[::-1]) == [0, 1, 2]
    assert ranking.win_matrix(js, ids)["c1"] == {"c2": 2, "c3": 2}
    assert ranking.position_bias(js) == 0.5


@pytest.mark.parametrize("reply", ["Winner: A", "**Winner:** B", 'x {"winner": "B"}', "I pick neither."])
def test_the_decision_is_read_from_the_reply(reply):
    assert tournament.parse_decision(reply) == {"Winner: A": "A", "**Winner:** B": "B",
                                                'x {"winner": "B"}': "B"}.get(reply)


def test_only_an_instruction_model_judges_and_a_named_base_model_is_refused():
    assert judging.can_judge(RunConfig(model="scripted/demo", candidates=3))
    assert not judging.can_judge(RunConfig(candidates=3))  # the embedded base model
    with pytest.raises(ConfigError, match="cannot judge"):
        cfg = RunConfig(model="scripted/demo", candidates=3, judge_model="local/gemma")
        check_candidates(cfg, facts_for(cfg))


def test_a_judge_with_its_own_base_url_never_gets_the_runs_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    req = RunRequest(RunConfig(model="openai/gpt-4o-mini", candidates=3, judge_model="openai/judge",
                               judge_base_url="http://127.0.0.1:9/v1"),
                     keys={"model": Key("sk-server", "the test", server=True)})
    s = tournament.judge_settings(req)
    assert (s.model, s.base_url, s.api_key, s.temperature) == ("openai/judge", "http://127.0.0.1:9/v1", "", 0.0)
    own = tournament.judge_settings(RunRequest.with_key(RunConfig(model="openai/x", candidates=3),
                                                        "sk-run"))
    assert own.api_key == "sk-run"
    # At the provider's own endpoint the operator's key may go, marked as the server's.
    hosted = tournament.judge_settings(RunRequest(RunConfig(model="openai/x", candidates=3,
                                                            judge_model="openai/judge")))
    assert (hosted.api_key, hosted.server_key) == ("sk-operator", True)


def test_the_estimate_counts_the_tournament_by_the_formula():
    est = budget.estimate(request(6).config)
    assert est.stages["tournament"].calls == judging.planned_calls(6)
    assert est.stages["write_candidates"].calls == 6
    signals = budget.estimate(RunConfig(researcher_ids=AUTHORS, paper_ids=PAPERS, candidates=6))
    assert signals.stages["tournament"].calls == 0  # the embedded model cannot judge


def test_a_judge_at_its_own_server_gets_its_own_key_and_never_the_operators(
        community, scripted, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    scripted.responder = responder(by_order([2, 1, 3]))
    judge = responder(by_order([2, 1, 3]))
    openai_server.responder = lambda msgs: judge(msgs, {})
    cfg = dict(judge_model="openai/judge", judge_base_url=openai_server.base_url)
    with pytest.raises(ConfigError, match="no API key for model 'openai/judge'"):
        Simulation(request(3, **cfg), community).start()  # the operator's key may not go there
    req = request(3, **cfg)
    req.keys["judge"] = Key("sk-judge", "the test")
    run = Simulation(req, community).run_sync()
    assert run.status == "done", run.errors
    sent = openai_server.chat_requests()
    assert sent and len(sent) == len(run.tournament.judgements)
    assert {r["headers"].get("authorization") for r in sent} == {"Bearer sk-judge"}
    assert run.tournament.judge_model == "openai/judge" and run.tournament.order[0] == "c2"


def test_a_judge_nobody_answers_fails_the_run_in_one_message_and_keeps_the_candidates(
        community, scripted):
    scripted.responder = responder()
    req = request(3, judge_model="openai/judge", judge_base_url="http://127.0.0.1:9/v1")
    req.keys["judge"] = Key("sk-judge", "the test")
    run = Simulation(req, community).run_sync()
    assert run.status == "failed"
    assert len(run.errors) == 1 and "127.0.0.1:9" in run.errors[0].message
    stored = community.runs.load(run.id)
    assert [bool(c.proposal.q1) for c in stored.candidates] == [True, True, True]
