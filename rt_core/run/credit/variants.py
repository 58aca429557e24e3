"""What each researcher (or paper) brought: the run's writing done again without them.

For a finished run, every variant is a Simulation over the same store with one author
(or, with papers=True, one chosen paper) left out, the reviewers fixed to the run's
own, and a short plan: read, write, aggregate, the reviews and the reference
comparison, but no meta-review, no provenance and no brainstorm loop. Profiles come
from the store and every call whose prompt did not change comes from the call cache,
so only the changed calls are made. One more variant keeps everyone: the "full"
proposal every other is compared with. For a plain run it is wholly cached (no
call); for a run whose proposal a later stage changed (candidates, revision), it is the
same short plan with everyone, so like is compared with like.

Changed calls, for M authors, R reviewers and P chosen papers, without re-asks
(`formula`): leaving out an author changes the aggregate (one call for an instruction
model when at least two drafts remain, none for a single draft) and the R reviews;
leaving out a paper changes every draft as well. The variants run at the same time
(one after another on a serial model), so the wall time is about one variant's
critical path: aggregate, then the reviews.

Nothing here is saved but `Run.credit` on the run itself; the variants are not runs
of their own and never appear in History.
"""
from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import BudgetExceeded, InputError, RTError
from ...models import registry
from ...models.client import run_async
from ...models.embed import Embedder
from ...models.facts import ModelFacts, facts_for
from ...store import Store
from ...types import MODES, QUESTION_KEYS, Credit, Run, RunConfig, RunRequest, Usage
from ..pipeline import costs
from ..pipeline.budget import cost_text
from ..pipeline.plan import plan_for
from ..pipeline.recorder import Recorder
from ..pipeline.runner import Stage
from ..pipeline.simulation import Simulation
from .measure import compare

KEPT_STAGES = ("queue", "read", "write", "aggregate", "choose", "read_reviewers", "review", "evaluate")
FULL = "full"


@dataclass(frozen=True)
class Variant:
    kind: str  # "author", "paper" or FULL
    id: str
    config: RunConfig


@dataclass
class CreditEstimate:
    model: str
    variants: int
    calls: costs.Calls
    cost: float | None
    free: bool = False  # the model runs in this process (budget.Estimate.free)

    def summary(self) -> str:
        c = self.calls
        calls = c.count_text()
        return (f"Leave-one-out: {self.variants} re-writings, {calls} new model calls, about "
                f"{c.tokens:,} tokens, {cost_text(self.cost, self.model, self.free)}")


@dataclass
class CreditResult:
    credits: list[Credit]
    estimate: CreditEstimate
    usage: Usage = field(default_factory=Usage)  # every variant's calls and cache hits
    calls_by_variant: dict[str, int] = field(default_factory=dict)


class _Quiet(Recorder):
    """A variant's recorder: progress and errors as usual, but no row in the store."""

    def save(self) -> None:
        self.run.notes = list(dict.fromkeys([*self.run.notes, *self.notes]))

    def release(self) -> None:
        pass


# -- what is compared ---------------------------------------------------------------------------
def reviewers_of(run: Run) -> list[str]:
    return list(dict.fromkeys(r.reviewer_id for r in run.reviews))


def check_comparable(run: Run, papers: bool = False) -> None:
    """One clear message when leave-one-out has nothing to compare."""
    if run.status != "done" or run.proposal is None:
        raise InputError(f"run {run.id} is not finished ({run.status})",
                         "Credit compares a finished run with itself re-written; finish it first.")
    mode = MODES.get(run.config.mode, MODES["global"])
    if papers:
        if not mode.reads_papers or len(run.config.paper_ids) < 2:
            raise InputError("this run has fewer than two chosen papers, so there is no paper "
                             "to leave out and still write from the others",
                             "Paper credit needs a run that read two or more papers.")
        return
    if not mode.reads_profiles or len(run.config.researcher_ids) < 2:
        raise InputError("this run has one author, so leaving them out leaves nobody to write: "
                         "there is nothing to compare",
                         "Credit needs a run with two or more authors.")


