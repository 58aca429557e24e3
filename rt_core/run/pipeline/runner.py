"""Runs any plan: each stage as soon as the stages it needs have finished.

The runner knows nothing of what stages do. Stages that need nothing from each other
run at the same time; the first failure stops the plan (stages still going are
cancelled and awaited, so nothing runs on after the plan returns) and is raised to
the caller, which knows what a failure means for its run. `on_start` and `on_end`
let the caller time and save around every stage, whether it finished or failed.
`admit(stage)` may refuse a stage before it starts (the budget, run.budget): then no
further stage starts, the stages going finish, and the refusal is raised; `skipped`
names the stages that never ran. A stage returns its output; `fold` takes it into the
state as the stage ends, before `on_end` (which saves the run) is called.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import costs


@dataclass(frozen=True)
class Stage:
    """One step of a plan: what it does, which stages it waits for, and what it costs."""
    name: str
    # A function of the run's state (run/pipeline/state.py's RunState; a replay's own stages
    # take the Replay): it reads what the stages it needs handed on and returns its own
    # output, which the runner folds into the state (None: nothing to fold).
    action: Callable[[Any], Awaitable[Any]]
    needs: tuple[str, ...] = ()
    group: str | None = None  # the progress bar it belongs to; None: not shown
    saves: bool = True  # the run is saved when it ends (False: it changed nothing stored)
    # Its calls and tokens for a run's sizes (run.costs): the estimate before Start and
    # what the budget checks before the stage starts.
    estimate: Callable[[costs.Sizes], costs.Calls] = costs.nothing


def check(plan: Sequence[Stage]) -> None:
    """A plan names each stage once and needs only earlier stages (so it cannot deadlock)."""
    seen: set[str] = set()
    for s in plan:
        if s.name in seen:
            raise ValueError(f"stage '{s.name}' appears twice in the plan")
        missing = [n for n in s.needs if n not in seen]
        if missing:
            raise ValueError(f"stage '{s.name}' needs {', '.join(missing)}, which no earlier stage is")
        seen.add(s.name)


class Runner:
    def __init__(self, plan: Sequence[Stage], state: Any,
                 on_start: Callable[[Stage], None] = lambda s: None,
                 on_end: Callable[[Stage, float], None] = lambda s, seconds: None,
                 admit: Callable[[Stage], None] = lambda s: None,
                 fold: Callable[[Any], None] = lambda output: None):
        check(plan)
        self.plan = list(plan)
        self.state = state
        self.on_start = on_start
        self.on_end = on_end
        self.admit = admit
        self.fold = fold  # takes a stage's output into the state
        self.failed: Stage | None = None  # the stage whose failure stopped the plan
        self.finished: list[str] = []
        self.skipped: list[str] = []  # stages that never ran because the plan stopped

    async def _one(self, stage: Stage) -> None:
        started = time.perf_counter()
        try:
            self.fold(await stage.action(self.state))
        except BaseException:
            if self.failed is None:
                self.failed = stage
            raise
        finally:
            self.on_end(stage, time.perf_counter() - started)

    async def run(self) -> None:
        waiting = list(self.plan)
        finished: set[str] = set()
        going: dict[asyncio.Task, Stage] = {}
        refused: Exception | None = None
        try:
            while waiting or going:
                for stage in [s for s in waiting if set(s.needs) <= finished]:
                    try:
                        self.admit(stage)
                    except Exception as exc:  # refused: let the stages going finish
                        refused = exc
                        break
                    waiting.remove(stage)
                    self.on_start(stage)
                    going[asyncio.ensure_future(self._one(stage))] = stage
                if refused is not None:
                    self.skipped = [s.name for s in waiting]
                    waiting = []
                if not going and not waiting:
                    break
                done, _ = await asyncio.wait(going, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    stage = going.pop(task)
                    task.result()  # raises the stage's failure
                    finished.add(stage.name)
                    self.finished.append(stage.name)
        except BaseException:
            self.skipped = self.skipped or [s.name for s in waiting]
            for task in going:
                task.cancel()
            await asyncio.gather(*going, return_exceptions=True)
            raise
        if refused is not None:
            raise refused
