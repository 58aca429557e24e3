"""A model with no call recorded yet, timed by a short calibration; and the speed a caller
reads (`speed_for`): the calls the store keeps, else the calibration.

Why apart from models/speeds.py: that module says what recorded calls show (the fit, the
calls in flight, the crowding), whoever made them; this one makes calls only to be timed,
and so owns what that needs: which models may be timed (`calibratable`), the lock that
makes a caller wait for a calibration under way instead of reading an empty store, the
calibration kept per machine (models/machine_speeds.py) and the calls themselves.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

from . import machine_speeds, registry, speeds
from .speeds import CallTime, Speed


# -- the speed a model shows here: the calls the store keeps, else a calibration ----------------
def speed_for(model: str, store, calibrate: bool = False,
              before_measuring: Callable[[], object] | None = None,
              calibrates: bool | None = None) -> Speed | None:
    """The speed this model's calls on this machine show (None without a store or calls:
    `speed_calls` says which calls); with calibrate=True, an embedded model with none is
    measured now and its calibration calls kept like any other, `before_measuring` called
    first (a run waits there for its warm-up: see `calls_or_calibration`).

    A calibration takes a few seconds, and whoever asks for the speed meanwhile waits for
    it rather than reading an empty store: in the app, a click on Start while "Measure this
    machine's speed" ran began a new script run at once (Streamlit's fast reruns) that read
    no speed and started the run without an estimate (3 of 4 browser walks).

    `calibrates`: whether the model may be timed, as a run's facts say (models/facts.py);
    None asks the registry (a page that shows a speed has no run)."""
    if store is None:
        return None
    return speeds.fit(calls_or_calibration(
        model, lambda: speeds.speed_calls(model, store), lambda call: store.call_speeds.add(model, call), calibrate,
        before_measuring, calibrates))


# The calibration documents, in plain words. A run's calls share their material: of the
# prompt tokens the embedded model was sent in measured runs (the app's default, credit),
# a fifth to a quarter were read afresh and the rest copied from a sequence that held
# them (models/local_batch.py). So the call that mostly reads opens with the head the
# warm-up left in the cache and reads afresh about a quarter of its tokens, as a run's
# call does; the other is continued for a line, as a run's calls are.
_CALIBRATION_TEXT = ("A research group studies how galaxies formed and how language models read "
                     "scientific papers. They plan a joint project, list their data and methods, "
                     "and write the questions the project should answer.\n")
CALIBRATION_HEAD = _CALIBRATION_TEXT * 6
# Two tails, one per round: a prompt read once is held whole the second time.
CALIBRATION_PROMPTS = tuple(
    CALIBRATION_HEAD + f"Their second meeting was about {topics}, and which of them the group knows "
    "least about.\nThe first question of the project is"
    for topics in ("ocean currents, crop yields and solar flares", "protein folding, river deltas and bird song"))
CALIBRATION_SHORT = "Notes of a meeting about telescopes and text. The plan they agreed on was"
CALIBRATION_TOKENS = 24
CALIBRATION_ROUNDS = len(CALIBRATION_PROMPTS)  # the faster of two of each call: one may land on
# the engine's probe of its other thread count (models/local.py, ThreadChooser)


def calibratable(model: str) -> bool:
    """Only a model that declares it may be called just to be timed (the embedded model:
    in this process, free) is measured by a calibration; a provider is never called only
    to be timed (it costs money), nor is the scripted model (it has no speed to measure)."""
    return registry.capabilities(model).calibrates


_calibration_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def calibration_lock(model: str) -> threading.Lock:
    """The lock held while this model is calibrated and its calls stored, one per model and
    process (the app's pages and its runs share it): whoever needs the speed meanwhile
    waits for it (`speed_for`)."""
    with _locks_guard:
        return _calibration_locks.setdefault(model, threading.Lock())


def calibrating(model: str) -> bool:
    """Whether this model is being calibrated now (a page says so while it waits)."""
    return calibration_lock(model).locked()


def calls_or_calibration(model: str, read: Callable[[], list[CallTime]], keep: Callable[[CallTime], None],
                         measure: bool, before_measuring: Callable[[], object] | None = None,
                         calibrates: bool | None = None) -> list[CallTime]:
    """The calls `read` finds; while none, an embedded model's calibration under way is
    waited for, then the one this machine kept (read only: a store is not written by a
    page that only asks), and with measure=True one is made, each call given to `keep`
    and the whole kept for the machine's next fresh store.

    `before_measuring` is called only when a calibration is about to be made, the one place
    that knows it will be: a run hands in its wait for the warm-up there. A calibration
    times the model alone (with litellm's import beside it, one core of Python, the engine's
    two threads waited on each other: 3.3 s instead of 1.2 s), while a model timed already
    is not waited for, so a door prints its estimate at once."""
    calls = read()
    if calls or not (calibratable(model) if calibrates is None else calibrates):
        return calls
    with calibration_lock(model):
        calls = read()  # those of the calibration just waited for, if there was one
        if not calls:  # this machine's, made for another store (models/machine_speeds.py)
            calls = _kept_calibration(model)
        if not calls and measure:
            if before_measuring is not None:
                before_measuring()
            made = calibrate(model)
            for call in made:
                keep(call)
            machine_speeds.keep(model, [dataclasses.asdict(c) for c in made])
            calls = read()
    return calls


def _kept_calibration(model: str) -> list[CallTime]:
    try:
        return [CallTime(**c) for c in machine_speeds.read(model)]
    except TypeError:  # written by another layout: time the model again
        return []


def calibrate(model: str) -> list[CallTime]:
    """When the embedded model has no speed yet: a warm-up call, then two timed calls (one
    that mostly reads, one that mostly writes), each made twice and the faster kept, so
    the first estimate has both speeds; the caller keeps them like any other call, with
    when each ended (they ran one at a time). The time to load the model is not counted
    (paid once per process)."""
    from . import local  # noqa: PLC0415  (loads llama.cpp: only when asked)

    eng = local.engine(registry.model_name(model))
    eng.complete(CALIBRATION_HEAD + "Calibration.", {"max_tokens": 4, "temperature": 0.0})
    timed = []
    for prompts, tokens in ((CALIBRATION_PROMPTS, 1), ((CALIBRATION_SHORT,) * CALIBRATION_ROUNDS,
                                                        CALIBRATION_TOKENS)):
        tries = []
        for prompt in prompts:
            started = time.perf_counter()
            out = eng.complete(prompt, {"max_tokens": tokens, "temperature": 0.0})
            usage = out.get("usage") or {}
            tries.append(CallTime(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)),
                                  time.perf_counter() - started, calibration=True, at=time.time()))
        timed.append(min(tries, key=lambda c: c.seconds))
    return timed