def variants(run: Run, papers: bool = False) -> list[Variant]:
    """The full variant first, then one per author (or paper) left out."""
    cfg = dataclasses.replace(run.config, reviewer_ids=reviewers_of(run),
                              num_reviewers=len(reviewers_of(run)), candidates=1,
                              revision_rounds=0, check_novelty=False, max_tokens=None, max_cost=None)
    out = [Variant(FULL, "", cfg)]
    if papers:
        ids = [p for p in cfg.paper_ids if p != cfg.reference_paper_id]
        out += [Variant("paper", p, dataclasses.replace(cfg, paper_ids=[q for q in cfg.paper_ids if q != p]))
                for p in ids]
    else:
        out += [Variant("author", a, dataclasses.replace(
            cfg, researcher_ids=[b for b in cfg.researcher_ids if b != a])) for a in cfg.researcher_ids]
    return out


# -- what it costs ------------------------------------------------------------------------------
def changed_calls(v: Variant, facts: ModelFacts, store=None) -> costs.Calls:
    """The calls a variant makes that the cache cannot answer (the full one: none). `facts`:
    the run's models' (a variant changes its ids only)."""
    if v.kind == FULL:
        return costs.Calls()
    s = costs.sizes_at(v.config, facts.under(v.config), store)
    out = costs.aggregate(s) + costs.review(s)
    return out + costs.write_drafts(s) if v.kind == "paper" else out


def formula(style: str, authors: int, reviewers: int, papers: int = 0, by_paper: bool = False) -> int:
    """Changed calls without re-asks, in closed form (instruction models; `changed_calls`
    covers base models): M*(agg(M-1)+R) for authors, P*(M+agg(M)+R) for papers, where
    agg(n) = 1 if n >= 2 else 0."""
    if not registry.traits(style).follows_instructions:
        raise ValueError("the closed form is stated for instruction models")
    agg = lambda n: 1 if n >= 2 else 0
    if by_paper:
        return papers * (authors + agg(authors) + reviewers)
    return authors * (agg(authors - 1) + reviewers)


def estimate(run: Run, store=None, papers: bool = False) -> CreditEstimate:
    vs = variants(run, papers)
    facts = facts_for(run.config)  # asked once for every variant
    total = costs.Calls()
    for v in vs:
        total = total + changed_calls(v, facts, store)
    if run.config.candidates > 1 or len(run.rounds) > 1:  # the full proposal is written again
        s = costs.sizes_at(vs[0].config, facts.under(vs[0].config), store)
        total = total + costs.aggregate(s) + costs.review(s)
    price = facts.cost(total.prompt_tokens, total.completion_tokens)
    return CreditEstimate(run.config.model, len(vs) - 1, total, price, facts.in_process)


