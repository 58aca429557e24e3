"""A run is a plan of stages: what the plan holds, how the runner executes any plan, and
the stage protocol both prompt styles implement."""
from __future__ import annotations

import asyncio
import inspect
import json

import pytest

from rt_core.errors import ProviderError
from rt_core.models.scripted import demo_responder
from rt_core.run.pipeline.plan import plan_for, progress_groups
from rt_core.run.pipeline.runner import Runner, Stage, check
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import chat, stem
from rt_core.run.styles.style import STAGE_FUNCTIONS, PromptStyle
from rt_core.types import RunConfig, RunRequest


def request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", **cfg}), max_retries=0)


def names(config: RunConfig) -> list[str]:
    return [s.name for s in plan_for(config)]


# -- the plan ---------------------------------------------------------------------------
def test_the_plan_follows_the_settings():
    full = RunConfig(model="scripted/demo", researcher_ids=["r"], paper_ids=["p"], num_reviewers=2,
                     reference_paper_id="x")
    assert names(full) == names(RunRequest(full)) == [
        "candidates", "read", "write", "aggregate", "choose", "read_reviewers", "review", "meta_review",
        "evaluate", "provenance", "review_provenance"]
    needs = {s.name: s.needs for s in plan_for(full)}
    # The candidates need nothing, so they overlap the reading and writing; only the
    # choice waits for both them and the proposal.
    assert needs["candidates"] == () and needs["read"] == ()
    assert needs["choose"] == ("aggregate", "candidates")
    named = RunConfig(model="scripted/demo", researcher_ids=["r"], reviewer_ids=["q"])
    assert "candidates" not in names(named) and "read_reviewers" in names(named)
    no_people = RunConfig(model="scripted/demo", paper_ids=["p"], mode="data", num_reviewers=1)
    assert names(no_people) == ["write", "aggregate", "choose", "review", "meta_review", "provenance",
                                "review_provenance"]
    assert names(RunConfig(model="scripted/demo", mode="self", num_reviewers=0)) == [
        "write", "aggregate", "provenance"]


def test_the_embedded_model_queues_first_and_everything_waits_for_it():
    plan = plan_for(RunConfig(researcher_ids=["r"], num_reviewers=1))  # the default: embedded
    assert plan[0].name == "queue"
    roots = [s.name for s in plan if not s.needs]
    assert roots == ["queue", "candidates"]  # the candidates are embedded while it waits


def test_progress_bars_come_from_the_plan():
    cfg = RunConfig(model="scripted/demo", researcher_ids=["r"], num_reviewers=0, reference_paper_id="x")
    assert [g for g, _ in progress_groups(cfg)] == ["read", "write", "evaluate"]
    cfg = RunConfig(model="scripted/demo", mode="data", paper_ids=["p"], num_reviewers=3)
    groups = progress_groups(cfg)
    assert [g for g, _ in groups] == ["write", "review"] and all(title for _, title in groups)


@pytest.mark.parametrize("plan,problem", [
    ([Stage("a", None), Stage("a", None)], "twice"),
    ([Stage("a", None, ("b",)), Stage("b", None)], "needs b"),
])
def test_a_plan_that_could_not_run_is_refused(plan, problem):
    with pytest.raises(ValueError, match=problem):
        check(plan)


# -- the runner -------------------------------------------------------------------------
def test_a_stage_added_to_the_plan_runs_and_is_saved(community, demo):
    """A new stage is an entry in the plan: the runner runs it after what it needs and
    saves the run when it ends."""
    sim = Simulation(request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1),
                     community)
    seen = {}

    async def count_drafts(s: Simulation) -> None:
        seen["drafts"] = len(s.run.proposal.drafts)
        seen["reviews"] = len(s.run.reviews)
        s.run.notes.append("counted the drafts")

    sim.plan.append(Stage("count", count_drafts, ("aggregate",), "write"))
    run = sim.run_sync()
    assert run.status == "done", run.errors
    assert seen["drafts"] == 2
    assert sim.started.index("aggregate") < sim.started.index("count")
    assert "counted the drafts" in community.runs.load(run.id).notes


def test_stages_that_need_nothing_from_each_other_overlap():
    """Each of two stages waits for the other to have started: run one after the other,
    neither could finish (the wait_for only turns such a hang into a failure)."""
    class State:
        a, b = asyncio.Event(), asyncio.Event()

    async def first(s):
        s.a.set()
        await asyncio.wait_for(s.b.wait(), 30)

    async def second(s):
        s.b.set()
        await asyncio.wait_for(s.a.wait(), 30)

    order = []
    runner = Runner([Stage("one", first), Stage("two", second), Stage("after", _noop, ("one", "two"))],
                    State(), on_start=lambda s: order.append(s.name))
    asyncio.run(runner.run())
    assert order == ["one", "two", "after"]


