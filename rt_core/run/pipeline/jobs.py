"""Simulations in a background thread, so a UI can poll progress and cancel.

A web page re-runs its script on every click; running the simulation inside
that script would be killed by the first click. A Job owns its thread, the
progress events so far, a cancel flag and, at the end, the Run.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ...errors import RTError
from ...models.embed import Embedder
from ...store import Store
from ...types import ProgressEvent, Run, RunRequest
from ..revision import more as revise_more
from .simulation import Simulation


@dataclass(kw_only=True)
class BackgroundJob:
    """Work in a daemon thread: the progress events so far, and how it ended (an RTError,
    or an unexpected error's text, for the page to show). Subclasses say what `_work` is."""
    events: list[ProgressEvent] = field(default_factory=list)
    error: RTError | None = None
    unexpected: str = ""
    thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests, CLI); True if it ended."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done

    def snapshot(self) -> list[ProgressEvent]:
        with self._lock:
            return list(self.events)

    def record(self, event: ProgressEvent) -> None:
        """The progress callback to hand to the work (called from its thread)."""
        with self._lock:
            self.events.append(event)

    def launch(self, name: str) -> None:
        self.thread = threading.Thread(target=self._target, name=name, daemon=True)
        self.thread.start()

    def _work(self) -> None:
        raise NotImplementedError

    def _target(self) -> None:
        try:
            self._work()
        except RTError as exc:  # e.g. validation; a run itself records its stage errors
            self.error = exc
        except Exception as exc:  # shown to the user; the thread must not die silently
            self.unexpected = f"{type(exc).__name__}: {exc}"


@dataclass(kw_only=True)
class Job(BackgroundJob):
    simulation: Simulation
    # The hash of the owner token of the browser that started the run (rt_core.access), so
    # the rule knows it while the run's row is not written yet; '' for the command line.
    owner_hash: str = field(default="", repr=False)
    kind: str = "run"  # "revise": more rounds for a finished run (start_revision)

    @property
    def run(self) -> Run:
        return self.simulation.run

    @property
    def run_id(self) -> str:
        return self.simulation.run.id

    def cancel(self) -> None:
        self.simulation.cancel.set()

    def _work(self) -> None:
        self.simulation.run_sync()


# Every job of this process by run id, so any browser session (a refresh is a new one, a
# shared link another) can find a live run's progress. Finished jobs stay for a while:
# a page that polled a run until its end still reads the final events.
_LIVE: OrderedDict[str, Job] = OrderedDict()
_LIVE_LOCK = threading.Lock()
KEEP_FINISHED = 50


def register(job: Job) -> None:
    with _LIVE_LOCK:
        _LIVE[job.run_id] = job
        _LIVE.move_to_end(job.run_id)
        finished = [rid for rid, j in _LIVE.items() if j.done]
        for rid in finished[:max(0, len(finished) - KEEP_FINISHED)]:
            del _LIVE[rid]


def live(run_id: str) -> Job | None:
    """The job of a run started in this process (running or recently finished), or None;
    None too for a finished job whose run was deleted since (`present`)."""
    with _LIVE_LOCK:
        job = _LIVE.get(run_id or "")
    return present(job)


def present(job: Job | None) -> Job | None:
    """The job, unless it has finished and its run's row is gone. The store is the truth: a
    run deleted by any process (another app server's History) must read as no such run on
    this server too, not as a ghost kept by this table until a restart. A running job counts
    while its row is not written yet; a finished one whose row is missing is dropped here."""
    if job is None or not job.done:
        return job
    store = getattr(job.simulation, "store", None)
    if store is None or store.runs.exists(job.run_id):
        return job
    with _LIVE_LOCK:
        if _LIVE.get(job.run_id) is job:
            del _LIVE[job.run_id]
    return None


def start(request: RunRequest, store: Store, embedder: Embedder | None = None,
          resume_id: str | None = None, owner_hash: str = "") -> Job:
    """Build the simulation now (it validates, so bad input fails in the caller), then
    run it in a thread. With resume_id, the stored run is resumed under its own id (and
    keeps the owner it has); a new run is stored with `owner_hash`, its browser's."""
    job = Job(simulation=None, owner_hash=owner_hash)  # type: ignore[arg-type]
    if resume_id is not None:
        store = store.for_run(resume_id)  # its owner's records, whoever resumes it
    job.simulation = Simulation(request, store, embedder=embedder, on_progress=job.record,
                                run_id=resume_id, resume=resume_id is not None)
    job.simulation.start()
    if resume_id is not None:
        job.owner_hash = store.runs.owner_hash(resume_id) or ""
    job.simulation.state.recorder.owner_hash = owner_hash
    register(job)
    job.launch(f"rt-run-{job.run_id}")
    return job


def start_revision(store: Store, run_id: str, extra: int, **kw) -> Job:
    """More revision rounds for a finished run (run/revise_more.py) in a thread, found by
    `live` like any other job, so a refresh keeps its progress. Bad input (no reviews, too
    many rounds, an estimate over the cap) fails here, in the caller."""
    job = Job(simulation=None, kind="revise", owner_hash=store.runs.owner_hash(run_id) or "")  # type: ignore[arg-type]
    job.simulation = revise_more.simulation(store.for_run(run_id), run_id, extra,
                                            on_progress=job.record, **kw)
    register(job)
    job.launch(f"rt-revise-{job.run_id}")
    return job