class SharedCap:
    """One cap over every variant together (their usages summed), checked before each
    fresh call; None for either limit means no limit of that kind."""

    def __init__(self, model: str, max_tokens: int | None, max_cost: float | None):
        self.model, self.max_tokens, self.max_cost = model, max_tokens, max_cost
        self.usages: list[Usage] = []

    @property
    def capped(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def spent(self) -> tuple[int, float]:
        return (sum(u.prompt_tokens + u.completion_tokens for u in self.usages),
                sum(u.cost for u in self.usages))

    def check_call(self) -> None:
        tokens, cost = self.spent()
        if (self.max_tokens is not None and tokens >= self.max_tokens) or \
                (self.max_cost is not None and cost >= self.max_cost):
            raise BudgetExceeded(f"the credit budget is used up ({tokens:,} tokens, ${cost:.4f} spent)")

    def admit(self, stage: Stage) -> None:
        pass  # the whole estimate was checked before the first variant

    def refuse_if_over(self, est: CreditEstimate) -> None:
        t = est.calls
        if self.max_tokens is not None and t.tokens > self.max_tokens:
            raise InputError(f"credit needs about {t.tokens:,} tokens, more than the cap of "
                             f"{self.max_tokens:,}", "Raise the cap, or leave it empty for no cap.")
        if self.max_cost is not None and est.cost is not None and est.cost > self.max_cost:
            raise InputError(f"credit needs about ${est.cost:.4f}, more than the cap of "
                             f"${self.max_cost:g}", "Raise the cap, or leave it empty for no cap.")


# -- running the variants -----------------------------------------------------------------------
def _short_plan(plan: list[Stage]) -> list[Stage]:
    """The run's plan without meta-review, provenance or any later stage; the reference
    comparison waits for the reviews (it needs nothing else from the stages it loses)."""
    kept = [s for s in plan if s.name in KEPT_STAGES]
    names = {s.name for s in kept}
    out: list[Stage] = []
    for s in kept:
        needs = tuple(n for n in s.needs if n in names)
        if len(needs) < len(s.needs) and out and out[-1].name not in needs:
            needs += (out[-1].name,)  # a dropped stage it waited for: wait for what came before
        if s.name == "evaluate":
            needs = ("review",) if "review" in names else ("aggregate",)
        out.append(dataclasses.replace(s, needs=needs))
    return out


def _variant_sim(v: Variant, request: RunRequest, store: Store, embedder: Embedder,
                 cap: SharedCap) -> Simulation:
    sim = Simulation(dataclasses.replace(request, config=v.config), store, embedder=embedder,
                     recorder=_Quiet)
    sim.start()  # a variant that cannot run fails before any variant's call
    sim.plan = _short_plan(plan_for(v.config, sim.facts))
    sim.use_budget(cap)
    cap.usages.append(sim.run.usage)
    return sim


async def _run_all(sims: list[Simulation], serial: bool, tick: Callable[[], None]) -> list[Run]:
    async def one(sim: Simulation) -> Run:
        run = await sim.arun()
        tick()
        return run

    if serial:
        return [await one(s) for s in sims]
    return list(await asyncio.gather(*(one(s) for s in sims)))


def leave_one_out(run: Run, store: Store, request: RunRequest | None = None, papers: bool = False,
                  max_tokens: int | None = None, max_cost: float | None = None,
                  on_variant: Callable[[], None] = lambda: None, save: bool = True) -> CreditResult:
    """Every variant written and reviewed, each compared with the full one; the credits
    are stored on the run (save=True). The cap (tokens, dollars) is over all variants
    together; without one given, the run's own cap applies. Raises InputError when there is nothing to compare
    or the estimate is over the cap, and RTError when a variant fails (nothing is stored)."""
    check_comparable(run, papers)
    store = store.for_run(run.id)  # the records its owner's browser sees (rt_core.access)
    est = estimate(run, store, papers)
    # No cap given: the run's own cap, if it had one, bounds its credit too.
    cap = SharedCap(run.config.model, run.config.max_tokens if max_tokens is None else max_tokens,
                    run.config.max_cost if max_cost is None else max_cost)
    cap.refuse_if_over(est)
    request = request or RunRequest(run.config)
    embedder = Embedder.for_request(request, store)
    vs = variants(run, papers)
    sims = [_variant_sim(v, request, store, embedder, cap) for v in vs]
    done = run_async(_run_all(sims, registry.serial(run.config.model), on_variant))
    for v, r in zip(vs, done, strict=True):
        if r.status != "done":
            what = "everyone" if v.kind == FULL else f"without {v.kind} {v.id}"
            detail = r.errors[-1].message if r.errors else r.status
            raise RTError(f"the re-writing {what} did not finish: {detail}",
                          "Nothing was stored; fix the cause and run credit again (finished calls are cached).")
    full = done[0]
    names = _names(store, vs)
    credits = [compare(embedder, v.kind, v.id, names.get(v.id, v.id), full, r, _own_text(store, v),
                       run.proposal) for v, r in zip(vs[1:], done[1:], strict=True)]
    usage = Usage()
    for r in done:
        usage.calls += r.usage.calls
        usage.cache_hits += r.usage.cache_hits
        usage.prompt_tokens += r.usage.prompt_tokens
        usage.completion_tokens += r.usage.completion_tokens
        usage.cost += r.usage.cost
    result = CreditResult(credits, est, usage,
                          {(v.id or FULL): r.usage.calls for v, r in zip(vs, done, strict=True)})
    if save:
        stored = store.runs.load(run.id)
        stored.credit = credits
        store.runs.save(stored)
        run.credit = credits
    return result


def _own_text(store: Store, v: Variant) -> dict[str, str] | None:
    """What a left-out paper carries, for every question (an author's: their draft)."""
    if v.kind != "paper":
        return None
    p = store.corpus.get_paper(v.id)
    return dict.fromkeys(QUESTION_KEYS, f"{p.title}. {p.abstract}")


def _names(store: Store, vs: list[Variant]) -> dict[str, str]:
    people = [v.id for v in vs if v.kind == "author"]
    papers = [v.id for v in vs if v.kind == "paper"]
    return {**(store.corpus.researcher_names(people) if people else {}),
            **(store.corpus.paper_titles(papers) if papers else {})}
