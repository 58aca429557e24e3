"""How fast a model answers on this machine, measured from the calls it made.

Why measured and not declared: the embedded model reads and writes at very different
speeds on a quiet laptop and on a busy 2-core server (docs/PERFORMANCE.md: 39 against
5 tokens a second written), and a provider's latency is the provider's. A time stated
before Start is only worth reading if it comes from this machine, so every call that
reaches a model leaves one row (its tokens and wall seconds, timed by the client;
store/speeds.py) and an estimate reads the newest ones.

One call is modelled as

    seconds = per_call + prompt_tokens * per_read + completion_tokens * per_write

fitted by least squares to the newest calls, every coefficient at least zero (a term
that would come out negative is dropped and the rest fitted again). `per_read` and
`per_write` are then the model's own prompt-reading and writing speeds as this machine's
calls show them: for the embedded model, with llama.cpp's reuse of shared prefixes and
its batching of calls that arrive together in the figures (models/local_batch.py: a
call's time is its time in the batch it shared); for a provider, mostly the round trip
(`per_call`) and the tokens written.

With no call recorded yet, the embedded model is measured by a short calibration
(`calibrate`: a warm-up, then one call that mostly reads and one that mostly writes,
with no shared prefix, so its first estimate errs long; the runs after it correct it);
a provider is not called just to be timed (it costs money): its time is unknown until
its first run.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from . import registry
from .completion import Completion

log = logging.getLogger(__name__)
RECENT = 200  # calls a fit reads: recent enough to follow the machine's load
# The terms tried, in order, until the calls tell them apart with no negative one: a
# provider's prompts of one length cannot separate reading from the round trip, and
# two calibration calls carry no per-call term.
TERMS = (("call", "read", "write"), ("call", "write"), ("read", "write"), ("call", "read"),
         ("write",), ("read",))


@dataclass(frozen=True)
class CallTime:
    """One call: its tokens and its wall seconds (calibration: made only to be timed)."""
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    calibration: bool = False


@dataclass(frozen=True)
class Speed:
    """Seconds per call, per prompt token read and per token written, and from what."""
    per_call: float
    per_read: float
    per_write: float
    calls: int  # calls measured
    calibrated: bool = False  # only the calibration: the first run will say more

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
    calibrated = all(c.calibration for c in calls)
    if calibrated:
        return _fit_calibration(calls)
    for terms in TERMS:
        if len(terms) > len(calls):
            continue
        coef = _least_squares(calls, terms)
        if coef is not None and min(coef.values()) >= -1e-9:  # rounding, not a negative speed
            coef = {t: max(0.0, v) for t, v in coef.items()}
            return Speed(coef.get("call", 0.0), coef.get("read", 0.0), coef.get("write", 0.0),
                         len(calls), calibrated)
    mean = sum(c.seconds for c in calls) / len(calls)
    return Speed(mean, 0.0, 0.0, len(calls), calibrated)


def _fit_calibration(calls: list[CallTime]) -> Speed:
    """The calibration's calls are made to tell reading from writing, and there are only
    two: a per-call term would fit them exactly and leave reading unknown (which a loaded
    machine made happen), so they are fit on reading and writing alone."""
    coef = _least_squares(calls, ["read", "write"])
    if coef is None:
        mean = sum(c.seconds for c in calls) / len(calls)
        return Speed(mean, 0.0, 0.0, len(calls), True)
    return Speed(0.0, max(0.0, coef["read"]), max(0.0, coef["write"]), len(calls), True)


def _least_squares(calls: list[CallTime], terms: list[str]) -> dict[str, float] | None:
    """Seconds on the chosen terms; None when the calls cannot tell them apart."""
    import numpy as np  # noqa: PLC0415  (slow; the app and a run have it loaded)

    column = {"call": lambda c: 1.0, "read": lambda c: float(c.prompt_tokens),
              "write": lambda c: float(c.completion_tokens)}
    x = np.array([[column[t](c) for t in terms] for c in calls])
    y = np.array([c.seconds for c in calls])
    if np.linalg.matrix_rank(x) < len(terms):
        return None
    solution = np.linalg.lstsq(x, y, rcond=None)[0]
    return {t: float(v) for t, v in zip(terms, solution, strict=True)}


def record(store, model: str, reply: Completion, seconds: float) -> None:
    """Keep one call's time. A reply with no tokens counted (a provider that reports no
    usage) says nothing about speed per token and is left out."""
    if store is None or (reply.prompt_tokens + reply.completion_tokens) == 0:
        return
    try:
        store.call_speeds.add(model, CallTime(reply.prompt_tokens, reply.completion_tokens, seconds))
    except Exception:  # a busy or unreachable store: the reply matters more than its timing
        log.debug("could not keep a call's time", exc_info=True)


# The calibration documents, in plain words: a document of ordinary length, read with one
# token written, and a short one continued for a line.
_CALIBRATION_TEXT = ("A research group studies how galaxies formed and how language models read "
                     "scientific papers. They plan a joint project, list their data and methods, "
                     "and write the questions the project should answer.\n")
CALIBRATION_PROMPT = _CALIBRATION_TEXT * 8 + "The first question of the project is"
CALIBRATION_SHORT = "Notes of a meeting about telescopes and text. The plan they agreed on was"
CALIBRATION_TOKENS = 24


def calibratable(model: str) -> bool:
    """Only the embedded model, run in this process, is measured by a calibration; a
    provider is never called only to be timed (it costs money)."""
    return registry.in_process(model) and registry.provider_of(model) == "local"


def calibrate(model: str) -> list[CallTime]:
    """When the embedded model has no speed yet: a warm-up call, then two timed calls (one
    that mostly reads, one that mostly writes), so the first estimate has both speeds; the
    caller keeps them like any other call. The time to load the model is not counted (paid
    once per process)."""
    from . import local  # noqa: PLC0415  (loads llama.cpp: only when asked)

    eng = local.engine(registry.model_name(model))
    eng.complete("Calibration. " + _CALIBRATION_TEXT, {"max_tokens": 4, "temperature": 0.0})
    timed = []
    for prompt, tokens in ((CALIBRATION_PROMPT, 1), (CALIBRATION_SHORT, CALIBRATION_TOKENS)):
        started = time.perf_counter()
        out = eng.complete(prompt, {"max_tokens": tokens, "temperature": 0.0})
        usage = out.get("usage") or {}
        timed.append(CallTime(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)),
                              time.perf_counter() - started, calibration=True))
    return timed
