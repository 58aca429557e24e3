"""The run's record in the store: created once, saved after each stage, released at the end.

A run is written by exactly one simulation at a time. The first save creates the row
(or, resuming, claims it) under this simulation's lease, and later saves go over the
row's version; a run deleted from History while it is going therefore does not come
back, and a run taken over by another process is left to it (the caller still gets
its run object). Progress and stage errors are recorded here too: they are what the
user sees of the run while it goes, and a broken display must never break the run.
`keep` is the one route by which a stage writes the run while it goes: an agent's output
as it arrives, so a failure keeps what finished (tests/test_stage_outputs.py holds every
stage of every plan to that).
"""
from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable

from ... import redact
from ...errors import RTError
from ...store import Store
from ...store.runs import RunConflict
from ...types import ProgressEvent, Run, StageError


class Recorder:
    def __init__(self, store: Store, run: Run, resume: bool,
                 on_progress: Callable[[ProgressEvent], None], notes: list[str]):
        """`notes`: the client's notes (cut abstracts, dropped parameters), merged into the
        run's at every save."""
        self.store = store
        self.run = run
        self.resume = resume
        self.on_progress = on_progress
        self.notes = notes
        self.lease = uuid.uuid4().hex
        self._created = False
        self._gone = False  # the row was deleted or taken over: stop writing it
        self.owner_hash = ""  # whose browser started it (rt_core.access); set before the first save

    def emit(self, stage: str, agent: str, done: int, total: int, status: str = "done",
             partial: str = "") -> None:
        with contextlib.suppress(Exception):  # a broken display must not break the run
            self.on_progress(ProgressEvent(stage, agent, done, total, status, partial[:300]))

    def keep(self, part: str, write: Callable[[], None]) -> None:
        """An agent's output the moment it arrives, written on the run's `part` (`profiles`,
        `reviews`, `candidates`, `rounds`, `proposal` for the drafts until the merge) by `write`:
        the one way a stage touches the run before it ends, so a stage that fails or is
        cancelled keeps what its agents finished. Everything else a stage makes is its
        returned output, which the runner folds in when it ends (run/pipeline/state.py)."""
        write()

    def meter(self, embedding_tokens: int) -> None:
        """The embedder's tokens a stage spent, added to the run's usage the way the model
        client adds each call's: usage is a meter the budget reads while the run goes, not a
        stage's output, so it is counted as the work is done rather than folded at the end."""
        self.run.usage.prompt_tokens += embedding_tokens

    def fail(self, stage: str, agent: str, exc: Exception) -> None:
        """Record one agent's (or the run's) failure with its hint, for the user."""
        hint = getattr(exc, "hint", "") or ""
        kind = exc.kind if isinstance(exc, RTError) else type(exc).__name__
        self.run.errors.append(StageError(stage, agent, kind, redact.hide(str(exc)), redact.hide(hint),
                                          redact.hide(getattr(exc, "app_hint", "") or "")))

    def save(self) -> None:
        """Create or claim the row on the first call (a conflict is raised: the id is taken,
        or the run was resumed elsewhere); afterwards update it, and stop quietly once it
        is gone."""
        self.run.notes = list(dict.fromkeys([*self.run.notes, *self.notes]))
        if self._gone:
            return
        runs = self.store.runs
        if not self._created:
            self._created = True
            if not self.resume:
                runs.create(self.run, lease=self.lease, owner_hash=self.owner_hash)
                return
            self.run.version = runs.claim(self.run.id, self.lease).version
        try:
            if not runs.save(self.run, create=False, lease=self.lease):
                self._gone = True
        except RunConflict:  # taken over elsewhere: the caller still gets the run object
            self._gone = True

    def release(self) -> None:
        """Give up the lease (the heartbeat stops claiming the row)."""
        self.store.runs.release(self.lease)
