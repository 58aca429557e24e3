"""How fast a model answers on this machine, measured from the calls it made.

Why measured and not declared: the embedded model reads and writes at very different
speeds on a quiet laptop and on a busy 2-core server (docs/PERFORMANCE.md: 39 against
5 tokens a second written), and a provider's latency is the provider's. A time stated
before Start is only worth reading if it comes from this machine, so every call that
reaches a model leaves one row (its tokens and wall seconds, timed by the client;
store/speeds.py) and an estimate reads the newest ones (`speed_for`, models/calibration.py).

One call is modelled as

    seconds = per_call + prompt_tokens * per_read + completion_tokens * per_write

fitted by least squares to the newest calls, every coefficient at least zero (a term
that would come out negative is dropped and the rest fitted again). `per_read` and
`per_write` are then the model's own prompt-reading and writing speeds as this machine's
calls show them: for the embedded model, with llama.cpp's reuse of shared prefixes and
its batching of calls that arrive together in the figures (models/local_batch.py); for a
provider, mostly the round trip (`per_call`) and the tokens written.

A call's seconds are its wall time beside the calls that ran with it. For a provider
those calls are served apart, but the embedded model's calls share one engine, so a
run's time is not its calls' seconds over the six the engine can hold: each row also
says when the call ended, and the speed carries how many calls were measured in flight
on average (`in_flight`: one measured app-default run had 5.2, its credit 2.1) and how a
call's share of the engine grows with them (`crowding`). Summing a run's calls' seconds
over the calls in flight gives the time the engine was busy (run/pipeline/timing.py).

With no call recorded yet, the embedded model is measured by a short calibration
(`calibrate`: a warm-up, then one call that mostly reads and one that mostly writes,
each made twice and the faster kept). It measures a fresh engine, one call at a time;
a run's engine holds thousands of tokens of earlier calls that every decode attends
over, so the first estimate errs short and the runs after it correct it (the bias,
run/pipeline/timing.py). A provider is not called just to be timed (it costs money):
its time is unknown until its first run. The calibration, and `speed_for`, which reads
the calls or makes one, live in models/calibration.py: this module is what the calls say.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import logging
from dataclasses import dataclass

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
    """One call: its tokens and its wall seconds (calibration: made only to be timed), and
    when it ended (epoch seconds; None when not known), which says what ran beside it."""
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    calibration: bool = False
    at: float | None = None


@dataclass(frozen=True)
class Speed:
    """Seconds per call, per prompt token read and per token written, and from what."""
    per_call: float
    per_read: float
    per_write: float
    calls: int  # calls measured
    calibrated: bool = False  # only the calibration: the first run will say more
    # The calls the model had in flight, on average, while it had any (`in_flight`): each
    # call's seconds above are its time among them. None: the calls' times are unknown.
    at_once: float | None = None
    # How a call's share of the model grows with the calls beside it (`crowding`): 0 when
    # sharing costs nothing extra per call, 1 when a call beside k others takes k times
    # the model's time it takes alone.
    crowding: float = 0.0

    def seconds(self, calls: int, prompt_tokens: int, completion_tokens: int) -> float:
        return calls * self.per_call + prompt_tokens * self.per_read + completion_tokens * self.per_write

    def wall(self, seconds: float, at_once: float | None = None) -> float:
        """The wall time of calls that, at this speed, add up to `seconds` (each its time
        beside the others), on a model that serves one batch at a time (the embedded
        model): their sum over the calls measured in flight, and, for work that keeps
        `at_once` calls going instead, each call's share of the model as crowded as that."""
        measured = self.at_once or 1.0
        target = measured if at_once is None else max(1.0, at_once)
        return seconds / measured * (target / measured) ** self.crowding

    def engine_wall(self, stages: list[tuple[float, int]]) -> float:
        """The wall time of stages that take turns on one engine: each stage's work (its
        calls' seconds at this speed) at the crowding of its calls at once, one after another."""
        return sum(self.wall(seconds, at_once) for seconds, at_once in stages if seconds)

    def source(self) -> str:
        """Where the figure comes from, in words."""
        if self.calibrated:
            return "from a short calibration on this machine"
        return f"from {self.calls} call{'s' * (self.calls != 1)} measured on this machine"


def fit(calls: list[CallTime]) -> Speed | None:
    """The speed the recorded calls show (None: nothing recorded)."""
    if not calls:
        return None
    at_once, crowded = in_flight(calls), crowding(calls)
    if all(c.calibration for c in calls):
        return dataclasses.replace(_fit_calibration(calls), at_once=at_once, crowding=crowded)
    for terms in TERMS:
        if len(terms) > len(calls):
            continue
        coef = _least_squares(calls, terms)
        if coef is not None and min(coef.values()) >= -1e-9:  # rounding, not a negative speed
            coef = {t: max(0.0, v) for t, v in coef.items()}
            return Speed(coef.get("call", 0.0), coef.get("read", 0.0), coef.get("write", 0.0),
                         len(calls), False, at_once, crowded)
    mean = sum(c.seconds for c in calls) / len(calls)
    return Speed(mean, 0.0, 0.0, len(calls), False, at_once, crowded)


