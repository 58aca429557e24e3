"""One stage's agents, run together: each result kept the moment it arrives.

Independent agent calls within a stage run concurrently, except on the one
in-process model, where they run one after another so each agent's calls extend the
same prompt and llama.cpp reuses its evaluated prefix. A failed agent is recorded and
the others go on; a cancel or an unreachable server stops the siblings too (they
would all fail alike), after what finished has been kept. A budget used up
(run.budget) stops every agent at its next fresh call: the calls in flight finish and
are kept, then the stage raises it.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ...errors import BudgetExceeded, CancelledRun, Unreachable
from ...models.client import agent_calls
from .recorder import Recorder

Job = tuple[str, Callable[[], Awaitable]]


async def gather(recorder: Recorder, stage: str, jobs: list[Job], keep: Callable[[str, object], None],
                 describe: Callable[[object], str] = lambda r: "", serial: bool = False,
                 part: str = "") -> None:
    """Run (agent, job) pairs; keep(agent, result) as each finishes; progress under `stage`.
    `part`: the run's record that keep writes (through `Recorder.keep`, so a failure keeps
    it); '' when keep only collects into the stage's own output."""
    total = len(jobs)
    counter = {"done": 0}
    over: list[BudgetExceeded] = []

    async def one(agent: str, job) -> None:
        recorder.emit(stage, agent, counter["done"], total, "started")
        calls = [0]
        token = agent_calls.set(calls)
        try:
            value = await job()
        except BudgetExceeded as exc:  # the siblings finish their calls in flight
            over.append(exc)
            recorder.emit(stage, agent, counter["done"], total, "failed", str(exc))
            return
        except (CancelledRun, Unreachable):  # nothing listens: the siblings would fail alike
            raise
        except Exception as exc:  # recorded and shown; the stage carries on
            recorder.fail(stage, agent, exc)
            counter["done"] += 1
            recorder.emit(stage, agent, counter["done"], total, "failed", str(exc))
            return
        finally:
            agent_calls.reset(token)
        if part:
            recorder.keep(part, lambda: keep(agent, value))
        else:
            keep(agent, value)
        counter["done"] += 1
        # "cached": finished without a single model call (cache or stored profile)
        recorder.emit(stage, agent, counter["done"], total, "done" if calls[0] else "cached",
                      describe(value))

    if serial:
        for a, j in jobs:
            await one(a, j)
    else:
        tasks = [asyncio.ensure_future(one(a, j)) for a, j in jobs]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:  # one agent found the server unreachable, or a cancel
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    if over:
        raise over[0]
