"""Personal or shared server, and the operator's token.

*Personal*: provably one person's. The server listens on loopback only, no request it has
answered came through a proxy (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`), and its store is
a local SQLite file: whoever reaches it sits at this computer, and everything is visible to
them (rt_core.access treats them like the operator). *Shared*: anything else, that is a
non-loopback address, a proxied request, a PostgreSQL store (other machines reach the same
runs), `RT_SHARED=1` or `RT_DEMO=1`. The default is shared because the cost of the two
mistakes differs: a personal server taken for shared only asks its one user for the
operator link; a shared one taken for personal hands every visitor every run. Nothing can be
proved about a reverse proxy before it sends a request, so the server watches every request
and turns shared (for good, process-wide) at the first proxied one, before answering it.
`RT_SHARED=0` keeps a single-user server personal behind a proxy or on PostgreSQL; it cannot
make a server that listens beyond loopback, or a shared demo, personal.

One browser is the operator's: whoever shows `RT_OPERATOR_TOKEN`, or, when that is unset, a
token made when the server first runs (in every mode, so the link works the moment the
server turns shared) and printed once in its log with the operator link, the way a notebook
server prints its tokenised address. Only the token's SHA-256 stays in memory, and a shown
token is compared in constant time (the same pattern as the organiser's token,
rt_core.store.study_access). The operator's browser keeps a session made from it, never the token
itself (rt_core.operator_session).
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
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
KEPT_PERSONAL = ("RT_SHARED=0: this server stays personal even behind a proxy or on a shared "
                 "store, so every browser that reaches it sees and controls every run and study, "
                 "and raters' studies are not blind.")


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


def proxied(headers: Mapping[str, str] | None) -> bool:
    """Whether a request came through a (reverse) proxy: it names a forwarded client. Header
    names are compared without case, as HTTP does."""
    if not headers:
        return False
    try:
        names = {str(k).strip().lower() for k in headers}
    except Exception:  # not a mapping of headers at all: nothing proves a proxy
        return False
    return any(h in names for h in PROXY_HEADERS)


def _flag(env: Mapping[str, str], name: str) -> str:
    return (env.get(name) or "").strip().lower()


def kept_personal(env: Mapping[str, str] | None = None) -> bool:
    """`RT_SHARED=0`: the operator's explicit word that this server is one person's."""
    return _flag(os.environ if env is None else env, "RT_SHARED") in _FALSE


def decide(address: str | None, *, proxied: bool = False, store: str = "sqlite",
           env: Mapping[str, str] | None = None) -> bool:
    """The rule itself, from the facts (pure). `address` None means no server is listening (a
    test driving the script directly): no visitor can come, so only the environment decides.
    `store` is the store's dialect ("sqlite" or "postgresql")."""
    env = os.environ if env is None else env
    if any(_flag(env, k) in _TRUE for k in ("RT_SHARED", "RT_DEMO")):
        return True
    if address is None:
        return False
    if not loopback(address):
        return True
    if kept_personal(env):
        return False
    return proxied or store != "sqlite"


class _Mode:
    """What this process has seen: whether any request it answered was proxied. One-way and
    thread-safe (Streamlit runs each browser session in a thread of its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proxied = False

    def shared(self, address: str | None, headers: Mapping[str, str] | None = None,
               store: str = "sqlite", env: Mapping[str, str] | None = None) -> bool:
        """Whether the server is shared while it answers the request with these `headers`;
        a proxied one turns the process shared from now on."""
        if proxied(headers):
            with self._lock:
                self._proxied = True
        with self._lock:
            seen = self._proxied
        return decide(address, proxied=seen, store=store, env=env)

    def forget(self) -> None:
        """Tests only: as a fresh process."""
        with self._lock:
            self._proxied = False


MODE = _Mode()


def shared(address: str | None, env: Mapping[str, str] | None = None, *,
           headers: Mapping[str, str] | None = None, store: str = "sqlite") -> bool:
    """The server is shared (MODE, for this process)."""
    return MODE.shared(address, headers, store, env)


def token_hash(token: str) -> str:
    return hashlib.sha256((token or "").strip().encode("utf-8")).hexdigest()


class _Operator:
    """The operator token's hash for this process, made once (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hash: str | None = None

    def hash(self, link_base: str = "", out=None) -> str:
        """The hash of the operator token. The first call (the server's first script run, in
        every mode) makes a token when `RT_OPERATOR_TOKEN` is not given and prints its link
        once (to `out`, the server's log by default); with `RT_SHARED=0` it also says, once,
        what that gives up."""
        with self._lock:
            if self._hash is None:
                out = out or sys.stderr
                token = (os.environ.get(OPERATOR_ENV) or "").strip()
                if not token:
                    token = secrets.token_urlsafe(24)
                    print(announcement(token, link_base), file=out, flush=True)
                if kept_personal():
                    print(KEPT_PERSONAL, file=out, flush=True)
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
    return ("ResearchTown Studio's operator link (keep it private; it is printed only once). It "
            "makes a browser the operator of this server once it is shared (now, or from its "
            f"first request through a proxy):\n  {base}/?{OPERATOR_PARAM}={token}")


def main(argv: list[str]) -> int:
    """`python -m rt_core.deployment ADDRESS PORT` (scripts/app, before it starts the server):
    without `RT_OPERATOR_TOKEN`, make a token (in every mode: a personal server may turn
    shared), print it on stdout for the script to hand to the server, and the operator link
    on stderr."""
    address = argv[0] if argv else "127.0.0.1"
    port = argv[1] if len(argv) > 1 else "8501"
    if (os.environ.get(OPERATOR_ENV) or "").strip():
        return 0
    host = address if address and address not in ("0.0.0.0", "::") else socket.gethostname()
    token = secrets.token_urlsafe(24)
    print(announcement(token, f"http://{host}:{port}"), file=sys.stderr, flush=True)
    print(token)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
