"""The wall time a run will take, stated before Start next to its calls and tokens.

Each stage of the plan already says how many calls and tokens it makes (costs.py); the
model's speed on this machine (rt_core/models/speeds.py) turns those into seconds of
model work. Summing them would be right only for a model that answers one call at a
time. A provider answers `concurrency` calls at once, the embedded model decodes up to
its batch of calls together (models/local_batch.py; `ModelFacts.at_once`), and the
plan runs stages that need nothing from each other side by side, so summing would be
several times too long. So the wall time is the longer of two bounds (each call's time
is its measured time among the calls it ran beside):

- the plan's critical path: a stage starts when the stages it needs have finished, and
  its calls go in rounds over its lanes (the agents that work at the same time: the
  authors drafting, the reviewers reviewing; never more than the client's concurrency),
  each round as long as the stage's mean call;
- the total model work divided by the calls at once: every stage shares the one client.

The embedded model is the exception: its calls share one engine, which decodes the calls
in flight together but not for free (a wide decode costs more per call, and the cache it
attends over grows with the calls it holds). A call's recorded time is its time beside
the calls that really ran with it, so its stages take their calls' time over the calls
measured in flight, at the crowding of their own lanes (models/speeds.py: `in_flight`,
`crowding`, `Speed.wall`), one stage's work after another's.

What this leaves out is measured too: work that is not a model call (embedding,
searching, saving), re-asks, and how far the plan's token counts (costs.py, four
characters a token) are from the prompts as they are. Each run records its estimate
beside what it took (`record_start`, `record_end`), and the newest runs of the model
that made their own calls give the bias (`bias`): how long they took over what this
model estimates for them today. The estimate is multiplied by it (within 1/3 to 3), so
it follows the prompts and the machine as they change instead of a constant tuned once.
Only a run's estimate is: loose calls (credit's merges and reviews, `for_calls`) are not
what the runs' plans mis-count.
"""
from __future__ import annotations

import logging
import math
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...models import calibration, speeds
from ...models.facts import ModelFacts, facts_for
from ...types import RunConfig
from .costs import Calls, Sizes, review_lanes, sizes_at
from .plan import plan_for
from .runner import Stage

log = logging.getLogger(__name__)
BIAS_RUNS = 5  # the newest finished runs the bias reads
BIAS_RANGE = (1 / 3, 3.0)  # beyond this a run says more about itself than about the next one


@dataclass(frozen=True)
class Expected:
    """The wall time expected (None: the model has no measured speed yet) and its source."""
    model: str
    seconds: float | None
    speed: speeds.Speed | None = None
    factor: float = 1.0  # the bias applied (`bias`)
    runs: int = 0  # the earlier runs it comes from
    local_only: bool = False  # the plan makes no model call: its time is work on this machine

    def text(self) -> str:
        if self.seconds is None:
            return (f"wall time not known yet (model '{self.model}' has made no call on this "
                    "machine; its first run measures it)")
        bias = (f"; x{self.factor:.2f}, as {self.runs} earlier run{'s' * (self.runs != 1)} took"
                if self.runs else "")
        if self.local_only and self.seconds:  # the facets path (costs.from_facets)
            return (f"expected wall time {duration(self.seconds)} (no model call: the papers' facets "
                    f"and embeddings on this machine{bias})")
        if self.speed is None:  # nothing to run (`combined` of no runs): no speed was needed
            return "no model call expected, so no wait"
        return f"expected wall time {duration(self.seconds)} ({self.speed.source()}{bias})"

    def sentence(self) -> str:
        """The text as a sentence of its own."""
        t = self.text()
        return f"{t[:1].upper()}{t[1:]}."