def in_flight(calls: list[CallTime]) -> float | None:
    """How many calls were going at once, on average, while any was: their seconds added
    up over the time the model was busy with at least one (the union of their intervals).

    Why it is measured and not declared: a call's recorded time is its wall time beside
    the calls it ran with, so the wall time of a run on the embedded model is the sum of
    its calls' times over this figure, not over the batch its engine can hold (six). How
    many calls really meet, and what a wide decode costs, is the run's and the machine's.
    None when the calls do not say when they ended."""
    spans = _spans(calls)
    if not spans:
        return None
    busy, end = 0.0, spans[0][0]
    for a, b in spans:
        busy += max(0.0, b - max(a, end))
        end = max(end, b)
    return max(1.0, sum(b - a for a, b in spans) / busy) if busy > 0 else None


def _timed(calls: list[CallTime]) -> list[CallTime]:
    """The calls that say when they ran, in the order they started."""
    return sorted((c for c in calls if c.at is not None and c.seconds > 0), key=lambda c: c.at - c.seconds)


def _spans(calls: list[CallTime]) -> list[tuple[float, float]]:
    return [(c.at - c.seconds, c.at) for c in _timed(calls)]


def shares(calls: list[CallTime]) -> list[tuple[float, float]]:
    """Per call that says when it ran (`_timed`'s order): its share of the model's time,
    and the calls in flight beside it on average, itself included. A second shared by n
    calls counts 1/n to each, so the shares add up to the time the model was busy."""
    spans = _spans(calls)
    edges = sorted({t for span in spans for t in span})
    pieces = list(zip(edges, edges[1:], strict=False))
    counts = [sum(a <= lo and hi <= b for a, b in spans) for lo, hi in pieces]
    out = []
    for a, b in spans:
        inside = [(hi - lo, n) for (lo, hi), n in zip(pieces, counts, strict=True) if a <= lo and hi <= b]
        out.append((sum(d / n for d, n in inside), sum(d * n for d, n in inside) / (b - a)))
    return out


CROWDING = [i / 10 for i in range(11)]  # the exponents `crowding` tries


def crowding(calls: list[CallTime]) -> float:
    """How a call's share of the model grows with the calls in flight beside it: the
    exponent g in share = (per call + per token written) * k**g that fits the calls best
    (0 when they all ran alike crowded, or are too few to say).

    Why: on the embedded model a call beside five others took about twice the model's
    time it took beside two (the decoder attends over every sequence its shared cache
    holds), so leave-one-out credit, whose variants keep two or three calls going, costs
    less per call than the run whose calls measured the speed."""
    timed = _timed(calls)
    measured = shares(calls)
    ks = [k for _, k in measured]
    if len(timed) < 8 or max(ks) < 1.5 * min(ks):
        return 0.0
    import numpy as np  # noqa: PLC0415  (as in _least_squares)

    share = np.array([s for s, _ in measured])
    k = np.array(ks)
    x = np.array([[1.0, float(c.completion_tokens)] for c in timed])

    def error(g: float) -> float:
        scaled = x * (k ** g)[:, None]
        coef = np.linalg.lstsq(scaled, share, rcond=None)[0]
        return float(np.abs(scaled @ coef - share).sum())

    return min(CROWDING, key=error)


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


# -- the calls a speed is fit on, read from the store ------------------------------------------
def speed_calls(model: str, store) -> list[CallTime]:
    """The calls a speed is fit on: those of one kind of work, the newest run's, while that run
    is among the model's `RECENT` newest calls; else (no run, or so many calls since that the
    machine may have changed) the newest calls.

    Why not simply the newest calls: a call's recorded seconds are its time beside the calls
    it ran with, so calls of work that kept few calls going (leave-one-out credit, about 2.5
    on the embedded model) and of a run (about 4.4) fit together into a speed of neither: a
    run estimated after credit came out 1.79 times what it took (docs/PERFORMANCE.md)."""
    newest = store.call_speeds.recent(model, RECENT)
    runs = store.runs.fresh_finished(model, 1)
    if not runs:
        return newest
    _config, wall, created = runs[0]
    start, end = run_span(created, wall)
    window_full = len(newest) == RECENT
    if window_full and all(c.at is not None and c.at > end for c in newest):
        return newest  # the run has left the window
    return store.call_speeds.between(model, start, end) or newest


def run_span(created: str, wall: float) -> tuple[float, float]:
    """When a stored run began and ended (epoch seconds; a second's slack at the end)."""
    start = _dt.datetime.fromisoformat(created).timestamp()
    return start, start + wall + 1


def runs_speeds(store, model: str, limit: int) -> list[tuple[dict, float, Speed | None]]:
    """(config, wall seconds, the speed its own calls showed) of the model's newest finished
    runs that made their own calls (store/runs.py: `fresh_finished`): what a run's estimate
    holds against the time such runs took (run/pipeline/timing.py: `bias`); None for a run
    whose calls say nothing (stored by an older version)."""
    out = []
    for config, wall, created in store.runs.fresh_finished(model, limit):
        try:
            then = fit(store.call_speeds.between(model, *run_span(created, wall)))
        except Exception:  # the estimate is a guide: such a run is left out, as before
            log.debug("no speed for a stored run", exc_info=True)
            then = None
        out.append((config, wall, then))
    return out
