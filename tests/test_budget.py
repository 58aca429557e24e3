"""The budget: the estimate before Start, the cap while the run goes, and the resume."""
from __future__ import annotations

import dataclasses

import pytest

from rt_core.__main__ import main
from rt_core.errors import InputError
from rt_core.models.scripted import demo_responder
from rt_core.run.pipeline import budget
from rt_core.run.pipeline.plan import plan_for
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import RunConfig, RunRequest

AUTHORS = ["r-ada", "r-nia", "r-cole"]


def config(**kw) -> RunConfig:
    return RunConfig(**{"model": "scripted/demo", "researcher_ids": AUTHORS,
                        "paper_ids": ["p-gaia", "p-llm"], "num_reviewers": 2, **kw})


def sim(store, cfg: RunConfig, **kw) -> Simulation:
    return Simulation(RunRequest(cfg, max_retries=0), store, **kw)


# -- the estimate ----------------------------------------------------------------------------

def test_chat_estimate_counts_exactly_the_calls_a_run_makes(community, demo):
    cfg = config()
    est = budget.estimate(cfg, community)
    run = sim(community, cfg).run_sync()
    assert run.status == "done" and len(run.reviews) == 2
    # 3 profiles, 3 drafts, 1 merge, 2 reviewer profiles, 2 reviews, 1 meta-review
    assert est.total.calls == run.usage.calls == len(demo.history) == 12
    assert est.cost == 0.0 and "no cost" in est.summary()


def test_stem_estimate_bounds_the_calls_a_run_makes(community, demo, stem_writing):
    """A base model's lines are re-asked when empty or off-topic, so the count varies; it
    lies between the calls without re-asks and the calls with every re-ask. (The estimate
    counts the stem path; a run whose papers pair writes from facets with no call.)"""
    cfg = config(prompt_style="stem")
    est = budget.estimate(cfg, community)
    run = sim(community, cfg).run_sync()
    assert run.status == "done"
    # 3 drafts x 5 lines, a merge that samples Q1 twice (Q2-Q5: the drafts' best), 2 reviews x 3 lines
    assert est.total.calls == 15 + 2 + 6
    assert est.total.calls <= run.usage.calls <= est.total.max_calls


def test_an_unknown_price_is_said_plainly():
    est = budget.Estimate("openai/nobody-prices-this", {}, None)
    assert "unknown price" in est.summary()


# -- the cap ------------------------------------------------------------------------------

def _spent_before_each_stage(store, cfg: RunConfig) -> tuple[dict[str, int], int]:
    """A run without a cap, noting the tokens spent when each stage was admitted."""
    s = sim(store, cfg)
    s.start()
    seen: dict[str, int] = {}
    admit = s.budget.admit

    def note(stage):
        seen[stage.name] = s.budget.spent()[0]
        admit(stage)
    s.budget.admit = note
    run = s.run_sync()
    assert run.status == "done"
    return seen, run.usage.calls


def test_the_cap_stops_before_the_stage_that_would_cross_it_and_a_resume_finishes(
        community, demo):
    from rt_core.run.pipeline.plan import plan_for

    cfg = config(researcher_ids=["r-nia"], num_reviewers=1, max_profile_papers=1)
    # The same run at another temperature: the same replies, none of them cached for cfg.
    spent, all_calls = _spent_before_each_stage(community, dataclasses.replace(cfg, temperature=0.3))
    sizes = budget.sizes_for(cfg, community)
    need = {s.name: s.estimate(sizes).tokens for s in plan_for(cfg)}
    cap = spent["review"] + need["review"] - 1
    for name in ("read", "write", "read_reviewers"):  # the earlier stages fit
        assert spent[name] + need[name] <= cap
    demo.history.clear()
    stopped = sim(community, dataclasses.replace(cfg, max_tokens=cap)).run_sync()
    assert stopped.status == "failed"
    assert stopped.proposal is not None and stopped.proposal.q1 and not stopped.reviews
    err = stopped.errors[-1]
    assert err.kind == "BudgetExceeded" and "stage 'review'" in err.message
    assert "not finished: review, meta review" in err.message and "resume" in err.hint
    first = len(demo.history)
    assert first == stopped.usage.calls < all_calls

    resumed = sim(community, dataclasses.replace(cfg, max_tokens=10 ** 6), run_id=stopped.id,
                  resume=True).run_sync()
    assert resumed.status == "done" and len(resumed.reviews) == 1
    assert len(demo.history) == all_calls  # nothing asked twice: the rest came from the cache
    assert resumed.usage.calls == all_calls - first
    assert community.runs.load(stopped.id).config.max_tokens == 10 ** 6


