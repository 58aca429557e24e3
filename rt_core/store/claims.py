"""One model call across processes: a claim in the store per cache key.

Within one process `models/client.py` shares an identical call through a table of
futures. Across processes (several app servers, CLI runs, benchmark workers on one
store, possibly on several machines) that table cannot help, so the first caller takes a
claim row here, the others find it taken and wait until the answer is in the cache (they
read the first caller's answer) or the claim is gone (the call failed or gave nothing
worth caching: they try to claim it themselves). A claim of a process that died is taken
over: at once on the same host (its pid has ended), else once it expires. So is a claim
of this very process that it no longer holds: one it could not delete because the store
was unreachable at the time (a PostgreSQL outage), which a resume would otherwise wait out.
"""
from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid

from .db import Database
from .runs import HOST, pid_alive

POLL_SECONDS = 0.1  # how often a waiting process looks for the answer

_held: dict[str, float] = {}  # this process's claims: owner -> when the claim expires
_held_lock = threading.Lock()


def _hold(owner: str, until: float) -> None:
    with _held_lock:
        now = time.time()
        for old in [o for o, t in _held.items() if t < now]:  # answered or expired long ago
            del _held[old]
        _held[owner] = until


def _holds(owner: str) -> bool:
    with _held_lock:
        return owner in _held


def _ours_but_dropped(owner: str) -> bool:
    """A claim row of this process that no call of it holds any more."""
    host, pid = (owner.split(":") + ["", "0"])[:2]
    return host == HOST and pid == str(os.getpid()) and not _holds(owner)


def claim_seconds() -> float:
    """How long a claim lasts without an answer: longer than one call with its retries."""
    try:
        return max(1.0, float(os.environ.get("RT_CALL_CLAIM_SECONDS", 600)))
    except ValueError:
        return 600.0


def new_owner() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class CallClaims:
    def __init__(self, db: Database):
        self.db = db

    def new_owner(self) -> str:
        """A name for one caller's claim (models/call_sharing.py asks it of the claims it is
        handed, so the model layer needs nothing of the store's own)."""
        return new_owner()

    def claim(self, key: str, owner: str) -> bool:
        """Take the call behind `key`: True for this owner, False while another holds it."""
        now = time.time()
        cur = self.db.conn.execute(
            "INSERT INTO llm_claims(key, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) "
            "DO UPDATE SET owner=excluded.owner, expires_at=excluded.expires_at, waiters=0 "
            "WHERE llm_claims.expires_at < ?", (key, owner, now + claim_seconds(), now))
        if cur.rowcount == 1:
            _hold(owner, now + claim_seconds())
            return True
        row = self.db.conn.execute("SELECT owner FROM llm_claims WHERE key=?", (key,)).fetchone()
        if row is None:
            return self.claim(key, owner)  # released between the two statements
        host, pid = (row[0].split(":") + ["", "0"])[:2]
        ended = host == HOST and pid.isdigit() and not pid_alive(int(pid))  # its process has ended
        if ended or _ours_but_dropped(row[0]):
            taken = self.db.conn.execute(
                "UPDATE llm_claims SET owner=?, expires_at=?, waiters=0 WHERE key=? AND owner=?",
                (owner, now + claim_seconds(), key, row[0])).rowcount == 1
            if taken:
                _hold(owner, now + claim_seconds())
            return taken
        return False

    def release(self, key: str, owner: str) -> None:
        with _held_lock:  # first: the store may be unreachable for the delete
            _held.pop(owner, None)
        self.db.conn.execute("DELETE FROM llm_claims WHERE key=? AND owner=?", (key, owner))

    def waiters(self, key: str) -> int:
        """Processes that found the call taken and wait for it (for tests and status)."""
        row = self.db.conn.execute("SELECT waiters FROM llm_claims WHERE key=?", (key,)).fetchone()
        return row[0] if row else 0

    async def claim_or_wait(self, key: str, owner: str, cached) -> dict | None:
        """None once `owner` holds the call (make it, then `put` the answer or `release`);
        or the answer another process stored meanwhile, as `cached()` reads it."""
        counted = False
        while True:
            hit = cached()
            if hit is not None:
                return hit
            if self.claim(key, owner):
                return None
            if not counted:
                self.db.conn.execute("UPDATE llm_claims SET waiters=waiters+1 WHERE key=?", (key,))
                counted = True
            await asyncio.sleep(POLL_SECONDS)  # another process: nothing to wake us but the store
