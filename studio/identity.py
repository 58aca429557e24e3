"""Who this browser is, for rt_core.access: its owner token, the operator's sign-in, the studies
it organises, whether it joined as a rater; and the facts rt_core.deployment decides the
server's mode from (the listening address, this request's headers, the store's kind).

A refresh is a new Streamlit session, so nothing that must survive one can live in
`st.session_state` alone. Two long-lived cookies do it instead, written by a tiny component
(the way studio.rater_session writes its own) and read back from `st.context.cookies` by the
next session: `rt_owner`, a random token every browser gets (the store keeps only its hash
with each run the browser starts), and `rt_operator`, an operator session once the operator
link was opened (rt_core.operator_session: never the token itself, revocable, checked
against the store on every script run so a sign-out holds on every tab and server). Neither
ever goes into an address the app shows or exports: an address is copied, shared and
projected; a cookie stays in its browser.
"""
from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from urllib.parse import urlsplit

import streamlit as st

from rt_core import access, deployment, operator_session
from studio.process_store import process_store

OWNER_COOKIE, OPERATOR_COOKIE = "rt_owner", "rt_operator"
LEGACY_OWNER_PARAM = "owner"  # older versions put the owner token in the run's address
YEARS_10 = 10 * 365 * 24 * 3600
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")

_JS = """
export default function ({ data }) {
  for (const [name, value] of Object.entries(data.cookies || {})) {
    const age = (data.max_ages || {})[name] || data.max_age;
    document.cookie = value
      ? `${name}=${value}; path=/; max-age=${age}; SameSite=Strict`
      : `${name}=; path=/; max-age=0; SameSite=Strict`;
  }
}
"""

WRONG_OPERATOR = ("That operator link does not match this server's operator token (it was mistyped, "
                  "or it is from an earlier start of the server): this browser stays a visitor. The "
                  "current link is printed in the server's log.")
STALE_OPERATOR = ("This browser's operator sign-in no longer holds (it was signed out, it expired, or "
                  "it belongs to an earlier start of this server): it is a visitor now. Open the "
                  "operator link from the server's log again.")
OPERATOR_WELCOME = ("This browser is now the operator's: it sees every run and study on this server, "
                    "also after a reload, until you sign out (Settings).")
PERSONAL_OPERATOR = ("This server is personal for now (it listens on this computer only and nothing "
                     "reached it through a proxy), so everything is open here already. This browser "
                     "stays the operator's if the server turns shared.")
SIGNED_OUT = "Signed out: this browser is a visitor now, on every server that shares this store."
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


def _headers():
    """This request's headers (the websocket's, as the browser or a proxy sent them)."""
    try:
        headers = st.context.headers
    except Exception:  # no script context
        return None
    return headers if isinstance(headers, Mapping) else None  # AppTest answers with a mock


def shared() -> bool:
    """rt_core.deployment decides; this hands it the facts. A proxied request turns the whole
    process shared before anything of it is answered."""
    return deployment.shared(_address(), headers=_headers(), store=process_store().dialect)


def _link_base() -> str:
    """Where the browser reached this server (through a proxy, the proxy's address)."""
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    try:
        seen = urlsplit(st.context.url) if isinstance(st.context.url, str) else None
    except Exception:  # no script context
        seen = None
    if seen and seen.scheme and seen.netloc:
        root = f"{seen.scheme}://{seen.netloc}"
    else:
        root = f"http://{_address() or 'localhost'}:{st.get_option('server.port')}"
    return f"{root}/{base}" if base else root


def observe() -> bool:
    """First thing on every script run: the server's mode for this request, and the operator
    token made (and printed once) if this is the process's first run."""
    deployment.OPERATOR.hash(_link_base())
    return shared()


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