def duration(seconds: float) -> str:
    """Seconds in words a person reads at a glance: 'about 45 s', 'about 3 min 10 s'."""
    s = max(0, round(seconds))
    if s < 90:
        return f"about {s} s"
    minutes, rest = divmod(s, 60)
    if minutes < 90:
        return f"about {minutes} min {rest} s" if rest else f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def lanes(stage: str, s: Sizes) -> int:
    """How many of a stage's calls can be going at once: its agents working side by side
    (and a review's own calls at once, `costs.review_lanes`)."""
    base = stage.rsplit("_", 1)[0] if stage.rsplit("_", 1)[-1].isdigit() else stage  # review_2
    per_review = review_lanes(s)
    return max(1, {"read": s.authors, "write": s.authors, "read_reviewers": s.new_reviewer_profiles,
                   "review": s.reviewers * per_review, "write_candidates": s.candidates,
                   "review_candidates": s.reviewers * s.candidates * per_review,
                   "meta_review_candidates": s.candidates, "novelty": s.candidates,
                   "tournament": s.candidates // 2}.get(base, 1))


def work(speed: speeds.Speed | None, c: Calls) -> float:
    """Seconds of model work for these calls, one after another, with the re-asks a run
    makes as a rule (`Calls.typical`); no speed is needed for no call."""
    if speed is None or not c.typical:
        return 0.0
    return speed.seconds(c.typical, c.prompt_tokens, c.completion_tokens)


def model_calls(plan: Sequence[Stage], sizes: Sizes, counted: set[str] | None = None) -> int:
    """The model calls a plan typically makes (0 on the facets path: no speed is needed)."""
    return sum(st.estimate(sizes).typical for st in plan if counted is None or st.name in counted)


def plan_seconds(plan: Sequence[Stage], sizes: Sizes, speed: speeds.Speed | None, limit: int,
                 counted: set[str] | None = None, load: float = 1.0) -> float:
    """The wall time of a plan: the longer of its critical path and its total work over the
    concurrency `limit` (module docstring). `counted`: only these stages make calls (a
    revision: every earlier stage comes from the cache). On one engine (a serial model,
    whose calls' times say how many ran in flight), however the stages overlap, the plan
    takes the sum of each stage's work on it at the crowding of the stage's lanes
    (`speeds.Speed.wall`). A stage's work that is no model call (`Calls.local`: the facets
    path's, in seconds on an idle core, times `load`) goes along the plan's critical path:
    stages that need nothing from each other embed side by side (numpy leaves the
    interpreter free)."""
    finish: dict[str, float] = {}
    stages: list[tuple[float, int]] = []  # each stage's work and its calls at once
    local: dict[str, float] = {}  # the critical path of the work that is no model call
    for st in plan:
        calls = st.estimate(sizes) if counted is None or st.name in counted else Calls()
        seconds, at_once = work(speed, calls), min(limit, lanes(st.name, sizes))
        stages.append((seconds, at_once))
        start = max((finish.get(n, 0.0) for n in st.needs), default=0.0)
        finish[st.name] = start + _stage_seconds(seconds, calls.calls, at_once) + calls.local * load
        local[st.name] = max((local.get(n, 0.0) for n in st.needs), default=0.0) + calls.local * load
    path = max(local.values(), default=0.0)
    if sizes.facts.serial and speed is not None and speed.at_once is not None:
        return speed.engine_wall(stages) + path
    total = sum(seconds for seconds, _ in stages)
    return max(max(finish.values(), default=0.0), total / max(1, limit) + path)


def machine_load() -> float:
    """How much slower than on an idle core work on this machine goes now: the processes
    waiting for a core per core, over the last minute (1 on an idle machine). The facets
    path's work took 2-3 times as long at a load of 6 on 2 cores as at 2.3 (costs.py)."""
    try:
        return max(1.0, (os.getloadavg()[0] + 1) / (os.cpu_count() or 1))
    except (OSError, AttributeError):  # no load average here (Windows)
        return 1.0


def _stage_seconds(seconds: float, calls: int, at_once: int) -> float:
    """A stage's calls in rounds of `at_once` (5 calls on 4 lanes take two calls' time)."""
    if not calls:
        return seconds
    return seconds / calls * math.ceil(calls / at_once)


def raw_seconds(config: RunConfig, facts: ModelFacts, store, speed: speeds.Speed | None,
                counted: set[str] | None = None) -> float:
    """The plan's wall time at this speed, before the bias (`facts`: the run's models'; 0.0:
    it makes model calls and no speed is known)."""
    sizes = sizes_at(config, facts, store)
    plan = plan_for(config, facts)
    if speed is None and model_calls(plan, sizes, counted):
        return 0.0
    return plan_seconds(plan, sizes, speed, facts.at_once, counted)


def bias(store, runs: list[tuple[dict, float, speeds.Speed | None]], facts: ModelFacts) -> tuple[float, int]:
    """How long the newest finished runs of a model that made their own calls took (`runs`:
    their settings, wall time and the speed their own calls showed, `speeds.runs_speeds`),
    over what the plan estimates for them at that speed (so a machine that has become slower
    since still shows in the speed, not here): the median ratio (within 1/3 to 3) and how
    many runs it comes from; (1.0, 0) when there are none. `facts`: the model's, as the run
    being estimated resolved them (`ModelFacts.under` answers for an earlier run's settings)."""
    ratios = []
    for data, wall, then in runs:
        try:
            earlier = RunConfig.from_dict(data)
            raw = raw_seconds(earlier, facts.under(earlier), store, then)
        except Exception:  # a run stored by an older version: it says nothing here
            log.debug("no estimate for a stored run's settings", exc_info=True)
            continue
        if raw > 0 and wall > 0:
            ratios.append(wall / raw)
    if not ratios:
        return 1.0, 0
    return min(BIAS_RANGE[1], max(BIAS_RANGE[0], statistics.median(ratios))), len(ratios)


def plan_expected(config: RunConfig, plan: Sequence[Stage], sizes: Sizes, store, calibrate: bool = False,
                  counted: set[str] | None = None, before_measuring: Callable[[], object] | None = None) -> Expected:
    """The expected wall time of a run's own plan at its sizes, fresh (nothing cached): what
    a run works out once when it starts (run/pipeline/simulation.py). The speeds are read
    first (today's, and the one each earlier run showed), then the plans are timed at them.
    `before_measuring`: what to wait for if the model is to be timed now
    (`calibration.speed_for`). What the model is comes from `sizes.facts`, which the run
    resolved at its start."""
    facts = sizes.facts
    calls = model_calls(plan, sizes, counted)
    # The facets path makes no call: nothing to time the model for (nor to calibrate).
    speed = (calibration.speed_for(config.model, store, calibrate, before_measuring, facts.calibrates)
             if calls else None)
    if speed is None and calls:
        return Expected(config.model, None)
    earlier = speeds.runs_speeds(store, config.model, BIAS_RUNS)
    factor, runs = bias(store, earlier, facts)
    # Work on this machine goes at today's load, unless earlier runs say how long it took
    # (their bias is of the idle-core figures: the load they ran at is not kept).
    load = machine_load() if not runs else 1.0
    seconds = plan_seconds(plan, sizes, speed, facts.at_once, counted, load)
    return Expected(config.model, seconds * factor, speed, factor, runs, local_only=not calls)


def for_config(config: RunConfig, store, calibrate: bool = False,
               counted: set[str] | None = None) -> Expected:
    """The expected wall time of a run with these settings, fresh (nothing cached)."""
    facts = facts_for(config)
    return plan_expected(config, plan_for(config, facts), sizes_at(config, facts, store), store, calibrate,
                         counted)


def for_calls(config: RunConfig, calls: Calls, at_once: int, store, calibrate: bool = False,
              facts: ModelFacts | None = None) -> Expected:
    """Calls that need nothing from each other, `at_once` going at the same time: their
    work divided among them; on one engine (a serial model), their work on it at the
    crowding of `at_once` calls (`speeds.Speed.wall`).

    Without the runs' bias: it is learnt from whole runs, whose stages these calls do not
    repeat (the candidates, the novelty check, the revision, the work between calls), so it
    says how far a run's plan is off, not how far these calls are. Measured on leave-one-out
    credit (docs/PERFORMANCE.md, 2026-11-29): with it, 0.95-1.29 of the time taken (three
    of five sittings beyond 25%); without it, 1.01-1.22.

    `facts`: the model's (`for_credit` hands its own in); without, they are asked here."""
    facts = facts or facts_for(config)
    speed = calibration.speed_for(config.model, store, calibrate, calibrates=facts.calibrates)
    if speed is None:
        return Expected(config.model, None)
    seconds = work(speed, calls)
    if facts.serial and speed.at_once is not None:
        return Expected(config.model, speed.wall(seconds, at_once), speed)
    return Expected(config.model, seconds / max(1, at_once), speed)


def for_credit(config: RunConfig, calls: Calls, variants: int, reviewers: int, store,
               calibrate: bool = False) -> Expected:
    """Leave-one-out credit (run/credit/variants.py): each variant's reviews at once, on a
    client of its own; the variants side by side, or one after another on a serial model."""
    facts = facts_for(config)
    side_by_side = 1 if facts.serial else max(1, variants)
    return for_calls(config, calls, side_by_side * max(1, min(facts.at_once, reviewers)),
                     store, calibrate, facts)


def combined(expected: list[Expected]) -> Expected:
    """Runs one after another (a replay's modes): their times added, unknown if any is."""
    if not expected:
        return Expected("", 0.0)
    if any(e.seconds is None for e in expected):
        return Expected(expected[0].model, None)
    return Expected(expected[0].model, sum(e.seconds or 0.0 for e in expected),
                    next((e.speed for e in expected if e.speed is not None), None),
                    local_only=all(e.local_only for e in expected))


# -- the estimate kept beside the time taken ------------------------------------------------------
def record_start(store, run_id: str, expected: Expected, add: bool = False) -> None:
    """Keep the estimate with the run (a resume keeps the first; add=True: more work)."""
    try:
        store.runs.expect(run_id, expected.seconds, add=add)
    except Exception:  # an unreachable store: the run itself says so when it saves
        log.debug("could not keep the run's estimate", exc_info=True)


def record_end(store, run_id: str, seconds: float) -> None:
    """Add an attempt's wall time to the run's."""
    try:
        store.runs.add_wall(run_id, seconds)
    except Exception:  # as above
        log.debug("could not keep the run's wall time", exc_info=True)


def took_text(estimate: float | None, wall: float | None) -> str:
    """'estimated about 1 min 20 s, took about 1 min 31 s' (what is known of the two)."""
    parts = []
    if estimate is not None:
        parts.append(f"estimated {duration(estimate)}")
    if wall is not None:
        parts.append(f"took {duration(wall)}")
    return ", ".join(parts)
