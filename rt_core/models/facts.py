"""What a run's set-up needs to know of its models, asked of the registry once.

Before a run starts, several steps ask about its models: validation (can the judge
judge?), the sizes every estimate is priced at (which prompt style?), the cap and the
estimate (what does a token cost?), the warm-up (what runs in this process?) and the wall
time (how many calls go at once?). Each used to ask the registry itself, so one run's
set-up asked the same questions five times over, from five modules, and a reader had to
open all five to see what a model's declaration decides. `facts_for(config)` asks them
once, when the run starts, and the steps read the answers from one frozen record.

What the run's calls need is here too: the model client reads its calls at once, its
context window and its sampling defaults from the record it is handed (models/client.py),
the wall time reads whether the model may be timed (models/calibration.py), the warm-up
gets the model's own preload, and the key check each named model's declaration (keys.py).
So a run's start asks the registry once, in `facts_for`, and nothing below it asks again
by the model's name (tests/test_facts.py counts it from both doors).

The registry stays the only place that knows what a model is; this is its answer for one
run's settings, not a second declaration.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from . import registry


@dataclass(frozen=True)
class Price:
    """Dollars per prompt token and per completion token (litellm's cost map, read once);
    an in-process model costs nothing."""
    per_prompt: float
    per_completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.per_prompt + completion_tokens * self.per_completion


@dataclass(frozen=True)
class ModelFacts:
    """The registry's answers for one run's settings."""
    model: str
    style: str  # the prompt style the run's model is written for (registry.prompt_style)
    judge_follows: bool  # the judge (named, else the run's model) follows instructions
    serial: bool  # one engine, taking turns in a queue
    at_once: int  # calls the run may have in flight (registry.calls_at_once)
    in_process: bool  # the run's model is served by this process
    price: Price | None  # None: litellm's cost map has no price for the model
    remote: bool  # one of the run's models (its own, the judge, the evaluator) is reached over the network
    local_embedder: bool  # the embedder runs in this process
    # The run's model's own loader of its weights into this process (Capabilities.preload),
    # None when it loads none: the warm-up calls it (run/pipeline/warmup.py).
    preload: Callable[[str], None] | None = None
    context: int = registry.DEFAULT_CONTEXT_TOKENS  # the model's input window in tokens
    sampling: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    calibrates: bool = False  # may be called only to be timed (models/calibration.py)
    # What the registry declares of each model the run names (its own, the judge, the
    # evaluator, the embedder), by name as written: what the key check reads (keys.py).
    declared: Mapping[str, registry.Capabilities] = field(default_factory=lambda: MappingProxyType({}))
    # The settings these answers are for (`under`): the model fields, the prompt style and
    # the concurrency of the RunConfig they were asked for.
    settings: tuple = ()

    @property
    def preloads(self) -> bool:
        """Whether the run's model loads weights into this process."""
        return self.preload is not None

    @property
    def traits(self) -> registry.StyleTraits:
        """What the run's prompt style can do (asked of the style, not of the model)."""
        return registry.traits(self.style)

    def under(self, config) -> ModelFacts:
        """These facts for another RunConfig: themselves when it names the same models with
        the same style and concurrency (an earlier run of the same settings, which the wall
        time's bias re-estimates), else the registry's answers for it."""
        return self if _settings(config) == self.settings else facts_for(config)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Dollars for this many tokens of the run's model (None: price unknown)."""
        return None if self.price is None else self.price.cost(prompt_tokens, completion_tokens)


def price_of(model: str) -> Price | None:
    """The model's price per token, from two questions to the cost map (a price is linear
    in the tokens at the sizes a run prices)."""
    per_prompt = registry.estimate_cost(model, 1, 0)
    per_completion = registry.estimate_cost(model, 0, 1)
    if per_prompt is None or per_completion is None:
        return None
    return Price(per_prompt, per_completion)


def _settings(config) -> tuple:
    """What of a RunConfig the facts depend on."""
    return (config.model.strip(), config.judge_model.strip(), config.evaluator_model.strip(),
            config.embedder.strip(), config.prompt_style, config.concurrency)


def facts_for(config) -> ModelFacts:
    """The answers for a RunConfig (anything with its model fields): the one place a run's
    start asks the registry."""
    model = config.model.strip()
    judge = config.judge_model.strip() or model
    models = [m for m in (config.model, config.judge_model, config.evaluator_model) if m]
    named = {m.strip(): registry.capabilities(m) for m in (*models, config.embedder) if m.strip()}
    caps = registry.capabilities(model)
    return ModelFacts(
        model=model, style=registry.prompt_style(model, config.prompt_style),
        judge_follows=registry.follows_instructions(judge), serial=caps.serial,
        at_once=registry.calls_at_once(model, config.concurrency),
        in_process=caps.in_process, price=price_of(model),
        remote=any(not registry.in_process(m) for m in models),
        local_embedder=registry.in_process(config.embedder),
        preload=caps.preload, context=registry.context_tokens(model),
        sampling=MappingProxyType(registry.sampling(model)), calibrates=caps.calibrates,
        declared=MappingProxyType(named), settings=_settings(config))


@dataclass(frozen=True)
class _Alone:
    """The model fields of a call made outside any run (`facts_alone`)."""
    model: str
    concurrency: int
    prompt_style: str
    judge_model: str = ""
    evaluator_model: str = ""
    embedder: str = ""


def facts_alone(model: str, concurrency: int = 4, prompt_style: str = "auto") -> ModelFacts:
    """The answers for one model called outside a run (a judge's, a study's client): what a
    client asks when no run handed it its facts."""
    return facts_for(_Alone(model, concurrency, prompt_style))
