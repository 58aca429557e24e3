"""What a run will cost before it starts, and the cap that stops it when money runs out.

Each stage of a plan (`Stage.estimate`, run/pipeline/runner.py and costs.py) says how many
model calls and tokens it makes for given settings (`Sizes`: authors, reviewers, prompt style, how much paper text
the prompts carry); `estimate(config)` adds them up and prices them with the model's
price, read once with the rest of its facts (models/facts.py).
The estimate counts fresh calls (a resumed run pays nothing for cached ones) and the
calls without re-asks; `max_calls` adds every re-ask the stages may make, so the real
count of a run lies between the two.

`Budget` enforces `RunConfig.max_tokens` / `max_cost` while the run goes: the runner asks
`admit(stage)` before starting a stage (its estimate against what is left) and the
client asks `check_call()` before every model call that the cache does not answer. Either
raises `BudgetExceeded`: the calls in flight finish, nothing new starts, everything
finished is kept, and a resume with a larger cap carries on from the cache. A cap smaller
than one call is refused before any call (`check_cap`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import BudgetExceeded, InputError
from ...models.facts import facts_for
from ...types import RunConfig, Usage
from .costs import Calls, Sizes, sizes_at, sizes_for
from .plan import plan_for
from .runner import Stage

__all__ = ["Budget", "BudgetExceeded", "Estimate", "check_cap", "estimate", "sizes_for"]


# -- the whole plan ---------------------------------------------------------------------------
@dataclass
class Estimate:
    model: str
    stages: dict[str, Calls] = field(default_factory=dict)
    cost: float | None = 0.0  # None: the model's price is unknown
    free: bool = False  # the model runs in this process and costs nothing

    @property
    def total(self) -> Calls:
        return sum(self.stages.values(), Calls())

    def summary(self) -> str:
        t = self.total
        if not t.max_calls:  # the facets path (run/facets/): the papers' own sentences, no model
            return f"Estimate: no model call, {cost_text(self.cost, self.model, self.free)}"
        calls = t.count_text()
        return (f"Estimate: {calls} model calls, about {t.tokens:,} tokens "
                f"({t.prompt_tokens:,} in, {t.completion_tokens:,} out), {cost_text(self.cost, self.model, self.free)}")


def combined(estimates: list[Estimate]) -> Estimate:
    """Several runs' estimates as one (a replay's modes); the cost is unknown if any is."""
    out = Estimate(estimates[0].model if estimates else "", free=all(e.free for e in estimates))
    for i, e in enumerate(estimates):
        out.stages.update({f"{i}:{k}": v for k, v in e.stages.items()})
        out.cost = None if out.cost is None or e.cost is None else out.cost + e.cost
    return out


def cap_text(config: RunConfig) -> str:
    """The run's cap in words ('' for none)."""
    parts = []
    if config.max_tokens is not None:
        parts.append(f"at most {config.max_tokens:,} tokens")
    if config.max_cost is not None:
        parts.append(f"at most ${config.max_cost:g}")
    return " and ".join(parts)


def cost_text(cost: float | None, model: str, free: bool) -> str:
    """A cost in words; `free`: the model runs in this process (`ModelFacts.in_process`)."""
    if cost is None:
        return f"unknown price (model '{model}' has no price in litellm's cost map)"
    if free:
        return "no cost (the model runs on this machine)"
    return f"about ${cost:.4f}"


def estimate(config: RunConfig, store=None) -> Estimate:
    """Calls, tokens and cost of a whole run with these settings (fresh, nothing cached)."""
    facts = facts_for(config)
    return plan_estimate(config.model, plan_for(config, facts), sizes_at(config, facts, store))


def plan_estimate(model: str, plan: list[Stage], sizes: Sizes) -> Estimate:
    """Calls, tokens and cost of a run's own plan at its sizes: what a run works out once
    when it starts (run/pipeline/simulation.py)."""
    est = Estimate(model, {st.name: st.estimate(sizes) for st in plan}, free=sizes.facts.in_process)
    t = est.total
    est.cost = sizes.facts.cost(t.prompt_tokens, t.completion_tokens)
    return est


