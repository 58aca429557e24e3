"""Who this browser is, for rt_core.access: its owner token, the operator's sign-in, the studies
it organises, whether it joined as a rater.

A refresh is a new Streamlit session, so nothing that must survive one can live in
`st.session_state` alone. Two long-lived cookies do it instead, written by a tiny component
(the way studio.rater_session writes its own) and read back from `st.context.cookies` by the
next session: `rt_owner`, a random token every browser gets (the store keeps only its hash
with each run the browser starts), and `rt_operator`, the operator's token once the operator
link was opened. Neither ever goes into an address the app shows or exports: an address is
copied, shared and projected; a cookie stays in its browser.
"""
from __future__ import annotations

import re
import secrets

import streamlit as st

from rt_core import access, deployment

OWNER_COOKIE, OPERATOR_COOKIE = "rt_owner", "rt_operator"
LEGACY_OWNER_PARAM = "owner"  # older versions put the owner token in the run's address
YEARS_10 = 10 * 365 * 24 * 3600
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")

_JS = """
export default function ({ data }) {
  for (const [name, value] of Object.entries(data.cookies || {})) {
    document.cookie = value
      ? `${name}=${value}; path=/; max-age=${data.max_age}; SameSite=Strict`
      : `${name}=; path=/; max-age=0; SameSite=Strict`;
  }
}
"""

WRONG_OPERATOR = ("That operator link does not match this server's operator token (it was mistyped, "
                  "or it is from an earlier start of the server): this browser stays a visitor. The "
                  "current link is printed in the server's log.")
STALE_OPERATOR = ("This browser was the operator of an earlier start of this server, and that sign-in "
                  "no longer holds: it is a visitor now. Open the operator link from the server's log "
                  "again.")
OPERATOR_WELCOME = ("This browser is now the operator's: it sees every run and study on this server, "
                    "also after a reload.")
PERSONAL_OPERATOR = ("This server is personal (it listens on this computer only), so everything is "
                     "open here already: no operator link is needed.")
OLD_OWNER_LINK = ("Links no longer carry an owner token, so the one in this address was ignored. The "
                  "browser that started a run keeps its controls by itself; anybody else sees the run "
                  "read-only.")


@st.cache_resource
def _component():
    return st.components.v2.component("rt_cookies", js=_JS)


def _cookie(name: str) -> str:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # no browser context
        return ""
    return value if isinstance(value, str) else ""  # AppTest answers with a mock


def _address() -> str | None:
    """The address the server listens on ('' is Streamlit's default: every interface); None
    when no browser is connected (AppTest drives the script without a server)."""
    try:
        if not isinstance(st.context.url, str) or not st.context.url:
            return None
    except Exception:  # no script context
        return None
    return st.get_option("server.address") or ""


def shared() -> bool:
    return deployment.shared(_address())


def _link_base() -> str:
    host = _address() or "localhost"
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    root = f"http://{host}:{st.get_option('server.port')}"
    return f"{root}/{base}" if base else root


def owner_token() -> str:
    """This browser's owner token: its cookie's, else a new one (written by `settle`)."""
    ss = st.session_state
    if not ss.get("_owner_token"):
        cookie = _cookie(OWNER_COOKIE)
        ss["_owner_token"] = cookie if _TOKEN.match(cookie) else secrets.token_urlsafe(18)
    return ss["_owner_token"]


def owner_hash() -> str:
    return deployment.token_hash(owner_token())


def _notice(kind: str, text: str) -> None:
    st.session_state.setdefault("_access_notices", []).append((kind, text))


def _operator(is_shared: bool) -> dict[str, str]:
    """Read an operator link (once, then out of the address) or this browser's operator cookie;
    returns the cookie to write ('' takes it away)."""
    ss = st.session_state
    try:
        token = st.query_params.get(deployment.OPERATOR_PARAM)
        if token is not None:
            del st.query_params[deployment.OPERATOR_PARAM]
    except Exception:  # no browser context
        token = None
    if token is not None:
        if not is_shared:
            _notice("info", PERSONAL_OPERATOR)
        elif deployment.OPERATOR.matches(token, _link_base()):
            ss["_operator"] = True
            _notice("success", OPERATOR_WELCOME)
            return {OPERATOR_COOKIE: token.strip()}
        else:
            _notice("error", WRONG_OPERATOR)
    if "_operator" in ss or not is_shared:
        return {}
    cookie = _cookie(OPERATOR_COOKIE)
    ss["_operator"] = bool(cookie) and deployment.OPERATOR.matches(cookie, _link_base())
    if cookie and not ss["_operator"]:
        _notice("warning", STALE_OPERATOR)
        return {OPERATOR_COOKIE: ""}
    return {}


def settle() -> None:
    """Once per script run, before any page: take tokens out of the address, recognise the
    operator, and give a new browser its owner cookie. A shared server also makes (and logs)
    its operator token here when nothing asked for it before."""
    ss = st.session_state
    is_shared = shared()
    if is_shared:
        deployment.OPERATOR.hash(_link_base())
    writes = ss.setdefault("_cookie_writes", {})
    writes.update(_operator(is_shared))
    try:
        if LEGACY_OWNER_PARAM in st.query_params:
            del st.query_params[LEGACY_OWNER_PARAM]
            _notice("info", OLD_OWNER_LINK)
    except Exception:  # no browser context
        pass
    if _cookie(OWNER_COOKIE) != owner_token():
        writes[OWNER_COOKIE] = owner_token()
    if writes:  # every run of this session: its cookies were read when it connected
        with st.sidebar:
            _component()(key="rt_cookie_writer", data={"cookies": writes, "max_age": YEARS_10})


def show_notices() -> None:
    for kind, text in st.session_state.pop("_access_notices", []):
        {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)(text)


def viewer() -> access.Viewer:
    ss = st.session_state
    is_shared = shared()
    return access.Viewer(shared=is_shared, operator=is_shared and bool(ss.get("_operator")),
                         owner_hash=owner_hash(), organiser_of=frozenset(ss.get("study_unlocked", [])),
                         rater=bool(ss.get("_joined_as_rater")) and not ss.get("_organiser"))
