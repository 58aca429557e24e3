"""What a run will cost before it starts, and the cap that stops it when money runs out.

Each stage of a plan (`run.plan.Stage.estimate`) says how many model calls and tokens it
makes for given settings (`Sizes`: authors, reviewers, prompt style, how much paper text
the prompts carry); `estimate(config)` adds them up and prices them with the registry.
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
from typing import TYPE_CHECKING

from ..errors import CancelledRun, InputError
from ..models import registry
from ..types import MODES, RunConfig, Usage
from . import stem

if TYPE_CHECKING:
    from .plan import Stage

CHARS_PER_TOKEN = 4  # English prose in common tokenizers; the estimate's main assumption
PAPER_CHARS = 1200  # title and abstract of a paper whose text is not at hand
QUESTIONS = 5
MAX_REASKS = 2  # StageContext.max_reasks

# Typical tokens of one reply, per kind of call (instruction models write to these sizes;
# the embedded model's lines stop at their stems' budgets).
CHAT_REPLY = {"profile": 300, "draft": 600, "aggregate": 600, "review": 350, "meta": 350}
CHAT_PROMPT = {"profile": 250, "draft": 450, "aggregate": 250, "review": 350, "meta": 300}
STEM_HEADER = 500  # the material a stem document starts with
STEM_LINE = 30  # one completed line
STEM_SCORE = 2


class BudgetExceeded(CancelledRun):
    """The run's cap in tokens or dollars is (or would be) crossed: the run stops cleanly.
    A kind of cancellation, so every stage lets it through and the calls in flight end."""

    hint = "Everything finished is kept; resume the run with a larger cap to finish it."


@dataclass(frozen=True)
class Sizes:
    """What an estimate depends on, from the settings (and the store, when at hand)."""
    style: str
    authors: int
    reviewers: int
    new_reviewer_profiles: int
    paper_chars: int
    profile_chars: int


@dataclass(frozen=True)
class Calls:
    """One stage's estimate: calls without re-asks, calls with every re-ask, tokens."""
    calls: int = 0
    max_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Calls) -> Calls:
        return Calls(self.calls + other.calls, self.max_calls + other.max_calls,
                     self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens)


def _calls(n: int, reasks: int, prompt: int, reply: int) -> Calls:
    return Calls(n, n + reasks, n * prompt, n * reply)


def _chat(kind: str, n: int, material_tokens: int, reasks_each: int) -> Calls:
    return _calls(n, n * reasks_each, CHAT_PROMPT[kind] + material_tokens, CHAT_REPLY[kind])