def smallest_call(plan: list[Stage], s: Sizes) -> Calls:
    """The cheapest single call the plan would make at its sizes (what a cap must at least allow)."""
    ones = [Calls(1, 1, c.prompt_tokens // c.calls, c.completion_tokens // c.calls)
            for c in (st.estimate(s) for st in plan) if c.calls]
    return min(ones, key=lambda c: c.tokens, default=Calls())


def check_cap(config: RunConfig, plan: list[Stage], sizes: Sizes) -> None:
    """A cap that cannot be enforced, or that is smaller than one call of the run's plan at
    these sizes, is refused before any call, with one message."""
    if config.max_tokens is None and config.max_cost is None:
        return
    if (config.max_tokens is not None and config.max_tokens <= 0) or \
            (config.max_cost is not None and config.max_cost <= 0):
        raise InputError("a budget must be more than zero", "Give a positive --max-tokens or --max-cost.")
    one = smallest_call(plan, sizes)
    if not one.calls:
        return
    if config.max_cost is not None:
        price = sizes.facts.cost(one.prompt_tokens, one.completion_tokens)
        if price is None:
            raise InputError(f"a budget in dollars needs the model's price, and model "
                             f"'{config.model}' has none in litellm's cost map",
                             "Cap the run in tokens instead (--max-tokens), or register a price.")
        if config.max_cost < price:
            raise InputError(f"a budget of ${config.max_cost:g} is smaller than one model call "
                             f"(about ${price:.6f} for {one.tokens:,} tokens)",
                             "Raise the budget, or leave it empty for no cap.")
    if config.max_tokens is not None and config.max_tokens < one.tokens:
        raise InputError(f"a budget of {config.max_tokens:,} tokens is smaller than one model call "
                         f"(about {one.tokens:,} tokens)",
                         "Raise the budget, or leave it empty for no cap.")


class Budget:
    """The cap while the run goes: the run's usage (plus what earlier attempts of the same
    run spent, `prior`) against RunConfig.max_tokens / max_cost."""

    def __init__(self, config: RunConfig, usage: Usage, sizes: Sizes, prior: Usage | None = None):
        self.config = config
        self.usage = usage
        self.prior = prior or Usage()
        self.sizes = sizes  # the run's (costs.sizes_for): what admit prices a stage at

    @property
    def capped(self) -> bool:
        return self.config.max_tokens is not None or self.config.max_cost is not None

    def spent(self) -> tuple[int, float]:
        u, p = self.usage, self.prior
        return (u.prompt_tokens + u.completion_tokens + p.prompt_tokens + p.completion_tokens,
                u.cost + p.cost)

    def _cap_text(self) -> str:
        tokens, cost = self.spent()
        parts = []
        if self.config.max_tokens is not None:
            parts.append(f"{tokens:,} of {self.config.max_tokens:,} tokens spent")
        if self.config.max_cost is not None:
            parts.append(f"${cost:.4f} of ${self.config.max_cost:g} spent")
        return "; ".join(parts)

    def check_call(self) -> None:
        """Before a fresh model call: stop once the cap has been reached."""
        tokens, cost = self.spent()
        c = self.config
        if (c.max_tokens is not None and tokens >= c.max_tokens) or \
                (c.max_cost is not None and cost >= c.max_cost):
            raise BudgetExceeded(f"the run's budget is used up ({self._cap_text()})")

    def admit(self, stage: Stage) -> None:
        """Before a stage: its estimate must fit in what is left."""
        if not self.capped:
            return
        need = stage.estimate(self.sizes)
        if not need.calls:
            return
        tokens, cost = self.spent()
        c = self.config
        if c.max_tokens is not None and tokens + need.tokens > c.max_tokens:
            raise BudgetExceeded(f"stage '{stage.name}' needs about {need.tokens:,} tokens, more "
                                 f"than the budget has left ({self._cap_text()})")
        if c.max_cost is not None:
            price = self.sizes.facts.cost(need.prompt_tokens, need.completion_tokens) or 0.0
            if cost + price > c.max_cost:
                raise BudgetExceeded(f"stage '{stage.name}' needs about ${price:.4f}, more than the "
                                     f"budget has left ({self._cap_text()})")