async def _noop(_state) -> None:
    return None


def test_a_failing_stage_stops_the_plan_and_cancels_what_overlaps_it():
    cancelled = []

    async def slow(_s):
        try:
            await asyncio.Event().wait()  # never set: only a cancel ends it
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise

    async def boom(_s):
        raise ProviderError("down")

    runner = Runner([Stage("slow", slow), Stage("boom", boom), Stage("never", _noop, ("boom",))], None)
    with pytest.raises(ProviderError):
        asyncio.run(runner.run())
    assert runner.failed.name == "boom" and cancelled == ["slow"]


def failing_for(marker):
    def responder(messages, params):
        if marker in "\n".join(m["content"] for m in messages):
            raise ProviderError("the provider fell over", "Try again.")
        return demo_responder(messages, params)
    return responder


def test_resuming_after_a_failed_stage_repeats_no_call_that_succeeded(community, demo):
    demo.responder = failing_for("Strengths")  # every review prompt: the review stage fails
    req = request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1)
    first = Simulation(req, community)
    first.plan = [s if s.name != "review" else Stage("review", _review_or_fail, s.needs, s.group)
                  for s in first.plan]
    failed = first.run_sync()
    assert failed.status == "failed" and failed.errors[-1].stage == "review"
    succeeded = [json.dumps(h["messages"]) for h in demo.history
                 if "Strengths" not in json.dumps(h["messages"])]
    assert succeeded
    demo.responder = demo_responder
    before = len(demo.history)
    resumed = Simulation(req, community, run_id=failed.id, resume=True).run_sync()
    assert resumed.status == "done" and resumed.id == failed.id
    again = [json.dumps(h["messages"]) for h in demo.history[before:]]
    assert not set(again) & set(succeeded)  # every finished call came from the cache
    assert again  # and the review that had failed was asked for


async def _review_or_fail(sim):
    """The review stage, failing the run when an agent failed (a failed *stage*)."""
    from rt_core.run.pipeline import steps

    reviews = await steps.review(sim)
    if any(e.stage == "review" for e in sim.run.errors):
        raise ProviderError("the reviews failed")
    return reviews


# -- the stage protocol -------------------------------------------------------------------
@pytest.mark.parametrize("module", [chat, stem])
def test_both_prompt_styles_implement_the_stage_protocol(module):
    assert isinstance(module, PromptStyle)
    for name in STAGE_FUNCTIONS:
        want = list(inspect.signature(getattr(PromptStyle, name)).parameters)[1:]  # without self
        got = getattr(module, name)
        assert inspect.iscoroutinefunction(got), name
        assert list(inspect.signature(got).parameters) == want, name


def test_the_model_client_is_imported_before_the_first_run_needs_it():
    import sys

    from rt_core.models import embed, registry
    from rt_core.run.pipeline.warmup import warm_up

    warming = warm_up()
    assert warm_up().threads == warming.threads  # once per process
    warming.join()
    assert registry._litellm is not None and "openai.resources" in sys.modules
    assert "minilm" in embed._local_models


def test_a_run_warms_only_what_its_models_load():
    """The embedded model never goes through the OpenAI SDK: a one-shot process running it
    must not spend a second of CPU importing the SDK's resources beside llama.cpp."""
    from rt_core.config import LOCAL_MODEL
    from rt_core.models.facts import facts_for
    from rt_core.run.pipeline.warmup import CLIENT, EMBEDDER, SDK, parts_for, weights

    # It writes from the papers' facets with no call: only MiniLM is waited for (a run whose
    # papers share no facet loads the model at its first call).
    assert parts_for(facts_for(RunConfig(model=LOCAL_MODEL))) == (EMBEDDER,)
    assert parts_for(facts_for(RunConfig(model="openai/x"))) == (CLIENT, SDK, EMBEDDER)
    assert parts_for(facts_for(RunConfig(model=LOCAL_MODEL, judge_model="openai/judge"))) == (
        CLIENT, SDK, EMBEDDER, weights(LOCAL_MODEL))
    assert parts_for(facts_for(RunConfig(model="openai/x", embedder="openai/text-embedding-3-small"))) == (CLIENT, SDK)


