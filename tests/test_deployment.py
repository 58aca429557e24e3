"""Shared unless it is provably one person's (rt_core.deployment): each fact of the rule on its
own, the one-way switch at the first proxied request, RT_SHARED=0 and what it says in the log;
and the operator's browser session (rt_core.operator_session), which replaces the token in
its cookie. The same rule in Chromium behind nginx: tests/test_lab_roles_browser.py."""
from __future__ import annotations

import io
import threading

import pytest

from rt_core import deployment, operator_session
from rt_core.store import Store

LOOP = "127.0.0.1"


@pytest.mark.parametrize(("facts", "env", "shared"), [
    ({}, {}, False),  # loopback, no proxy, SQLite: provably one person's
    ({"store": "postgresql"}, {}, True),  # other machines reach the same runs
    ({"proxied": True}, {}, True),
    ({"address": "0.0.0.0"}, {}, True), ({"address": ""}, {}, True), ({"address": "10.1.2.3"}, {}, True),
    ({}, {"RT_SHARED": "1"}, True), ({}, {"RT_DEMO": "yes"}, True),
    # RT_SHARED=0: the operator's word for a proxied or PostgreSQL single-user server...
    ({"proxied": True}, {"RT_SHARED": "0"}, False), ({"store": "postgresql"}, {"RT_SHARED": "off"}, False),
    # ...which cannot make a server that listens beyond loopback, or a shared demo, personal
    ({"address": "0.0.0.0"}, {"RT_SHARED": "0"}, True), ({}, {"RT_SHARED": "0", "RT_DEMO": "1"}, True),
    ({"address": None, "store": "postgresql", "proxied": True}, {}, False),  # no server: no visitor
], ids=["personal", "postgresql", "proxied", "any", "default", "lan", "rt-shared", "rt-demo",
        "kept-proxied", "kept-postgresql", "kept-beyond-loopback", "kept-demo", "no-server"])
def test_each_fact_of_the_rule(facts, env, shared):
    facts = {"address": LOOP, **facts}
    assert deployment.decide(facts.pop("address"), env=env, **facts) is shared


@pytest.mark.parametrize("header", ["X-Forwarded-For", "x-real-ip", "Forwarded"])
def test_a_proxy_is_told_by_any_of_its_headers_in_any_case(header):
    assert deployment.proxied({header: "203.0.113.9", "Host": "lab"})
    assert not deployment.proxied({"Host": "lab", "User-Agent": "x"}) and not deployment.proxied(None)


def test_the_first_proxied_request_turns_the_process_shared_for_good():
    mode, env = deployment._Mode(), {}
    assert mode.shared(LOOP, {"Host": "127.0.0.1:8501"}, "sqlite", env) is False
    assert mode.shared(LOOP, {"X-Forwarded-For": "198.51.100.4"}, "sqlite", env) is True  # before it is answered
    assert mode.shared(LOOP, {"Host": "127.0.0.1:8501"}, "sqlite", env) is True  # a direct request later too
    assert mode.shared(LOOP, None, "sqlite", {"RT_SHARED": "0"}) is False  # unless the operator said so


def test_the_switch_holds_when_sessions_ask_at_once():
    mode, env, answers = deployment._Mode(), {}, []
    start = threading.Barrier(9)

    def ask(headers):
        start.wait()
        answers.append(mode.shared(LOOP, headers, "sqlite", env))

    threads = [threading.Thread(target=ask, args=({"Host": "h"},)) for _ in range(8)]
    threads.append(threading.Thread(target=ask, args=({"X-Real-IP": "192.0.2.1"},)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert True in answers
    assert mode.shared(LOOP, {"Host": "h"}, "sqlite", env) is True


def test_the_operator_token_is_made_in_every_mode_and_rt_shared_0_is_said_once(monkeypatch):
    monkeypatch.delenv(deployment.OPERATOR_ENV, raising=False)
    monkeypatch.setenv("RT_SHARED", "0")
    op, log = deployment._Operator(), io.StringIO()
    op.hash("http://127.0.0.1:8501", out=log)
    op.hash("http://127.0.0.1:8501", out=log)
    text = log.getvalue()
    assert text.count("?operator=") == 1 and text.count(deployment.KEPT_PERSONAL) == 1
    monkeypatch.delenv("RT_SHARED")
    op, log = deployment._Operator(), io.StringIO()
    op.hash(out=log)
    assert "?operator=" in log.getvalue() and deployment.KEPT_PERSONAL not in log.getvalue()


# -- the operator's session ------------------------------------------------------------------------
TOKEN_HASH = deployment.token_hash("the-operator-token-for-sessions")


def test_a_session_is_not_the_token_and_holds_until_it_is_revoked(store):
    value = operator_session.make(store, TOKEN_HASH)
    assert "the-operator-token" not in value and TOKEN_HASH not in value
    assert operator_session.check(store, value, TOKEN_HASH)
    stored = [tuple(r) for r in store.db.conn.execute("SELECT * FROM operator_sessions").fetchall()]
    assert not any(value.split(".")[0] in str(r) or value.split(".")[1] in str(r) for r in stored)
    operator_session.revoke(store, value)
    assert not operator_session.check(store, value, TOKEN_HASH)


def test_a_session_holds_on_every_server_of_the_store_and_a_sign_out_ends_it_on_all(tmp_path):
    one, two = Store(tmp_path / "s.sqlite3"), Store(tmp_path / "s.sqlite3")
    try:
        value = operator_session.make(one, TOKEN_HASH)
        assert operator_session.check(two, value, TOKEN_HASH)
        operator_session.revoke(two, value)
        assert not operator_session.check(one, value, TOKEN_HASH)
    finally:
        one.close()
        two.close()


def test_forged_stale_and_expired_sessions_do_not_hold(store, monkeypatch):
    value = operator_session.make(store, TOKEN_HASH)
    session_id, signature = value.split(".")
    other = deployment.token_hash("a-later-start-of-the-server")
    forged = f"{session_id}.{'0' * 64}"
    made_up = operator_session.make(store, other).split(".")[0] + "." + signature
    for bad in (forged, made_up, "the-operator-token-for-sessions", "", "x.y", value + "0"):
        assert not operator_session.check(store, bad, TOKEN_HASH), bad
    assert not operator_session.check(store, value, other)  # a new token: every old session is stale
    assert operator_session.check(store, value, TOKEN_HASH)
    monkeypatch.setattr(operator_session, "LIFETIME_SECONDS", -1)
    assert not operator_session.check(store, value, TOKEN_HASH)
    operator_session.revoke(store, "not a session")  # changes nothing, raises nothing
