"""The operator's browser session: what its cookie holds instead of the operator token.

A cookie is sent with every request, sits in the browser's profile and outlives the tab, so
it must not be the token that makes anyone the operator for as long as the server runs. The
browser keeps `ID.SIGNATURE` instead: a random id and an HMAC of it under a key derived from
the operator token's hash. The signature ties the session to this token (a new token, at a
restart without `RT_OPERATOR_TOKEN`, ends every session it made: they read as stale); the
store's list of live sessions (rt_core.store.operator_sessions, by the id's hash) ties it to
this deployment and makes it revocable: "Sign out as operator" revokes it on every app server
that shares the store. A session also ends after LIFETIME_DAYS.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time

LIFETIME_DAYS = 30
LIFETIME_SECONDS = LIFETIME_DAYS * 24 * 3600
_SHAPE = re.compile(r"^([A-Za-z0-9_-]{16,64})\.([0-9a-f]{64})$")
_PURPOSE = b"researchtown-operator-session-v1"


def _key(token_hash: str) -> bytes:
    return hmac.new(token_hash.encode("ascii"), _PURPOSE, hashlib.sha256).digest()


def _signature(token_hash: str, session_id: str) -> str:
    return hmac.new(_key(token_hash), session_id.encode("ascii"), hashlib.sha256).hexdigest()


def _id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("ascii")).hexdigest()


def make(store, token_hash: str) -> str:
    """A new live session for a browser that just showed the operator token; the value its
    cookie keeps."""
    session_id = secrets.token_urlsafe(24)
    store.operator_sessions.add(_id_hash(session_id))
    return f"{session_id}.{_signature(token_hash, session_id)}"


def check(store, value: str, token_hash: str) -> bool:
    """Whether a cookie's value is a live session of this operator token: well formed,
    signed under this token (compared in constant time), listed, not revoked, not expired."""
    found = _SHAPE.match(value or "")
    if not found or not token_hash:
        return False
    session_id, signature = found.groups()
    if not hmac.compare_digest(signature, _signature(token_hash, session_id)):
        return False
    return store.operator_sessions.live(_id_hash(session_id), time.time() - LIFETIME_SECONDS)


def revoke(store, value: str) -> None:
    """End a session everywhere (a sign-out). A value that is not a session changes nothing."""
    found = _SHAPE.match(value or "")
    if found:
        store.operator_sessions.revoke(_id_hash(found.group(1)))
