"""Personal or shared server, and the operator's token.

*Personal*: the server listens on loopback only, so whoever reaches it sits at this computer;
everything is visible to them (rt_core.access treats them like the operator). *Shared*: it
listens beyond loopback, or `RT_SHARED=1`, or it is a shared demo (`RT_DEMO=1`). Then one
browser is the operator's: whoever shows `RT_OPERATOR_TOKEN`, or, when that is unset, a token
made when the server starts and printed once in its log with the operator link, the way a
notebook server prints its tokenised address. Only the token's SHA-256 stays in memory, and a
shown token is compared in constant time (the same pattern as the organiser's token,
rt_core.study.access).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import socket
import sys
import threading
from collections.abc import Mapping

OPERATOR_ENV = "RT_OPERATOR_TOKEN"
OPERATOR_PARAM = "operator"
_TRUE = {"1", "true", "yes", "on"}


def loopback(address: str | None) -> bool:
    """Whether a listening address reaches this computer only. An empty address is
    Streamlit's default, which listens on every interface."""
    host = (address or "").strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shared(address: str | None, env: Mapping[str, str] | None = None) -> bool:
    """The server is shared. `address` None means no server is listening (a test driving the
    script directly): only the environment decides then."""
    env = os.environ if env is None else env
    if any((env.get(k) or "").strip().lower() in _TRUE for k in ("RT_SHARED", "RT_DEMO")):
        return True
    return address is not None and not loopback(address)


def token_hash(token: str) -> str:
    return hashlib.sha256((token or "").strip().encode("utf-8")).hexdigest()


class _Operator:
    """The operator token's hash for this process, made once (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hash: str | None = None

    def hash(self, link_base: str = "", out=None) -> str:
        """The hash of the operator token. With no `RT_OPERATOR_TOKEN`, the first call makes
        a token and prints its link once (to `out`, the server's log by default)."""
        with self._lock:
            if self._hash is None:
                token = (os.environ.get(OPERATOR_ENV) or "").strip()
                if not token:
                    token = secrets.token_urlsafe(24)
                    print(announcement(token, link_base), file=out or sys.stderr, flush=True)
                self._hash = token_hash(token)
            return self._hash

    def matches(self, token: str, link_base: str = "") -> bool:
        token = (token or "").strip()
        return bool(token) and hmac.compare_digest(token_hash(token), self.hash(link_base))

    def forget(self) -> None:
        """Tests only: the next call reads the environment again."""
        with self._lock:
            self._hash = None


OPERATOR = _Operator()


def announcement(token: str, link_base: str = "") -> str:
    base = (link_base or "http://<this server>:<port>").rstrip("/")
    return ("ResearchTown Studio is shared: this browser link makes you its operator (keep it "
            f"private; it is printed only once):\n  {base}/?{OPERATOR_PARAM}={token}")


def main(argv: list[str]) -> int:
    """`python -m rt_core.deployment ADDRESS PORT` (scripts/app, before it starts the server):
    exit 1 for a personal server; for a shared one without `RT_OPERATOR_TOKEN`, make a token,
    print it on stdout (for the script to hand to the server) and the operator link on stderr."""
    address = argv[0] if argv else "127.0.0.1"
    port = argv[1] if len(argv) > 1 else "8501"
    if not shared(address):
        return 1
    if (os.environ.get(OPERATOR_ENV) or "").strip():
        return 0
    host = address if address and address not in ("0.0.0.0", "::") else socket.gethostname()
    token = secrets.token_urlsafe(24)
    print(announcement(token, f"http://{host}:{port}"), file=sys.stderr, flush=True)
    print(token)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