def test_a_call_that_crosses_the_cap_stops_the_run_after_it(community, scripted):
    """The first profile comes back far longer than estimated: the second author's call is
    never made, the first profile is kept, and a resume makes only the missing calls."""
    long_profile = "I study stars and language " * 2000

    def responder(messages, params):
        text = messages[-1]["content"]
        if "Ada Astro" in text and "publication" in text.lower():
            return long_profile
        return demo_responder(messages, params)
    scripted.responder = responder
    cfg = config(researcher_ids=["r-ada", "r-nia"], num_reviewers=0, concurrency=1)
    est = budget.estimate(cfg, community)
    capped = dataclasses.replace(cfg, max_tokens=est.total.tokens)
    run = sim(community, capped).run_sync()
    assert run.status == "failed" and list(run.profiles) == ["r-ada"]
    assert len(scripted.history) == 1
    err = run.errors[-1]
    assert err.kind == "BudgetExceeded" and "used up" in err.message and "write" in err.message
    again = sim(community, dataclasses.replace(capped, max_tokens=10 ** 6), run_id=run.id,
                resume=True).run_sync()
    assert again.status == "done"
    ada_calls = [h for h in scripted.history if "Ada Astro" in h["messages"][-1]["content"]
                 and "publication" in h["messages"][-1]["content"].lower()]
    assert len(ada_calls) == 1  # the finished profile came from the cache


@pytest.mark.parametrize("cap, words", [({"max_tokens": 50}, "smaller than one model call"),
                                        ({"max_tokens": 0}, "more than zero")])
def test_a_budget_smaller_than_one_call_fails_before_any_call(community, demo, cap, words):
    with pytest.raises(InputError, match=words):
        sim(community, config(**cap)).start()
    assert demo.history == []


def test_a_dollar_cap_needs_a_price(community):
    cfg = config(model="openai/nobody-prices-this", base_url="http://127.0.0.1:9/v1", max_cost=1.0)
    with pytest.raises(InputError, match="needs the model's price"):
        budget.check_cap(cfg, plan_for(cfg), budget.sizes_for(cfg, community))


# -- the command line --------------------------------------------------------------------------

def test_cli_prints_the_estimate_and_refuses_a_tiny_budget(tmp_path, demo, capsys):
    db = str(tmp_path / "cli.sqlite3")
    base = ["--db", db, "run", "--model", "scripted/demo", "--researchers",
            "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854", "--reviewers", "1",
            "--out-json", str(tmp_path / "run.json")]
    assert main([*base, "--max-tokens", "20"]) != 0
    assert "smaller than one model call" in capsys.readouterr().err
    assert demo.history == []
    assert main([*base, "--max-tokens", "100000", "--max-cost", "2"]) == 0
    err = capsys.readouterr().err
    # 2 profiles, 2 drafts, the merge, 1 reviewer's profile, 1 review, the meta-review
    assert "Estimate: 8 (up to" in err and "Budget: at most 100,000 tokens and at most $2" in err
    assert len(demo.history) == 8


def test_cli_resume_takes_a_larger_cap(tmp_path, demo, capsys):
    import json

    db = str(tmp_path / "cli.sqlite3")
    out = tmp_path / "run.json"
    common = ["--db", db]
    code = main([*common, "run", "--model", "scripted/demo", "--researchers",
                 "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854", "--reviewers", "1",
                 "--max-tokens", "3000", "--out-json", str(out)])
    run = json.loads(out.read_text())
    assert code == 1 and run["status"] == "failed" and run["config"]["max_tokens"] == 3000
    assert "BudgetExceeded" in {e["kind"] for e in run["errors"]}
    assert f"resume {run['id']}" in capsys.readouterr().err
    made = len(demo.history)
    assert main([*common, "resume", run["id"], "--max-tokens", "1000000", "--out-json", str(out)]) == 0
    done = json.loads(out.read_text())
    assert done["status"] == "done" and done["config"]["max_tokens"] == 1000000
    assert done["usage"]["calls"] == len(demo.history) - made  # only the calls not made before


def test_a_refused_stage_lets_the_stages_going_finish_and_starts_nothing_more():
    import asyncio

    from rt_core.errors import BudgetExceeded
    from rt_core.run.pipeline.runner import Runner, Stage

    done: list[str] = []
    gate = asyncio.Event()

    async def slow(state):  # still going when 'c' is refused
        await gate.wait()
        done.append("b")

    async def quick(state):
        done.append("a")

    def admit(stage):
        if stage.name == "c":
            gate.set()
            raise BudgetExceeded("no money for c")

    plan = [Stage("a", quick), Stage("b", slow), Stage("c", quick, ("a",)), Stage("d", quick, ("c",))]
    runner = Runner(plan, None, admit=admit)
    with pytest.raises(BudgetExceeded):
        asyncio.run(runner.run())
    assert done == ["a", "b"] and sorted(runner.finished) == ["a", "b"]
    assert runner.skipped == ["c", "d"]