# -- per stage: how many calls and tokens, from the sizes ---------------------------------
def read_authors(s: Sizes) -> Calls:
    if s.style == registry.STEM:
        return Calls()  # profiles are the record: no model call (run.stem.read_profile)
    return _chat("profile", s.authors, min(8000, s.profile_chars) // CHARS_PER_TOKEN, MAX_REASKS)


def read_reviewers(s: Sizes) -> Calls:
    if s.style == registry.STEM:
        return Calls()
    return _chat("profile", s.new_reviewer_profiles, min(8000, s.profile_chars) // CHARS_PER_TOKEN,
                 MAX_REASKS)


def _draft_material(s: Sizes) -> int:
    return (min(12000, s.paper_chars) + 1200) // CHARS_PER_TOKEN  # papers and the persona


def write_drafts(s: Sizes) -> Calls:
    if s.style == registry.STEM:
        per = QUESTIONS * stem.DRAFT_CANDIDATES["default"]
        prompt = STEM_HEADER + min(12000, s.paper_chars) // (3 * CHARS_PER_TOKEN) + 2 * STEM_LINE * 2
        n = s.authors * per
        return Calls(n, n * (MAX_REASKS + 1) + s.authors * QUESTIONS, n * prompt, n * STEM_LINE)
    return _chat("draft", s.authors, _draft_material(s), QUESTIONS * MAX_REASKS)


def aggregate(s: Sizes) -> Calls:
    if s.authors < 2:
        return Calls()  # a single draft is the proposal
    if s.style == registry.STEM:
        cand = stem.MERGE_CANDIDATES
        n = sum(cand.get(f"q{i}", cand["default"]) for i in range(1, QUESTIONS + 1))
        prompt = STEM_HEADER + 4 * STEM_LINE * 3
        # the drafts' own answers compete, so a merged question is never re-asked empty
        return Calls(n, n, n * prompt, n * STEM_LINE)
    return _chat("aggregate", 1, s.authors * CHAT_REPLY["draft"], QUESTIONS * MAX_REASKS)


def review(s: Sizes) -> Calls:
    if s.style == registry.STEM:
        lines = 2 * stem.REVIEW_CANDIDATES  # strengths and weaknesses
        prompt = STEM_HEADER + QUESTIONS * STEM_LINE
        one = Calls(lines + 1, (lines + 1) * (MAX_REASKS + 1), (lines + 1) * prompt,
                    lines * STEM_LINE + STEM_SCORE)
        return Calls(one.calls * s.reviewers, one.max_calls * s.reviewers,
                     one.prompt_tokens * s.reviewers, one.completion_tokens * s.reviewers)
    material = (CHAT_REPLY["draft"] * 4 // 3 + min(6000, s.paper_chars) // CHARS_PER_TOKEN
                + 1200 // CHARS_PER_TOKEN)
    return _chat("review", s.reviewers, material, 3 * MAX_REASKS)


def meta_review(s: Sizes) -> Calls:
    if s.style == registry.STEM or not s.reviewers:
        return Calls()  # the stem meta-review clusters the reviews: no model call
    return _chat("meta", 1, CHAT_REPLY["draft"] + s.reviewers * CHAT_REPLY["review"], 0)


def nothing(s: Sizes) -> Calls:
    """Stages that make no call on the run's model (queue, embedding, choice, evaluation)."""
    return Calls()


# -- the whole plan ---------------------------------------------------------------------------
@dataclass
class Estimate:
    model: str
    stages: dict[str, Calls] = field(default_factory=dict)
    cost: float | None = 0.0  # None: the model's price is unknown

    @property
    def total(self) -> Calls:
        out = Calls()
        for c in self.stages.values():
            out = out + c
        return out

    def summary(self) -> str:
        t = self.total
        calls = f"{t.calls}" if t.calls == t.max_calls else f"{t.calls} (up to {t.max_calls} with re-asks)"
        return (f"Estimate: {calls} model calls, about {t.tokens:,} tokens "
                f"({t.prompt_tokens:,} in, {t.completion_tokens:,} out), {cost_text(self.cost, self.model)}")


def combined(estimates: list[Estimate]) -> Estimate:
    """Several runs' estimates as one (a replay's modes); the cost is unknown if any is."""
    out = Estimate(estimates[0].model if estimates else "")
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


def cost_text(cost: float | None, model: str) -> str:
    if cost is None:
        return f"unknown price (model '{model}' has no price in litellm's cost map)"
    if registry.in_process(model):
        return "no cost (the model runs on this machine)"
    return f"about ${cost:.4f}"


def sizes_for(config: RunConfig, store=None) -> Sizes:
    """The sizes of a run with these settings; with a store, the chosen papers' real text."""
    mode = MODES.get(config.mode, MODES["global"])
    style = registry.prompt_style(config.model, config.prompt_style)
    authors = len(config.researcher_ids) if mode.reads_profiles else 1
    wants = bool(config.reviewer_ids) or config.num_reviewers > 0
    reviewers = (len(config.reviewer_ids) or config.num_reviewers) if mode.reads_profiles else 1
    reviewers = reviewers if wants else 0
    new_profiles = len(set(config.reviewer_ids) - set(config.researcher_ids)) \
        if config.reviewer_ids else reviewers
    paper_chars = len(config.paper_ids) * PAPER_CHARS if mode.reads_papers else 0
    if store is not None and mode.reads_papers:
        try:
            papers = [store.corpus.get_paper(p) for p in config.paper_ids]
            paper_chars = sum(len(p.title) + len(p.abstract) + 40 for p in papers)
        except Exception:  # an unknown id: validation says so at Start; estimate roughly
            pass
    return Sizes(style, authors, reviewers, new_profiles if mode.reads_profiles else 0,
                 paper_chars, config.max_profile_papers * PAPER_CHARS)


def estimate(config: RunConfig, store=None) -> Estimate:
    """Calls, tokens and cost of a whole run with these settings (fresh, nothing cached)."""
    from .plan import plan_for  # noqa: PLC0415  (plan imports this module's estimators)

    s = sizes_for(config, store)
    est = Estimate(config.model, {st.name: st.estimate(s) for st in plan_for(config)})
    t = est.total
    est.cost = registry.estimate_cost(config.model, t.prompt_tokens, t.completion_tokens)
    return est


def smallest_call(config: RunConfig, store=None) -> Calls:
    """The cheapest single call the run would make (what a cap must at least allow)."""
    s = sizes_for(config, store)
    from .plan import plan_for  # noqa: PLC0415

    ones = [Calls(1, 1, c.prompt_tokens // c.calls, c.completion_tokens // c.calls)
            for c in (st.estimate(s) for st in plan_for(config)) if c.calls]
    return min(ones, key=lambda c: c.tokens, default=Calls())


def check_cap(config: RunConfig, store=None) -> None:
    """A cap that cannot be enforced, or that is smaller than one call, is refused before
    any call, with one message."""
    if config.max_tokens is None and config.max_cost is None:
        return
    if (config.max_tokens is not None and config.max_tokens <= 0) or \
            (config.max_cost is not None and config.max_cost <= 0):
        raise InputError("a budget must be more than zero", "Give a positive --max-tokens or --max-cost.")
    one = smallest_call(config, store)
    if not one.calls:
        return
    if config.max_cost is not None:
        price = registry.estimate_cost(config.model, one.prompt_tokens, one.completion_tokens)
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

    def __init__(self, config: RunConfig, usage: Usage, prior: Usage | None = None, store=None):
        self.config = config
        self.usage = usage
        self.prior = prior or Usage()
        self.sizes = sizes_for(config, store)

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
            price = registry.estimate_cost(c.model, need.prompt_tokens, need.completion_tokens) or 0.0
            if cost + price > c.max_cost:
                raise BudgetExceeded(f"stage '{stage.name}' needs about ${price:.4f}, more than the "
                                     f"budget has left ({self._cap_text()})")
