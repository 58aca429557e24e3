"""The shared demo's allowance (rt_core.allowance): what a visitor and the whole server may
still spend today, the words of a refusal, and a run's meter, against a real store."""
from __future__ import annotations

import datetime as dt

import pytest

from rt_core import allowance
from rt_core.errors import AllowanceSpent
from rt_core.types import Usage

EVENING = dt.datetime(2026, 12, 6, 21, 30, tzinfo=dt.UTC)
NEXT_MORNING = dt.datetime(2026, 12, 7, 0, 5, tzinfo=dt.UTC)


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.setenv("RT_DEMO", "1")
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "3000")
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", "5000")


def test_outside_a_demo_nothing_is_counted_or_refused(store, monkeypatch):
    monkeypatch.delenv("RT_DEMO", raising=False)
    assert allowance.left(store, "hash-a") is None
    assert allowance.meter(store, "hash-a", Usage()) is None
    assert allowance.refusal(None, 10**9) is None


def test_a_visitors_left_and_the_servers_are_said_with_when_they_renew(store, demo):
    store.demo_spending.add(allowance.day(EVENING), "hash-a", 2000)
    left = allowance.left(store, "hash-a", lambda: EVENING)
    assert (left.visitor, left.server, left.tokens) == (1000, 3000, 1000)
    assert left.words() == ("You have 1,000 of your 3,000 demo tokens left today; the server has 3,000 "
                            "of 5,000 left for all its visitors. Both renew at 00:00 UTC (in 2 h 30 min).")
    assert allowance.left(store, "hash-a", lambda: NEXT_MORNING).tokens == 3000, "a new UTC day renews both"
    assert allowance.meter(store, "", Usage()) is None  # no visitor (the command line): not metered


def test_a_start_that_does_not_fit_is_refused_with_whose_tokens_ran_out(store, demo):
    day = allowance.day(EVENING)
    store.demo_spending.add(day, "hash-a", 2500)
    mine = allowance.left(store, "hash-a", lambda: EVENING)
    assert allowance.refusal(mine, 400) is None
    refused = allowance.refusal(mine, 600)
    assert isinstance(refused, AllowanceSpent)
    assert str(refused) == ("your share of this demo is too small for today: you have 500 of 3,000 tokens "
                            "left, and this run's first step needs about 600")
    assert refused.app_hint.startswith(mine.words())  # both counts, and when they renew
    assert "larger budget" not in refused.app_hint and "cap" not in refused.app_hint
    store.demo_spending.add(day, "hash-b", 2400)  # another visitor: the server has 100 left
    fresh = allowance.left(store, "hash-c", lambda: EVENING)  # a cleared cookie is a new visitor
    assert (fresh.visitor, fresh.server) == (3000, 100)
    said = str(allowance.refusal(fresh, 600))
    assert said.startswith("this demo server's tokens for today are nearly used up: 100 of 5,000 are left")


def test_a_runs_meter_records_each_call_and_stops_the_next_across_visitors(store, demo):
    """Two visitors' runs: each call's tokens go to the store when the call ends; once the
    server's 5,000 are spent, the next call of either run is refused, though visitor b has
    spent less than their own 3,000."""
    a_usage, b_usage = Usage(), Usage()
    a = allowance.Meter(store, "hash-a", a_usage, lambda: EVENING)
    b = allowance.Meter(store, "hash-b", b_usage, lambda: EVENING)
    day = allowance.day(EVENING)
    a.check_call()
    a_usage.prompt_tokens, a_usage.completion_tokens = 2000, 500
    a.record()
    a.record()  # nothing new: nothing added twice
    assert store.demo_spending.spent(day, "hash-a") == (2500, 2500)
    b.check_call()
    b_usage.prompt_tokens = 2400
    b.check_call()  # records first, and 100 are left
    b_usage.completion_tokens = 200  # a call in flight ends past the cap: still counted
    b.record()
    assert store.demo_spending.spent(day, "hash-b") == (2600, 5100)
    for m in (a, b):
        with pytest.raises(AllowanceSpent, match="this demo server's tokens for today are used up"):
            m.check_call()
    c = allowance.Meter(store, "hash-c", Usage(), lambda: NEXT_MORNING)
    c.check_call()  # the next UTC day: both caps renewed
