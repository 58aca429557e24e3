"""One simulation run: its outline (what it will be), its start and its end.

`Simulation(request, store)` records the request and asks the registry what its models
are, once (models/facts.py: the plan depends on it, a serial model queueing first); nothing
below asks it again by a model's name. `start()` works out what the run will be, once
(`outline_for`: checked, sized and estimated in calls, tokens and cost, one frozen
`Outline`), then its wall time (`expected`, which a door prints beside the estimate
and the run keeps beside what it took; a first run whose door did not time the embedded
model first times it before its first stage, `_measure_if_unknown`), then its live parts:
the warm-up, the budget, the model client and the embedder derived from the request, and
the stages' typed state (run/pipeline/state.py: the context, and what the stages leave each
other: profiles, drafts, the chosen reviewers...). `arun` starts the run if nobody did and
executes the run's plan (`run.plan`) with the generic runner (`run.runner`): every
stage's work is saved when the stage ends and every model call is cached, so a failed or
cancelled run keeps what it finished and a re-run resumes from the cache without new calls.
"""
from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ... import allowance
from ...errors import CancelledRun
from ...models import keys
from ...models.client import LLMClient, ModelSettings, run_async
from ...models.embed import Embedder
from ...models.facts import ModelFacts, facts_for
from ...settings.schema import check_config
from ...store import Store
from ...types import ProgressEvent, Run, RunRequest, StageError, Usage
from ..styles.context import StageContext
from ..styles.style import stages_for
from .budget import Budget, BudgetExceeded, Estimate, check_cap, plan_estimate
from .costs import Sizes, sizes_at
from .plan import plan_for
from .recorder import Recorder
from .runner import Runner, Stage
from .state import RunState
from .timing import Expected, plan_expected, record_end, record_start
from .validation import effective_cutoff, validate
from .warmup import later_parts, parts_for, warm_up

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outline:
    """What a run will be, worked out once when it starts and before anything is written: its
    models' facts, the sizes every estimate is priced at (its config having passed the
    schema's bounds, the run's rules and the cap), the profile cut-off, and the calls, tokens
    and cost it will take. The door prints the estimate, the budget admits each stage at these
    sizes and the wall time is worked out from them (`Simulation.expected`, after the warm-up
    has begun: it may time the model first). One record, so a reader sees in one place what
    the run's start decided, and no step asks the registry or the store again for it."""
    facts: ModelFacts
    sizes: Sizes
    cutoff_year: int | None
    estimate: Estimate


def outline_for(request: RunRequest, store: Store, plan: list[Stage], facts: ModelFacts) -> Outline:
    """The run's outline, each question asked once and in the order that fails soonest, from
    what the registry said of its models (`facts`, asked when the run was made): every option
    within the schema's bounds; the run's own rules (neighbourhood, judge, rounds, ids:
    validation.py); its sizes; a cap that allows one call of its plan; the keys of the
    endpoints it calls; then the cut-off and the estimate."""
    config = request.config
    check_config(config)
    validate(config, store, facts)
    sizes = sizes_at(config, facts, store)
    check_cap(config, plan, sizes)
    keys.check_request(request, facts.declared)
    ref = store.corpus.get_paper(config.reference_paper_id) if config.reference_paper_id else None
    return Outline(facts, sizes, effective_cutoff(config, ref.year if ref else None),
                   plan_estimate(config.model, plan, sizes))


@dataclass(frozen=True)
class Continuation:
    """More work asked of a finished run (more revision rounds: run/revision/more.py). The
    run resumes under the old run's id with the new request and keeps what was computed on it
    afterwards (credit, the judge, the real-review comparison: a stage may drop the last two);
    `then` runs after the whole of its plan; the budget is made over its usage (`budget`);
    `added_work` is the wall time the new work adds. The simulation builds all of it from
    this record when it is made, so the caller asks the run for more instead of patching it."""
    old: Run
    then: tuple[Stage, ...]
    added_work: Expected
    budget: Callable[[Usage], Budget]


