"""The shared demo's allowance: what a visitor, and the whole deployment, may still spend today.

In shared-demo mode (RT_DEMO=1) visitors spend the operator's key. Two caps hold it, both
per UTC day and both renewed at 00:00 UTC, so one time answers "when can I go on":

- each visitor (their owner cookie, `studio.identity`; the store keeps its hash only) may
  spend RT_DEMO_MAX_TOKENS (default 200,000);
- all visitors of all app servers sharing the store together may spend RT_DEMO_TOTAL_TOKENS
  (default 2,000,000), so a visitor who clears their cookies, and is a new visitor, still
  cannot reopen the key.

The counts live in the store (`store.demo_spending`), added to as each call is made, never in
a browser session: a reload, a second tab or another app server reads the same numbers. This
module is the one place that says how much is left (`left`), whether a run may start
(`refusal`: its first step must fit), and when a running one stops (`Meter`, asked before
every fresh call: once either cap is reached the calls in flight end and nothing new starts,
as with the run's own budget). Pages only show the words.
"""
from __future__ import annotations

import datetime as _dt
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .errors import AllowanceSpent
from .models import keys
from .types import Usage

DEFAULT_TOTAL = 2_000_000
RENEWS = "00:00 UTC"

Clock = Callable[[], _dt.datetime]


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


@dataclass(frozen=True)
class Limits:
    visitor: int  # tokens per visitor per UTC day
    total: int  # tokens per UTC day for the whole deployment


def limits() -> Limits | None:
    """The demo's two caps, or None outside a shared demo (no allowance applies)."""
    demo = keys.demo()
    if demo is None:
        return None
    try:
        total = int(os.environ.get("RT_DEMO_TOTAL_TOKENS", DEFAULT_TOTAL))
    except ValueError:
        total = DEFAULT_TOTAL
    return Limits(demo.max_tokens, max(0, total))


def day(now: _dt.datetime) -> str:
    return now.astimezone(_dt.UTC).date().isoformat()


def renews_in(now: _dt.datetime) -> str:
    """The time until the next 00:00 UTC, in words ('3 h 05 min')."""
    now = now.astimezone(_dt.UTC)
    midnight = _dt.datetime.combine(now.date() + _dt.timedelta(days=1), _dt.time(), _dt.UTC)
    minutes = max(1, int((midnight - now).total_seconds() // 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


@dataclass(frozen=True)
class Left:
    """What may still be spent today, by this visitor and by the whole server."""
    visitor: int
    server: int
    limits: Limits
    now: _dt.datetime

    @property
    def tokens(self) -> int:
        """What this visitor's next run may spend: the smaller of the two."""
        return min(self.visitor, self.server)

    def words(self) -> str:
        """Both counts and the renewal, as the Run page shows them."""
        return (f"You have {self.visitor:,} of your {self.limits.visitor:,} demo tokens left today; "
                f"the server has {self.server:,} of {self.limits.total:,} left for all its visitors. "
                f"Both renew at {RENEWS} (in {renews_in(self.now)}).")


def left(store, owner_hash: str, now: Clock = _now) -> Left | None:
    """What this visitor and the server may still spend today; None outside a shared demo."""
    lim = limits()
    if lim is None:
        return None
    when = now()
    mine, everyone = store.demo_spending.spent(day(when), owner_hash)
    return Left(max(0, lim.visitor - mine), max(0, lim.total - everyone), lim, when)


def _spent(left: Left, need: int, running: bool) -> AllowanceSpent:
    if left.server < max(1, need) and left.server <= left.visitor:
        what = (f"this demo server's tokens for today are {'used up' if not left.server else 'nearly used up'}: "
                f"{left.server:,} of {left.limits.total:,} are left for all its visitors")
    else:
        what = (f"your share of this demo is {'used up' if not left.visitor else 'too small'} for today: "
                f"you have {left.visitor:,} of {left.limits.visitor:,} tokens left")
    if need and not running:
        what += f", and this run's first step needs about {need:,}"
    hint = (left.words() + " "
            + ("Everything this run finished is kept on the Results page. " if running else
               "Until then, the runs made so far stay readable on the History and Results pages. ")
            + "To go on now, run ResearchTown Studio on your own computer with your own key.")
    return AllowanceSpent(what, hint, hint)


def refusal(left: Left | None, need: int) -> AllowanceSpent | None:
    """May a run whose first step needs about `need` tokens start? None if it may (or no
    allowance applies), else the error that says why not, what is left and when it renews."""
    if left is None or (left.tokens > 0 and left.tokens >= need):
        return None
    return _spent(left, need, running=False)


def first_step(estimate) -> int:
    """The tokens of a run's first stage that calls the model (its `budget.Estimate`): what
    must fit for a start to make any progress."""
    return next((c.tokens for c in estimate.stages.values() if c.calls), 0)


def _tokens(usage: Usage) -> int:
    return usage.prompt_tokens + usage.completion_tokens


class Meter:
    """One run's calls against the allowance of the visitor who started it: `record` adds
    what the run's usage grew by since the last time to the store (the client calls it after
    every call that reached the model, the run once more at its end for its embedder's
    tokens), and `check_call`, before every fresh call, stops the run once either cap is
    reached. The calls already in flight still end and are counted, so a run may go past
    the cap by those calls, never by a new one."""

    def __init__(self, store, owner_hash: str, usage: Usage, now: Clock = _now):
        self.store, self.owner_hash, self.usage, self.now = store, owner_hash, usage, now
        self._recorded = _tokens(usage)
        self._lock = threading.Lock()

    def left(self) -> Left | None:
        return left(self.store, self.owner_hash, self.now)

    def record(self) -> None:
        with self._lock:
            grew = _tokens(self.usage) - self._recorded
            if grew <= 0:
                return
            self.store.demo_spending.add(day(self.now()), self.owner_hash, grew)
            self._recorded += grew

    def admit_start(self, need: int) -> None:
        """Before anything of the run is written: its first step must fit."""
        refused = refusal(self.left(), need)
        if refused is not None:
            raise refused

    def check_call(self) -> None:
        self.record()
        now = self.left()
        if now is not None and now.tokens <= 0:
            raise _spent(now, 0, running=True)


def meter(store, owner_hash: str, usage: Usage) -> Meter | None:
    """The meter of a run paid from a visitor's demo allowance; None when none applies (no
    shared demo, or a request no visitor made: the command line is the operator's)."""
    if limits() is None or not owner_hash:
        return None
    return Meter(store, owner_hash, usage)
