"""The registry's answers for one run's settings (rt_core/models/facts.py), asked once at
the run's start and read by validation, the sizes, the cap, the estimate and the warm-up."""
from __future__ import annotations

import pytest

from rt_core.config import LOCAL_MODEL
from rt_core.models import registry
from rt_core.models.facts import facts_for
from rt_core.run.pipeline import budget
from rt_core.run.pipeline.plan import plan_for
from rt_core.types import RunConfig

PRICED = "openai/gpt-4o-mini"  # in litellm's bundled cost map


@pytest.mark.parametrize("prompt, completion", [(1200, 0), (0, 300), (5321, 777)])
def test_the_price_read_once_costs_what_the_cost_map_says(prompt, completion):
    facts = facts_for(RunConfig(model=PRICED))
    assert facts.price is not None
    assert facts.cost(prompt, completion) == pytest.approx(
        registry.estimate_cost(PRICED, prompt, completion), rel=1e-9)


def test_an_unpriced_model_has_no_price_and_the_embedded_one_costs_nothing():
    assert facts_for(RunConfig(model="openai/nobody-prices-this")).cost(100, 10) is None
    local = facts_for(RunConfig(model=LOCAL_MODEL))
    assert local.cost(10_000, 1_000) == 0.0
    assert local.in_process and local.serial and not local.remote and local.local_embedder


def test_the_judge_is_the_named_one_else_the_runs_own():
    assert facts_for(RunConfig(model="scripted/demo")).judge_follows
    assert not facts_for(RunConfig(model="scripted/demo", judge_model=LOCAL_MODEL)).judge_follows
    assert not facts_for(RunConfig(model=LOCAL_MODEL)).judge_follows
    assert facts_for(RunConfig(model=LOCAL_MODEL, judge_model="scripted/demo")).judge_follows


def test_a_remote_judge_makes_an_embedded_run_remote():
    assert facts_for(RunConfig(model=LOCAL_MODEL, judge_model="openai/judge")).remote


def test_the_estimate_prices_the_plan_with_the_facts_price():
    cfg = RunConfig(model=PRICED, researcher_ids=["r-a", "r-b"], paper_ids=["p-1"], num_reviewers=2)
    sizes = budget.sizes_for(cfg)
    est = budget.plan_estimate(cfg.model, plan_for(cfg), sizes)
    t = est.total
    assert t.prompt_tokens and t.completion_tokens
    assert est.cost == pytest.approx(registry.estimate_cost(PRICED, t.prompt_tokens, t.completion_tokens))


def test_only_a_model_that_declares_it_is_called_just_to_be_timed(scripted):
    """The calibration is declared on the model (registry.Capabilities.calibrates), not
    guessed from its provider's name: the scripted model runs in this process too but has
    no speed worth measuring, and a provider costs money."""
    from rt_core.models import calibration

    assert calibration.calibratable(LOCAL_MODEL)
    assert registry.in_process("scripted/demo") and not calibration.calibratable("scripted/demo")
    assert not calibration.calibratable("openai/gpt-4o-mini")


def test_only_a_model_that_declares_it_is_asked_to_stop_at_a_sentence_end(scripted):
    """The sentence-end stop is a parameter of the embedded model's own decoder
    (registry.Capabilities.sentence_stop): a provider would be sent a parameter it does not
    know, and the scripted model writes what it was given."""
    assert registry.sentence_stop(LOCAL_MODEL, 8) == {registry.SENTENCE_STOP: 8}
    assert registry.sentence_stop(LOCAL_MODEL, 0) == {}
    assert registry.sentence_stop("scripted/base", 8) == {} == registry.sentence_stop("ollama/llama3", 8)


# -- the registry is asked once per run --------------------------------------------------------
# Every question the registry answers about a model by its name (models/registry.py).
BY_NAME = ("capabilities", "prompt_style", "style_traits", "follows_instructions", "in_process", "serial",
           "calls_at_once", "routed", "key_env", "sentence_stop", "sampling", "queue_for", "context_tokens",
           "estimate_cost", "model_name", "provider_of")


@pytest.fixture
def lookups(monkeypatch):
    """The registry's look-ups about the run's model, from when a run is made to its end:
    every question asked within one `facts_for` counts once, any other question once each
    (a question the registry asks itself is part of the one asked of it)."""
    import sys

    from rt_core.models import facts
    from rt_core.run.pipeline.simulation import Simulation

    seen: list = []  # ("facts", the facts_for frame: held, so never mistaken for another) or a caller
    model = {"name": None}

    def counted(name, question):
        def ask(*args, **kw):
            caller = sys._getframe(1)
            if model["name"] is not None and args and str(args[0]).strip() == model["name"] \
                    and caller.f_globals.get("__name__") != registry.__name__:
                frame = caller
                while frame is not None and frame.f_code is not facts.facts_for.__code__:
                    frame = frame.f_back
                if frame is None:
                    seen.append(f"{name} from {caller.f_globals.get('__name__')}:{caller.f_lineno}")
                elif not any(s[1] is frame for s in seen if isinstance(s, tuple)):
                    seen.append(("facts", frame))
            return question(*args, **kw)
        return ask

    for name in BY_NAME:
        monkeypatch.setattr(registry, name, counted(name, getattr(registry, name)))
    made = Simulation.__init__

    def watched(self, request, *args, **kw):
        model["name"] = request.config.model.strip()  # counted from here: the run is made
        made(self, request, *args, **kw)

    monkeypatch.setattr(Simulation, "__init__", watched)
    return seen


def test_a_run_from_the_command_line_asks_the_registry_once(tmp_path, community, demo, lookups, capsys):
    """From the run's making to its end (the outline, the wall time, the warm-up, the client's
    every call, the stages): the registry is asked about the run's model once, in facts_for."""
    from rt_core.__main__ import main

    rc = main(["--db", str(community.path), "run", "--model", "scripted/demo", "--researchers", "r-ada,r-nia",
               "--papers", "p-gaia", "--reviewers", "1"])
    assert rc == 0, capsys.readouterr().err
    assert [s if isinstance(s, str) else s[0] for s in lookups] == ["facts"]


def test_a_run_from_the_app_asks_the_registry_once(community, scripted, lookups):
    """The app's door, with three distinct candidates, so the judge's client is made too."""
    from rt_core.run.pipeline import jobs
    from rt_core.types import RunRequest
    from tests import ideas

    scripted.responder = ideas.responder()

    config = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                       num_reviewers=1, candidates=3)
    job = jobs.start(RunRequest(config), community)
    assert job.wait(300) and job.simulation.run.status == "done"
    assert job.simulation.run.tournament.judgements  # the judge's client was made, and called
    assert [s if isinstance(s, str) else s[0] for s in lookups] == ["facts"]
