"""What a run's set-up needs to know of its models, asked of the registry once.

Before a run starts, several steps ask about its models: validation (can the judge
judge?), the sizes every estimate is priced at (which prompt style?), the cap and the
estimate (what does a token cost?), the warm-up (what runs in this process?) and the wall
time (how many calls go at once?). Each used to ask the registry itself, so one run's
set-up asked the same questions five times over, from five modules, and a reader had to
open all five to see what a model's declaration decides. `facts_for(config)` asks them
once, when the run starts, and the steps read the answers from one frozen record.

The registry stays the only place that knows what a model is; this is its answer for one
run's settings, not a second declaration.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    preloads: bool = False  # the run's model loads weights into this process (Capabilities.preload)

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


def facts_for(config) -> ModelFacts:
    """The answers for a RunConfig (anything with its model fields)."""
    model = config.model.strip()
    judge = config.judge_model.strip() or model
    models = [m for m in (config.model, config.judge_model, config.evaluator_model) if m]
    return ModelFacts(
        model=model, style=registry.prompt_style(model, config.prompt_style),
        judge_follows=registry.follows_instructions(judge), serial=registry.serial(model),
        at_once=registry.calls_at_once(model, config.concurrency),
        in_process=registry.in_process(model), price=price_of(model),
        remote=any(not registry.in_process(m) for m in models),
        local_embedder=registry.in_process(config.embedder),
        preloads=registry.capabilities(model).preload is not None)
