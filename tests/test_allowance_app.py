"""The shared demo's allowance through app.py (AppTest, the scripted model): what a visitor
spent is kept in the store under their owner cookie's hash, so a reload, a second tab or a
new app server does not give it back, and the whole server's daily cap holds when cookies
are cleared.

AppTest has no cookies: a session is given the token its owner cookie would hold
(`_owner_token`); a new AppTest with the same token is the same browser after a reload or in
another tab, and one with a new token is the browser after its cookies were cleared."""
from __future__ import annotations

import datetime as dt

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import allowance
from rt_core.deployment import token_hash
from rt_core.store import open_store
from tests.apphelp import APP, PRESET, captions, errors, goto, infos, module_data_dir, shown
from tests.reliability.apphelp import everything_rendered

data_dir = module_data_dir("allowance-app")
NO_LARGER = "larger budget"  # a visitor cannot set one: no page may tell them to


@pytest.fixture
def model(demo, monkeypatch):
    monkeypatch.setenv("RT_DEMO", "1")
    monkeypatch.setenv("RT_DEMO_MODEL", "scripted/demo")
    return demo


def visitor(token: str, preset: str = PRESET) -> AppTest:
    """The Run page of the browser whose owner cookie holds `token`, with a case study."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["_owner_token"] = token
    at.run()
    at.button(key=f"preset_{preset}").click().run()
    goto(at, "run")
    at.session_state["num_reviewers"] = 1
    at.run()
    return at


def spent(token: str = "") -> tuple[int, int]:
    """(this browser's tokens, the whole server's tokens) spent today, as the store has them."""
    return open_store().demo_spending.spent(allowance.day(dt.datetime.now(dt.UTC)), token_hash(token) if token else "")


def start_and_wait(at: AppTest):
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300), "the run did not finish"
    at.run()
    return job.run


def refused(at: AppTest, words: str) -> None:
    start = at.button(key="run_start")
    assert start.disabled and words in start.help, start.help
    assert "00:00 UTC" in start.help
    assert NO_LARGER not in everything_rendered(at).lower() and not at.exception


def test_a_spent_allowance_holds_after_a_reload_in_a_second_tab_and_with_cleared_cookies(model, monkeypatch):
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "9000")  # the first step fits, the whole run does not
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", "1000000")
    me = "allowance-visitor-token-0001"
    at = visitor(me)
    assert "You have 9,000 of your 9,000 demo tokens left today" in infos(at)
    run = start_and_wait(at)
    tokens = run.usage.prompt_tokens + run.usage.completion_tokens
    assert run.status == "failed" and run.errors[-1].kind == "AllowanceSpent", run.errors
    assert spent(me) == (tokens, tokens) and tokens >= 9000, "each call's tokens are in the store"
    assert "your share of this demo is used up for today" in errors(at)
    assert "renew at 00:00 UTC" in captions(at) and NO_LARGER not in everything_rendered(at).lower()
    calls = len(model.history)

    refused(at, "Your share of this demo is used up for today: you have 0 of 9,000 tokens left")
    again = visitor(me)  # a reload: a new session, the same cookie
    refused(again, "you have 0 of 9,000 tokens left")
    assert "You have 0 of your 9,000 demo tokens left today" in infos(again)
    tab = visitor(me)  # a second tab while the first is open
    refused(tab, "you have 0 of 9,000 tokens left")
    at.run()
    refused(at, "you have 0 of 9,000 tokens left")

    # Cleared cookies make a new visitor with a fresh share of their own; the server's cap for
    # the day (set here to leave less than a first step) still refuses them.
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", str(spent()[1] + 100))
    stranger = visitor("allowance-visitor-token-0002")
    refused(stranger, "This demo server's tokens for today are nearly used up: 100 of")
    assert "You have 9,000 of your 9,000 demo tokens left today; the server has 100 of" in infos(stranger)
    assert len(model.history) == calls, "a refused visitor made a model call"


def test_the_servers_daily_cap_holds_across_visitors(model, monkeypatch):
    """Visitor a's run spends freely; the server's cap then leaves about one run's first steps
    for everybody: visitor b's run is stopped by it (not by their own share, which has most of
    its tokens left), and after that a is refused too."""
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "1000000")
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", "100000000")
    a, b = "allowance-visitor-token-0003", "allowance-visitor-token-0004"
    first = start_and_wait(visitor(a))
    assert first.status == "done", first.errors
    cap = spent()[1] + 6000  # b's first step is estimated at about 5,900; the whole run takes 6,950
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", str(cap))
    second = start_and_wait(visitor(b, "nlp-biology"))  # another study: no call answered by the cache
    assert second.status == "failed" and second.errors[-1].kind == "AllowanceSpent", second.usage
    assert "this demo server's tokens for today are used up" in second.errors[-1].message
    mine, everyone = spent(b)
    assert 6000 <= mine < 1_000_000 and everyone >= cap
    assert everyone == spent(a)[1] and mine == second.usage.prompt_tokens + second.usage.completion_tokens
    refused(visitor(a), "This demo server's tokens for today are used up: 0 of")


def test_a_start_past_the_allowance_says_so_once_and_changes_nothing(model, monkeypatch):
    """The page was drawn while tokens were left; the visitor spent them in another tab (on
    another server) before pressing Start: one message, no run, no call."""
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "9000")
    monkeypatch.setenv("RT_DEMO_TOTAL_TOKENS", "100000000")
    me = "allowance-visitor-token-0005"
    at = visitor(me)
    assert not at.button(key="run_start").disabled
    runs, calls = len(open_store().runs.list(limit=100_000)), len(model.history)
    open_store().demo_spending.add(allowance.day(dt.datetime.now(dt.UTC)), token_hash(me), 8990)
    at.button(key="run_start").click().run()
    assert not at.exception
    assert len(at.error) == 1 and errors(at).startswith(
        "your share of this demo is too small for today: you have 10 of 9,000 tokens left, and this "
        "run's first step needs about "), errors(at)
    hint = [shown(i.value) for i in at.info if "To go on now" in i.value]
    assert len(hint) == 1 and hint[0].startswith("You have 10 of your 9,000 demo tokens left today; the server "
                                                 "has ") and "renew at 00:00 UTC" in hint[0], hint
    assert NO_LARGER not in everything_rendered(at).lower()
    assert not at.session_state["jobs"] and len(model.history) == calls
    assert len(open_store().runs.list(limit=100_000)) == runs and spent(me)[0] == 8990

