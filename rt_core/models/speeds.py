"""How fast a model answers on this machine, measured from the calls it made.

Why measured and not declared: the embedded model reads and writes at very different
speeds on a quiet laptop and on a busy 2-core server (docs/PERFORMANCE.md: 39 against
5 tokens a second written), and a provider's latency is the provider's. A time stated
before Start is only worth reading if it comes from this machine, so every call that
reaches a model leaves one row (its tokens and wall seconds; store/speeds.py) and an
estimate reads the newest ones.

One call is modelled as

    seconds = per_call + prompt_tokens * per_read + completion_tokens * per_write

- The embedded model (llama.cpp) times its own work: the client hands it a holder
  (`local.split_timing`) and it fills in the seconds spent reading the prompt and writing. So
  `per_read` and `per_write` are its own prompt-read and generation speeds (the prompt
  tokens as the run counts them, so llama.cpp's reuse of a shared prefix is in the
  figure), and `per_call` is what is left (tokenising, sampling, the client).
- A provider gives no split. Its time is fitted as `per_call + completion * per_write`
  by least squares: a hosted model reads the prompt far faster than it writes, and
  the round trip is the large fixed part. Too few or too similar calls for a slope:
  the mean time of a call.

With no call recorded yet, the embedded model is measured by a short calibration
(`calibrate`: two small calls, the second kept like any other call); a provider is not called just to be
timed (it costs money): its time is unknown until its first run.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from ..store.speeds import CallTime
from . import local, registry
from .completion import Completion

log = logging.getLogger(__name__)
RECENT = 200  # calls a fit reads: recent enough to follow the machine's load



@dataclass(frozen=True)
class Speed:
    """Seconds per call, per prompt token read and per token written, and from what."""
    per_call: float
    per_read: float
    per_write: float
    calls: int  # calls measured
    calibrated: bool = False  # only the calibration call: the first run will say more

    def seconds(self, calls: int, prompt_tokens: int, completion_tokens: int) -> float:
        return calls * self.per_call + prompt_tokens * self.per_read + completion_tokens * self.per_write

    def source(self) -> str:
        """Where the figure comes from, in words."""
        if self.calibrated:
            return "from a short calibration on this machine"
        return f"from {self.calls} call{'s' * (self.calls != 1)} measured on this machine"


def fit(calls: list[CallTime]) -> Speed | None:
    """The speed the recorded calls show (None: nothing recorded)."""
    if not calls:
        return None
    only_calibration = all(c.calibration for c in calls)
    split_calls = [c for c in calls if c.read_seconds is not None and c.write_seconds is not None]
    if split_calls:
        return _from_split(split_calls, only_calibration)
    return _fitted(calls, only_calibration)


def _from_split(calls: list[CallTime], calibrated: bool) -> Speed:
    """The engine's own reading and writing times, summed over the calls (a ratio of sums,
    so short calls weigh what they cost, not one vote each)."""
    read = sum(c.read_seconds or 0.0 for c in calls)
    write = sum(c.write_seconds or 0.0 for c in calls)
    prompt = sum(c.prompt_tokens for c in calls)
    written = sum(c.completion_tokens for c in calls)
    rest = sum(max(0.0, c.seconds - (c.read_seconds or 0.0) - (c.write_seconds or 0.0)) for c in calls)
    return Speed(rest / len(calls), read / prompt if prompt else 0.0, write / written if written else 0.0,
                 len(calls), calibrated)


def _fitted(calls: list[CallTime], calibrated: bool) -> Speed:
    """Least squares of seconds on tokens written; the mean call when no slope shows."""
    n = len(calls)
    xs = [c.completion_tokens for c in calls]
    ys = [c.seconds for c in calls]
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0
    if slope <= 0 or my - slope * mx < 0:
        return Speed(my, 0.0, 0.0, n, calibrated)
    return Speed(my - slope * mx, 0.0, slope, n, calibrated)


def measured(store, model: str) -> Speed | None:
    """The model's speed from the store's newest calls; None without a store or calls."""
    if store is None:
        return None
    return fit(store.call_speeds.recent(model, RECENT))


def begin() -> dict:
    """A fresh holder for the engine's split of the next call (`local.split_timing`)."""
    holder: dict = {}
    local.split_timing.set(holder)
    return holder


def record(store, model: str, reply: Completion, seconds: float, holder: dict | None = None) -> None:
    """Keep one call's time. A reply with no tokens counted (a provider that reports no
    usage) says nothing about speed per token and is left out."""
    if store is None or (reply.prompt_tokens + reply.completion_tokens) == 0:
        return
    holder = holder or {}
    try:
        store.call_speeds.add(model, CallTime(reply.prompt_tokens, reply.completion_tokens, seconds,
                                              holder.get("read"), holder.get("write")))
    except Exception:  # a busy or unreachable store: the reply matters more than its timing
        log.debug("could not keep a call's time", exc_info=True)


# The calibration documents, in plain words: a start of ordinary length, then the same
# start with a few more lines, as the base-model prompts grow within a run (each shares
# most of its text with the call before, which llama.cpp does not read again: about one
# prompt token in six was new in a traced run, docs/PERFORMANCE.md).
_CALIBRATION_TEXT = ("A research group studies how galaxies formed and how language models read "
                     "scientific papers. They plan a joint project, list their data and methods, "
                     "and write the questions the project should answer.\n")
CALIBRATION_PROMPT = _CALIBRATION_TEXT * 8 + "The first question of the project is"
CALIBRATION_MORE = "\n" + _CALIBRATION_TEXT * 2 + "The second question of the project is"
CALIBRATION_TOKENS = 24


def calibrate(store, model: str) -> Speed | None:
    """Two small calls to the embedded model, the second timed and kept, when it has no
    speed yet. The first warms the engine and leaves the prefix the second shares, as a
    run's calls do; the time to load the model is not counted (paid once per process).
    Only for a model that runs in this process; a provider is never called only to be timed."""
    if store is None or not registry.in_process(model) or registry.provider_of(model) != "local":
        return measured(store, model)
    eng = local.engine(registry.model_name(model))
    params = {"max_tokens": CALIBRATION_TOKENS, "temperature": 0.0}
    first = eng.complete(CALIBRATION_PROMPT, params)  # untimed: a fresh engine's first call is slow
    holder = begin()
    started = time.perf_counter()
    out = eng.complete(CALIBRATION_PROMPT + first["choices"][0]["text"] + CALIBRATION_MORE, params)
    seconds = time.perf_counter() - started
    usage = out.get("usage") or {}
    store.call_speeds.add(model, CallTime(int(usage.get("prompt_tokens", 0)),
                                          int(usage.get("completion_tokens", 0)), seconds,
                                          holder.get("read"), holder.get("write"), calibration=True))
    return measured(store, model)
