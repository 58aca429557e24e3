"""A steer in a background thread, so the page that asked for it stays usable.

On the embedded model a steer takes as long as a run's reviews (and its revision
rounds), and a page that waited for it under a spinner was blocked the whole time and
lost it on a reload. A SteerJob is a BackgroundJob (run/pipeline/jobs.py): the steer
runs in its own thread, its progress events pile up for a page to poll, and the jobs of
this process are kept by run id so any browser session (a reload is a new one) finds a
live steer again. The steer stores its nodes before the job ends, so a finished job's
version is in the run's tree for every page that reads it.

Everything that can be refused is refused in the caller, before the thread starts: the
steer itself (steer.check), a second steer of a run that is being steered, and the keys
of the request (made here, in the page's session, which the thread cannot read).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import InputError
from ...store import Store
from ...types import RunConfig, RunRequest
from ..pipeline.jobs import KEEP_FINISHED, BackgroundJob
from ..pipeline.timing import Expected
from . import table
from .cost import steer_expected
from .steer import Steer, Steered, check, rounds_of, steer
from .tree import YOU


@dataclass(kw_only=True)
class SteerJob(BackgroundJob):
    store: Store
    run_id: str
    wish: Steer
    config: RunConfig
    request: RunRequest
    steps: int = 1  # the reviews, meta-reviews and rewrites a steer of this size makes
    steered: Steered | None = None
    expected: Expected | None = None  # its wall time, said while it runs (None: not estimated)

    def _work(self) -> None:
        self.steered = steer(self.store, self.run_id, self.wish, config=self.config,
                             request_for=lambda _config: self.request, on_progress=self.record)

    def steps_done(self) -> int:
        """Steps finished so far (each one reports once as done, cached or failed)."""
        return sum(1 for e in self.snapshot() if e.status != "started")


def steps_of(reviewers: int, rounds: int) -> int:
    """A review per reviewer and a meta-review for the user's version and each round,
    and the authors' rewrite in each round."""
    return (reviewers + 1) * (rounds + 1) + rounds


_LIVE: OrderedDict[str, SteerJob] = OrderedDict()
_LOCK = threading.Lock()


def live(run_id: str) -> SteerJob | None:
    """The last steer of this run started in this process (running or finished), or None."""
    with _LOCK:
        return _LIVE.get(run_id or "")


def start(store: Store, run_id: str, wish: Steer, config: RunConfig | None = None,
          request_for: Callable[[RunConfig], RunRequest] = RunRequest) -> SteerJob:
    """Check the steer, then run it in a thread; one clear message (InputError, NotFoundError)
    for a steer that cannot go, raised here."""
    store = store.for_run(run_id)  # the records its owner's browser sees (rt_core.access)
    run = store.runs.load(run_id)
    tree = table.tree_of(store, run)
    parent = check(run, tree, wish)
    config = config or run.config
    reviewers = len({r.reviewer_id for r in tree.path(parent.id)[0].reviews if r.reviewer_id != YOU})
    job = SteerJob(store=store, run_id=run_id, wish=wish, config=config, request=request_for(config),
                   steps=steps_of(reviewers, rounds_of(wish)),
                   expected=steer_expected(config, reviewers, rounds_of(wish), store))
    with _LOCK:
        running = _LIVE.get(run_id)
        if running is not None and not running.done:
            raise InputError(f"run {run_id} is being steered already",
                             "Wait until that steer is done: its version then appears in the tree.")
        _LIVE[run_id] = job
        _LIVE.move_to_end(run_id)
        finished = [rid for rid, j in _LIVE.items() if j.done]
        for rid in finished[:max(0, len(finished) - KEEP_FINISHED)]:
            del _LIVE[rid]
        job.launch(f"rt-steer-{run_id}")
    return job