class Simulation:
    """One run of one RunRequest. The request is validated once, when the run starts,
    and never copied into a second settings object: the client and the embedder are
    derived from it."""

    def __init__(self, request: RunRequest, store: Store, embedder: Embedder | None = None,
                 on_progress: Callable[[ProgressEvent], None] | None = None,
                 cancel: threading.Event | None = None, run_id: str | None = None,
                 resume: bool = False, sleep: Callable[[float], object] | None = None,
                 recorder: type[Recorder] = Recorder, continues: Continuation | None = None):
        """Only the registry is asked here (`facts`, which the plan depends on); nothing is
        read from the store, checked or written: `start` does that. resume=True re-runs
        the stored run `run_id` (interrupted, failed or cancelled) with the same request
        under the same id: every call that had succeeded comes from the cache. `sleep`
        replaces the retry back-off wait (tests); `recorder` how the run is saved; `continues`:
        a finished run given more work (Continuation: it sets the id, the resume, the extra
        stages, the budget and the added wall time)."""
        if continues is not None:
            run_id, resume = continues.old.id, True
        self.request = request
        self.config = request.config
        self.store = store
        self.on_progress = on_progress or (lambda e: None)  # a caller may swap it while it runs
        self.cancel = cancel or threading.Event()
        self.resume = bool(resume and run_id)
        created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        self.run = Run(id=run_id or uuid.uuid4().hex[:12], config=self.config, created_at=created)
        # What the registry says of the run's models, asked once for the whole run: the
        # plan, the outline, the wall time, the warm-up and the client read it.
        self.facts: ModelFacts = facts_for(self.config)
        self.plan: list[Stage] = plan_for(self.config, self.facts)
        if continues is not None:
            old, names = continues.old, tuple(s.name for s in self.plan)
            self.plan += [dataclasses.replace(s, needs=names) for s in continues.then]
            # What was computed on the run afterwards is kept (a stop on the way keeps it too).
            self.run.credit, self.run.judge = list(old.credit), old.judge
            self.run.review_similarity = old.review_similarity
        self.started: list[str] = []  # stage names in the order the runner started them
        # set by use_budget or a continuation, else made at the start
        self.budget: Budget | None = continues.budget(self.run.usage) if continues else None
        self.meter: allowance.Meter | None = None  # a shared demo's visitor pays: made at the start
        self.state: RunState | None = None  # made by start
        # More work added to a run that already has its estimate (a revision of a finished
        # run: run/revision/more.py); else a new run's estimate is made when it starts.
        self.added_work: Expected | None = continues.added_work if continues else None
        self.outline: Outline | None = None  # what the run will be: worked out by start
        self.expected: Expected | None = None  # wall time: made by start (or added_work)
        self._embedder, self._sleep, self._recorder = embedder, sleep, recorder
        self._warming = None  # what start() began loading in the background
        self.measuring = False  # timing the model for the estimate (`_measure_if_unknown`)

    @property
    def estimate(self) -> Estimate | None:
        """The run's calls, tokens and cost, fresh (`Outline.estimate`; None before the start)."""
        return self.outline.estimate if self.outline is not None else None

    def use_budget(self, budget) -> None:
        """The cap this run's calls answer to (before or after the start). One place,
        because the client checks it before every call: credit's variants share one cap,
        and a revision of a finished run is capped on its new calls only (run/credit/variants.py,
        run/revision/more.py)."""
        self.budget = budget
        if self.state is not None:
            self.state.client.before_call = _gate(budget, self.meter)

    def _progress(self, event: ProgressEvent) -> None:
        self.on_progress(event)  # looked up per event: a caller may swap the listener

    def start(self, calibrate: bool = False) -> RunState:
        """What the run will be (`outline_for`: checked, sized, estimated), then its wall time and
        its live parts (the warm-up, the budget, the client, the embedder) and, to resume, the
        stored run's history (orphans reaped first): the stages' state. Done once; bad input
        fails here, in the caller, before anything is written (but the records given with the
        request, stored first), and so does a start a shared demo's visitor cannot pay the first
        step of (rt_core.allowance; their meter then counts and checks every call).
        calibrate=True: an embedded model with no measured speed is timed now for the estimate
        (a command line has no button for it; the app asks first)."""
        if self.state is not None:
            return self.state
        if self.request.given is not None:
            self._store_given()
        request = self.request
        config = self.config
        store = self.store
        self.outline = outline = outline_for(request, store, self.plan, self.facts)
        sizes = outline.sizes
        self.meter = allowance.meter(store, request.payer, self.run.usage)
        if self.meter is not None:  # a visitor's demo allowance must pay for the first step
            self.meter.admit_start(allowance.first_step(outline.estimate))
        # overlaps the wall time's calibration
        self._warming = warm_up(parts_for(outline.facts), outline.facts.preload)
        prior = Usage()  # what earlier attempts of this run spent, counted by the budget
        if self.resume:
            old = store.runs.resumable(self.run.id)
            self.run.created_at, prior = old.created_at, old.usage
        self.budget = self.budget or Budget(config, self.run.usage, sizes, prior)
        # A model timed now is timed alone, after the warm-up; one timed already is not waited
        # for: the estimate is printed at once (the first stage waits for the warm-up, in `arun`).
        self.expected = self.added_work or plan_expected(config, self.plan, sizes, store, calibrate,
                                                         before_measuring=self._warming.join)
        client = LLMClient(ModelSettings.for_request(request), store=store, usage=self.run.usage,
                           concurrency=config.concurrency, cancel=self.cancel, sleep=self._sleep,
                           facts=outline.facts)
        client.before_call = _gate(self.budget, self.meter)
        if self.meter is not None:
            client.after_call = self.meter.record
        ctx = StageContext(client, self._progress, self.cancel)
        style = stages_for(outline.facts.style)
        embedder = self._embedder or Embedder.for_request(request, store)
        self.state = state = RunState(
            request=request, store=store, run=self.run, client=client, ctx=ctx, style=style,
            recorder=self._recorder(store, self.run, self.resume, self._progress, client.notes),
            embedder=embedder, cutoff_year=outline.cutoff_year)
        ctx.grounding = state.grounding  # the base-model stages' material (run/pipeline/state.py)
        return state

    def _store_given(self) -> None:
        """The records that came with the request go into the store first (a paper it holds
        already keeps its stored id) and their ids join the neighbourhood: the run's config
        is the one with them. The plan does not depend on the neighbourhood's ids."""
        given = self.request.given
        bundle = self.store.corpus.import_bundle(given.papers, given.researchers, origin=given.origin)
        c = self.config
        config = dataclasses.replace(c, researcher_ids=[*c.researcher_ids, *bundle.researcher_ids],
                                     paper_ids=[*c.paper_ids, *bundle.paper_ids])
        self.request = dataclasses.replace(self.request, config=config, given=None)
        self.config = self.run.config = config

    def _stage_started(self, stage: Stage) -> None:
        self.started.append(stage.name)

    def _stage_ended(self, stage: Stage, seconds: float) -> None:
        if stage.group:
            self.run.timings[stage.group] = round(self.run.timings.get(stage.group, 0.0) + seconds, 3)
        if stage.saves:
            self.state.recorder.save()

    async def arun(self) -> Run:
        state = self.start()
        run, recorder = self.run, state.recorder
        run.status = "running"
        recorder.save()
        await self._measure_if_unknown()
        self._record_estimate()
        began = time.perf_counter()
        runner = Runner(self.plan, state, self._stage_started, self._stage_ended, self.budget.admit,
                        state.fold)
        try:
            # The first stage starts once what its calls load is in (run/pipeline/warmup.py):
            # the first call would wait for most of it anyway, and the rest would take the
            # interpreter from the first rounds.
            await asyncio.to_thread(self._warming.join)
            warm_up(later_parts(self.config))  # loads while the first rounds wait (warmup.py)
            await runner.run()
            run.status = "done"
        except BudgetExceeded as exc:
            self._over_budget(runner, exc)
        except CancelledRun:
            run.status = "cancelled"
        except Exception as exc:
            failed = runner.failed
            if not run.errors or run.errors[-1].message != str(exc):
                recorder.fail((failed.group or failed.name) if failed else "run", "run", exc)
            run.status = "failed"
        finally:
            queue = state.model_queue()
            if queue is not None:
                queue.leave(run.id)
            if run.status == "running":  # interrupted by something not an Exception
                run.status = "interrupted"
            try:
                recorder.save()
                record_end(self.store, run.id, time.perf_counter() - began)
                if self.meter is not None:  # what the embedder spent after the last call
                    self.meter.record()
            finally:
                recorder.release()
        return run

    async def _measure_if_unknown(self) -> None:
        """A new run on a model that can be timed (the embedded one) but has no measured speed
        here yet is timed now, before its first stage, while the warm-up loads: a door that
        did not calibrate before the start (the app, whose Run page never loads the model just
        to draw itself) still keeps an estimate beside the time the run took. The command line
        calibrated in `start`; a resume keeps its first estimate, a revision its own. The
        measurement is not counted in the run's wall time, as the command line's is not."""
        if self.resume or self.added_work is not None or self.expected is None or \
                self.expected.seconds is not None or not self.facts.calibrates:
            return
        self.measuring = True
        try:
            self.expected = await asyncio.to_thread(plan_expected, self.config, self.plan, self.outline.sizes,
                                                    self.store, True, before_measuring=self._warming.join)
        except Exception:  # the estimate is a guide: a run never fails for it
            log.warning("could not time the model for the run's estimate", exc_info=True)
        finally:
            self.measuring = False

    def _record_estimate(self) -> None:
        """The run's expected wall time beside it (run/pipeline/timing.py): a new run's, kept
        by a resume; a revision adds its own."""
        if self.added_work is not None or not self.resume:
            record_start(self.store, self.run.id, self.expected, add=self.added_work is not None)

    def _over_budget(self, runner: Runner, exc: BudgetExceeded) -> None:
        """Stopped by the budget: a failed run that says what was skipped and how to finish."""
        skipped = [s for s in self.plan if s.name not in runner.finished and s.saves]
        names = ", ".join(s.name.replace("_", " ") for s in skipped) or "nothing"
        stopped = runner.failed.name.replace("_", " ") if runner.failed else ""
        where = f"stopped during '{stopped}'; " if stopped else ""
        self.run.errors.append(StageError(
            "budget", "run", exc.kind, f"{exc}: {where}not finished: {names}",
            f"Everything finished is kept. Resume with a larger cap: python -m rt_core resume "
            f"{self.run.id} --max-tokens N (or --max-cost X), or Resume in the app.", exc.app_hint))
        self.run.status = "failed"

    def run_sync(self) -> Run:
        return run_async(self.arun())


def _gate(budget: Budget, meter: allowance.Meter | None = None) -> Callable[[], None]:
    """What the client asks before each fresh call: the cap's check, or nothing uncapped, and
    in a shared demo whether the visitor and the server have tokens left today."""
    check = budget.check_call if budget.capped else (lambda: None)
    if meter is None:
        return check

    def both() -> None:
        check()
        meter.check_call()
    return both


def simulate(request: RunRequest, store: Store | None = None, **kw) -> Run:
    """Run a whole simulation synchronously (CLI, scripts, tests)."""
    from ...store import open_store  # noqa: PLC0415

    return Simulation(request, store or open_store(), **kw).run_sync()
