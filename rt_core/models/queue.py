"""The first-come queue in front of a model served one call at a time (the embedded
model): runs take turns, and a waiting run knows its place and roughly when it starts.
The registry hands it out (`registry.queue_for`); nothing else creates one."""
from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class QueuePlace:
    """Where one run stands: 0 runs ahead means it has the model."""
    ahead: int
    eta_s: float  # estimated seconds until it starts (0 when running)


class ModelQueue:
    """First come, first served access to the in-process model, one run at a time.

    Runs on a 270M model interleaved call by call would all finish late; served one after
    another, the first visitor is done soon and each later one knows its place and roughly
    when it starts. The estimate is the median of recent run durations (a default before
    the first run finishes) minus what the current run has used so far."""

    DEFAULT_RUN_S = 45.0

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._cond = threading.Condition()
        self._line: list[str] = []  # [holder, waiting...]
        self._started = 0.0
        self._durations: deque[float] = deque(maxlen=9)

    def join(self, ticket: str) -> None:
        with self._cond:
            if ticket not in self._line:
                self._line.append(ticket)
                if len(self._line) == 1:
                    self._started = self._clock()

    def wait_turn(self, ticket: str, timeout: float) -> bool:
        """Block up to timeout for the ticket's turn; True once it holds the model."""
        with self._cond:
            return self._cond.wait_for(lambda: self._line[:1] == [ticket], timeout)

    def leave(self, ticket: str) -> None:
        with self._cond:
            if ticket not in self._line:
                return
            if self._line[0] == ticket:
                self._durations.append(self._clock() - self._started)
                self._started = self._clock()
            self._line.remove(ticket)
            self._cond.notify_all()

    def typical_run_s(self) -> float:
        with self._cond:
            return statistics.median(self._durations) if self._durations else self.DEFAULT_RUN_S

    def place(self, ticket: str) -> QueuePlace | None:
        with self._cond:
            if ticket not in self._line:
                return None
            ahead = self._line.index(ticket)
            if ahead == 0:
                return QueuePlace(0, 0.0)
            typical = statistics.median(self._durations) if self._durations else self.DEFAULT_RUN_S
            left_for_holder = max(typical * 0.1, typical - (self._clock() - self._started))
            return QueuePlace(ahead, left_for_holder + typical * (ahead - 1))


_queues: dict[str, ModelQueue] = {}
_queues_lock = threading.Lock()


def model_queue(model: str) -> ModelQueue:
    """The queue in front of one in-process model (one per model string)."""
    with _queues_lock:
        return _queues.setdefault(model, ModelQueue())