def test_a_model_that_declares_a_preload_is_loaded_by_the_warm_up_once():
    """The embedded model's weights load beside litellm's import, not on the first call
    after it; a model that declares a preload gets it, once per process."""
    from rt_core.models import local, registry
    from rt_core.models.facts import facts_for
    from rt_core.run.pipeline.warmup import parts_for, warm_up, weights

    loaded = []
    registry.declare("scripted/weighty", registry.Capabilities(in_process=True, preload=loaded.append))
    try:
        facts = facts_for(RunConfig(model="scripted/weighty"))
        parts = parts_for(facts)
        assert weights("scripted/weighty") in parts
        warm_up(parts, facts.preload).join()
        warm_up(parts, facts.preload).join()
        assert loaded == ["scripted/weighty"]
    finally:
        registry.forget("scripted/weighty")
    assert local.CAPABILITIES.preload is not None  # the embedded model declares one
    assert registry.capabilities("openai/x").preload is None


def test_the_first_stage_starts_after_the_warm_up(community, demo, monkeypatch):
    """The imports a run's calls need are in before its first stage: they no longer run
    beside the first rounds of a one-shot process (bench_orchestration.py --one-shot)."""
    from rt_core.run.pipeline import simulation as sim_module
    from rt_core.run.pipeline.warmup import Warming

    order = []

    class Recording(Warming):
        def join(self, timeout=None):
            order.append("warmed")

    monkeypatch.setattr(sim_module, "warm_up", lambda parts, preload=None: Recording([]))
    sim = sim_module.Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=0),
                                community)
    sim.on_progress = lambda e: order.append("stage") if e.status == "started" else None
    assert sim.run_sync().status == "done"
    assert order[0] == "warmed" and "stage" in order


def test_the_ranking_loads_after_the_first_stage_is_under_way_and_only_for_candidates(community, demo,
                                                                                       monkeypatch):
    """The tournament's fit imports scipy.stats (1.5 s): imported at the first standing it held
    the event loop (issue 50), warmed with the first stage's imports it would delay the first
    stage. So it is asked for after the warm-up's wait, for a run with several candidates."""
    from rt_core.run.pipeline import simulation as sim_module
    from rt_core.run.pipeline.warmup import RANKING, Warming

    asked = []

    class Recording(Warming):
        def join(self, timeout=None):
            asked.append("joined")

    def recording(parts, preload=None):
        asked.append(tuple(parts))
        return Recording([])

    monkeypatch.setattr(sim_module, "warm_up", recording)
    for candidates in (1, 2):
        asked.clear()
        sim = sim_module.Simulation(request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                                            num_reviewers=0, candidates=candidates), community)
        assert sim.run_sync().status == "done"
        first, joined = asked.index(next(p for p in asked if isinstance(p, tuple))), asked.index("joined")
        assert all(RANKING not in p for p in asked[:joined] if isinstance(p, tuple)) and first < joined
        assert [p for p in asked[joined:] if isinstance(p, tuple)] == ([(RANKING,)] if candidates > 1 else [()])


# -- typed outputs ------------------------------------------------------------------------
def test_the_runner_folds_each_stage_output_into_the_state_before_the_save():
    events = []

    async def first(state):
        return "first's output"

    async def second(state):
        return None

    plan = [Stage("first", first), Stage("second", second, ("first",))]
    runner = Runner(plan, object(), on_end=lambda s, seconds: events.append(("saved", s.name)),
                    fold=lambda out: events.append(("folded", out)))
    asyncio.run(runner.run())
    assert events == [("folded", "first's output"), ("saved", "first"), ("folded", None), ("saved", "second")]


def test_the_read_write_review_path_hands_on_typed_outputs(community, demo, monkeypatch):
    """Each stage of the main path returns its part as a typed record that the runner
    folds into the state; none writes another stage's part behind the runner's back."""
    from rt_core.run.pipeline import state as state_module

    folded = []
    fold = state_module.RunState.fold
    monkeypatch.setattr(state_module.RunState, "fold",
                        lambda self, out: (folded.append(type(out).__name__), fold(self, out))[1])
    run = Simulation(request(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1),
                     community).run_sync()
    assert run.status == "done", run.errors
    assert {"Profiles", "CandidateVectors", "Drafts", "Proposed", "Reviewers", "Reviews",
            "MetaReviewed"} <= set(folded), folded
    assert run.proposal.drafts and run.reviews and run.meta_review is not None


def test_the_sources_are_found_after_the_reviewers_are_chosen_not_beside_them():
    """Both wait for the proposal; the choice is on the path to the reviewers' calls, and the
    sources' embedding beside it took its CPU (issue 50), so they come after it."""
    plan = {s.name: s for s in plan_for(RunConfig(model="openai/x", researcher_ids=["r-a", "r-b"],
                                                  num_reviewers=2))}
    assert "aggregate" in plan["choose"].needs
    assert plan["provenance"].needs == ("aggregate", "choose")
