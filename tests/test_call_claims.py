"""An identical model call from two processes on one store is made once (store/claims.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from rt_core.store import Store
from rt_core.store.runs import HOST

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "Name one open problem in galaxy dynamics."
CALLER = f"""
import json, sys
from rt_core.models.client import LLMClient, ModelSettings, run_async
from rt_core.store import Store
client = LLMClient(ModelSettings(model="openai/served", base_url=sys.argv[2], api_key="k"),
                   store=Store(sys.argv[1]))
reply = run_async(client.complete([{{"role": "user", "content": {PROMPT!r}}}]))
print(json.dumps({{"text": reply.text, "calls": client.usage.calls}}))
"""


def wait_until(cond, what: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_two_processes_make_an_identical_call_once(openai_server, store_at):
    gate, entered = threading.Event(), threading.Event()

    def slow(messages):  # holds the first call until the second process waits for it
        entered.set()
        gate.wait(timeout=60)
        return "Angular momentum transport in bars."

    openai_server.responder = slow
    store = Store(store_at)

    def caller() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", CALLER, str(store_at), openai_server.base_url],
                                stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})

    first = caller()
    try:
        assert entered.wait(90), "the first call never arrived"
        second = caller()
        wait_until(lambda: store.db.conn.execute("SELECT max(waiters) FROM llm_claims").fetchone()[0] == 1,
                   "the second process to wait for the first one's call", limit=90)
    finally:
        gate.set()
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in (first, second)]
    assert [o["text"] for o in outs] == ["Angular momentum transport in bars."] * 2
    assert len(openai_server.chat_requests()) == 1
    assert sorted(o["calls"] for o in outs) == [0, 1]
    assert store.db.conn.execute("SELECT count(*) FROM llm_claims").fetchone()[0] == 0
    store.close()


def test_a_claim_is_held_until_it_expires_or_its_process_ends(store):
    claims = store.call_claims
    assert claims.claim("k", "me:1:a") and not claims.claim("k", "other-host:1:b")
    claims.release("k", "me:1:a")
    assert claims.claim("k", "other-host:1:b")  # released: free again
    assert not claims.claim("k", "me:2:c")  # another host's live claim stands
    store.db.conn.execute("UPDATE llm_claims SET expires_at=0")
    assert claims.claim("k", "me:2:c")  # expired: taken over
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    store.db.conn.execute("UPDATE llm_claims SET owner=?", (f"{HOST}:{ended}:d",))
    assert claims.claim("k", "me:3:e")  # its process on this host has ended: taken over


def test_storing_the_answer_ends_the_claim(store):
    assert store.call_claims.claim("k", "me:1:a")
    store.llm_cache.put("k", "m", "the answer", 1, 2)
    assert store.db.conn.execute("SELECT count(*) FROM llm_claims").fetchone()[0] == 0
