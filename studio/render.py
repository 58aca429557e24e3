"""Safe rendering and messages: untrusted text as text, errors as one message with a hint.

Every piece of text that came from a model, a paper source or an upload is shown
with `show_text` (st.text: no Markdown, no HTML) or, where Streamlit parses
Markdown (labels, captions), after `md_escape`. Plotly labels go through `plot_escape`.
"""
from __future__ import annotations

import re
from typing import Any

import streamlit as st

from rt_core import agents
from rt_core.errors import RTError
from rt_core.run.pipeline.progress import stage_title
from rt_core.types import Paper, Researcher, StageError

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md_escape(text: Any) -> str:
    """Text that Streamlit's Markdown shows literally: every special character escaped
    (no links, images, HTML, LaTeX, colour directives or icons), newlines flattened."""
    s = " ".join(str(text if text is not None else "").split())
    return _MD_SPECIAL.sub(r"\\\1", s)


def plot_escape(text: Any, limit: int = 120) -> str:
    """Plotly renders a little HTML in labels; escape it so '<b>' shows as '<b>'."""
    s = str(text if text is not None else "")
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def show_text(text: Any) -> None:
    """Untrusted text as plain text (st.text never parses Markdown or HTML)."""
    st.text(str(text if text is not None else ""))


def act(spinner: str, action) -> None:
    """Run a page action under a spinner; on success rerun the page to show its result,
    on failure show the error as a message (never a traceback)."""
    try:
        with st.spinner(spinner):
            action()
    except Exception as exc:
        show_error(exc)
        return
    st.rerun()


def show_error(exc: BaseException) -> None:
    """An RTError as message + hint; anything else with its type."""
    # Messages can quote user or provider text (titles, server replies): escape them.
    if isinstance(exc, RTError):
        st.error(md_escape(exc), icon="⚠️")
        hint = app_hint(exc)
        if hint:
            st.info(md_escape(hint), icon="💡")
    else:
        st.error(md_escape(f"Unexpected error: {type(exc).__name__}: {exc}"), icon="⚠️")


def app_hint(exc: BaseException) -> str:
    """The hint in the app's words: the command line's hint may name flags and settings
    that mean nothing in a browser, so an error that has an app version gives it."""
    return getattr(exc, "app_hint", "") or getattr(exc, "hint", "") or ""


def stage_error(e: StageError, names: dict[str, str]) -> str:
    """One recorded failure in words: which part of the run and, when one agent failed
    rather than the whole run, who. Safe Markdown."""
    where = stage_title(e.stage)
    who = "" if e.agent in ("run", "") else f" · {agents.label(e.agent, names)}"
    return md_escape(f"{where}{who}: {e.message}")


def short(text: str, n: int = 90) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def run_label(row: dict) -> str:
    title = short(row.get("title") or "(no proposal yet)", 70)
    return f"{row['created_at'][:16].replace('T', ' ')} · {row['status']} · {row['model']} · {title}"


def nav_sidebar() -> None:
    """A short summary of the session in the sidebar."""
    ss = st.session_state
    with st.sidebar:
        st.caption(f"Neighbourhood: {len(ss['hood_r'])} researchers, {len(ss['hood_p'])} papers")
        running = [j for j in ss["jobs"].values() if not j.done]
        if running:
            st.caption(f"{len(running)} run(s) in progress")
        model = md_escape(ss["model"])
        st.caption(f"Model: {model}")


def researcher_caption(r: Researcher, fnames: dict[str, str]) -> str:
    fields = ", ".join(fnames.get(f, f) for f in r.fields) or "no field"
    aff = f" · {r.affiliation}" if r.affiliation else ""
    return md_escape(f"{fields}{aff} · {len(r.publication_ids)} papers")


def paper_caption(p: Paper, fnames: dict[str, str]) -> str:
    fields = ", ".join(fnames.get(f, f) for f in p.fields) or "no field"
    authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
    bits = [str(p.year or "n.d."), fields, authors, p.id]
    return md_escape(" · ".join(b for b in bits if b))



def flash(kind: str, text: str, where: str = "main") -> None:
    """Queue a message (already safe Markdown) to show after the next rerun."""
    st.session_state.setdefault("_flash", []).append((where, kind, text))


def show_flashes(where: str = "main") -> None:
    items = st.session_state.get("_flash", [])
    keep = []
    for w, kind, text in items:
        if w != where:
            keep.append((w, kind, text))
            continue
        {"success": st.success, "error": st.error, "warning": st.warning,
         "info": st.info}.get(kind, st.info)(text)
    st.session_state["_flash"] = keep
