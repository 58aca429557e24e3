"""One simulation run: the state a run's stages share, and its start and end.

`Simulation(request, store)` validates the request once, derives the model client and
the embedder from it, and holds what the stages leave for each other (profiles,
drafts, the chosen reviewers...). `arun` executes the run's plan (`run.plan`) with the
generic runner (`run.runner`): every stage's work is saved when the stage ends and
every model call is cached, so a failed or cancelled run keeps what it finished and a
re-run resumes from the cache without new calls.
"""
from __future__ import annotations

import datetime as _dt
import threading
import uuid
from collections.abc import Callable

from .. import keys
from ..errors import CancelledRun
from ..models import registry
from ..models.client import LLMClient, ModelSettings, run_async
from ..models.embed import Embedder
from ..store import Store
from ..store.runs import RunConflict
from ..types import MODES, ProgressEvent, Proposal, Run, RunRequest, StageError, Usage
from .budget import Budget, BudgetExceeded, check_cap
from .context import StageContext
from .evaluate import Reference
from .grounding import Grounding
from .plan import Stage, plan_for
from .reading import Reader
from .recorder import Recorder
from .reviewers import ReviewerChoice
from .runner import Runner
from .style import stages_for
from .validation import effective_cutoff, validate
from .warmup import warm_up


class Simulation:
    """One run of one RunRequest. The request is validated once, here, and never copied
    into a second settings object: the client and the embedder are derived from it."""

    def __init__(self, request: RunRequest, store: Store, embedder: Embedder | None = None,
                 on_progress: Callable[[ProgressEvent], None] | None = None,
                 cancel: threading.Event | None = None, run_id: str | None = None,
                 resume: bool = False, sleep: Callable[[float], object] | None = None):
        """resume=True re-runs the stored run `run_id` (interrupted, failed or cancelled)
        with the same request under the same id: every call that had succeeded comes
        from the cache. `sleep` replaces the retry back-off wait (tests)."""
        validate(request.config, store)
        check_cap(request.config, store)
        keys.check_request(request)
        warm_up()  # no-op when a page started it; else it overlaps the rest of the set-up
        self.request = request
        self.config = request.config
        self.mode = MODES[self.config.mode]
        self.store = store
        self.embedder = embedder or Embedder.for_request(request, store)
        created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        resume = bool(resume and run_id)
        prior = Usage()  # what earlier attempts of this run spent, counted by the budget
        if resume:
            store.runs.reap_orphans()
            old = store.runs.load(run_id)  # NotFoundError for an unknown id
            if old.status == "running":
                raise RunConflict(f"run {run_id} is still running in a live process",
                                  "Wait for it to finish; interrupted, failed or cancelled runs resume.")
            created = old.created_at
            prior = old.usage
        self.run = Run(id=run_id or uuid.uuid4().hex[:12], config=self.config, created_at=created)
        self.client = LLMClient(ModelSettings.for_request(request), store=store,
                                usage=self.run.usage, concurrency=self.config.concurrency,
                                cancel=cancel or threading.Event(), sleep=sleep)
        self.use_budget(Budget(self.config, self.run.usage, prior, store))
        self.ctx = StageContext(self.client, on_progress or (lambda e: None), self.client.cancel)
        self.style = stages_for(self.client.settings.style)
        self.recorder = Recorder(store, self.run, resume, self._progress, self.client.notes)
        ref = store.corpus.get_paper(self.config.reference_paper_id) \
            if self.config.reference_paper_id else None
        self.reader = Reader(store, self.config, effective_cutoff(self.config, ref.year if ref else None),
                             self.ctx, self.style)
        self.reviewers = ReviewerChoice(store, self.config, self.reader, self.embedder)
        # Field names and background papers for the base-model stages' key concepts, which
        # are computed on first use (chat stages never ask, so never pay the embedding).
        self.ctx.grounding = Grounding.for_store(store, self.reader.grounding_papers(self.mode),
                                                 self.embedder)
        self.plan: list[Stage] = plan_for(self.config)
        self.started: list[str] = []  # stage names in the order the runner started them
        # What the stages leave for each other.
        self.reference: Reference | None = None  # a replay resolves it once for every mode
        self.candidate_vectors: dict | None = None  # a replay shares them between modes
        self.candidates_error: Exception | None = None
        self.drafts: dict[str, Proposal] = {}
        self.author_order: list[str] = []
        self.reviewer_ids: list[str] = []

    def use_budget(self, budget) -> None:
        """The cap this run's calls answer to. One place, because the client checks it
        before every call: credit's variants share one cap, and a revision of a finished
        run is capped on its new calls only (run/credit.py, run/revise_more.py)."""
        self.budget = budget
        self.client.before_call = budget.check_call if budget.capped else (lambda: None)

    def _progress(self, event: ProgressEvent) -> None:
        self.ctx.on_progress(event)  # looked up per event: a caller may swap the listener

    @property
    def serial(self) -> bool:
        """One in-process model: agents one after another, so llama.cpp reuses its prefix."""
        return self.client.semaphore_limit == 1

    def model_queue(self):
        """The first-come queue in front of a serial model, or None."""
        return registry.queue_for(self.client.settings.model)

    def ordered_drafts(self) -> list[Proposal]:
        return [self.drafts[a] for a in self.author_order if a in self.drafts]

    def _stage_started(self, stage: Stage) -> None:
        self.started.append(stage.name)

    def _stage_ended(self, stage: Stage, seconds: float) -> None:
        if stage.group:
            self.run.timings[stage.group] = round(self.run.timings.get(stage.group, 0.0) + seconds, 3)
        if stage.saves:
            self.recorder.save()

    async def arun(self) -> Run:
        run = self.run
        run.status = "running"
        self.recorder.save()
        runner = Runner(self.plan, self, self._stage_started, self._stage_ended, self.budget.admit)
        try:
            await runner.run()
            run.status = "done"
        except BudgetExceeded as exc:
            self._over_budget(runner, exc)
        except CancelledRun:
            run.status = "cancelled"
        except Exception as exc:
            failed = runner.failed
            if not run.errors or run.errors[-1].message != str(exc):
                self.recorder.fail((failed.group or failed.name) if failed else "run", "run", exc)
            run.status = "failed"
        finally:
            queue = self.model_queue()
            if queue is not None:
                queue.leave(run.id)
            if run.status == "running":  # interrupted by something not an Exception
                run.status = "interrupted"
            try:
                self.recorder.save()
            finally:
                self.recorder.release()
        return run

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


def simulate(request: RunRequest, store: Store | None = None, **kw) -> Run:
    """Run a whole simulation synchronously (CLI, scripts, tests)."""
    from ..store import open_store  # noqa: PLC0415

    return Simulation(request, store or open_store(), **kw).run_sync()