def _operator_link(is_shared: bool) -> dict[str, str]:
    """An operator link, read once and then taken out of the address: a matching token makes
    an operator session (in either mode: a personal server may turn shared)."""
    ss = st.session_state
    try:
        token = st.query_params.get(deployment.OPERATOR_PARAM)
        if token is not None:
            del st.query_params[deployment.OPERATOR_PARAM]
    except Exception:  # no browser context
        token = None
    if token is None:
        return {}
    if not deployment.OPERATOR.matches(token, _link_base()):
        _notice("error", WRONG_OPERATOR)
        return {}
    value = operator_session.make(process_store(), deployment.OPERATOR.hash())
    ss["_operator_session"] = value
    if is_shared:
        _notice("success", OPERATOR_WELCOME)
    else:
        _notice("info", PERSONAL_OPERATOR)
    return {OPERATOR_COOKIE: value}


def _operator(is_shared: bool) -> dict[str, str]:
    """Whether this browser is the operator's, asked of the store on every run (a sign-out in
    another tab or on another server counts at once); returns the cookie to write ('' takes
    it away). A forged, stale or revoked session: one warning, and the browser is a visitor."""
    ss = st.session_state
    writes = _operator_link(is_shared)
    value = ss.get("_operator_session") or _cookie(OPERATOR_COOKIE)
    if not value or value == ss.get("_operator_rejected"):
        ss["_operator"] = False
        return writes
    ss["_operator"] = operator_session.check(process_store(), value, deployment.OPERATOR.hash())
    if ss["_operator"]:
        ss["_operator_session"] = value
        return writes
    ss.pop("_operator_session", None)
    ss["_operator_rejected"] = value  # this session's cookies were read when it connected
    _notice("warning", STALE_OPERATOR)
    return {**writes, OPERATOR_COOKIE: ""}


def _sign_out(value: str) -> None:
    """The button's callback. With st.navigation it runs once the page is chosen, after
    `settle` has drawn this run's cookie writer: the page itself then says it and takes the
    cookie away (sign_out_control), and the views drawn after it are a visitor's."""
    ss = st.session_state
    operator_session.revoke(process_store(), value)
    ss.pop("_operator_session", None)
    ss["_operator"], ss["_operator_rejected"] = False, value
    ss.setdefault("_cookie_writes", {})[OPERATOR_COOKIE] = ""
    ss["_signed_out_now"] = True


def sign_out_control() -> None:
    """The operator's sign-out (Settings): the session is revoked in the store, so it ends on
    every app server and tab, and the cookie goes (once, right after the click)."""
    ss = st.session_state
    if ss.pop("_signed_out_now", False):
        st.info(SIGNED_OUT)
        _component()(key="rt_cookie_writer_signed_out", data={"cookies": {OPERATOR_COOKIE: ""}, "max_age": 0})
        return
    value = ss.get("_operator_session")
    if not value:
        return
    st.subheader("Operator")
    st.caption("This browser is signed in as the operator (a session of its own; the operator "
               "token itself is not kept in the browser).")
    st.button("Sign out as operator", key="operator_sign_out", on_click=_sign_out, args=(value,))


def settle() -> None:
    """Once per script run, before any page: take tokens out of the address, recognise the
    operator, and give a new browser its owner cookie."""
    ss = st.session_state
    is_shared = observe()
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
            _component()(key="rt_cookie_writer", data={
                "cookies": writes, "max_age": YEARS_10,
                "max_ages": {OPERATOR_COOKIE: operator_session.LIFETIME_SECONDS}})


def show_notices() -> None:
    for kind, text in st.session_state.pop("_access_notices", []):
        {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)(text)


def viewer() -> access.Viewer:
    ss = st.session_state
    is_shared = shared()
    return access.Viewer(shared=is_shared, operator=is_shared and bool(ss.get("_operator")),
                         owner_hash=owner_hash(), organiser_of=frozenset(ss.get("study_unlocked", [])),
                         rater=bool(ss.get("_joined_as_rater")) and not ss.get("_organiser"))
