"""Helpers for driving the app through app.py (AppTest) in the reliability suite; the shared
ones (new_app, goto, DataDir, ...) live in tests/apphelp.py and are re-exported here."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.apphelp import APP, PRESET, ROOT, DataDir, errors, goto, new_app, shown

__all__ = ["APP", "PRESET", "ROOT", "DataDir", "errors", "goto", "new_app", "shown", "OPENAI_URL_PRESET",
           "everything_rendered", "openai_run_page", "start_and_wait"]

OPENAI_URL_PRESET = "Any OpenAI-compatible URL"


def everything_rendered(at: AppTest) -> str:
    """Every piece of text the page rendered (for leak checks)."""
    parts = []
    for kind in ("markdown", "caption", "text", "code", "info", "warning", "error", "success",
                 "title", "header", "subheader", "metric"):
        for el in getattr(at, kind):
            parts.append(str(getattr(el, "value", "")) + " " + str(getattr(el, "label", "")))
    for el in at.text_input:  # a password field holds what its visitor typed: not rendered
        if el.proto.type != el.proto.Type.PASSWORD:
            parts.append(str(el.value))
    return "\n".join(parts)


def openai_run_page(at: AppTest, base_url: str, model: str = "openai/served-model",
                    reviewers: int = 1) -> AppTest:
    """The Run page set to an OpenAI-compatible server at base_url, with the case-study
    neighbourhood loaded."""
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select(OPENAI_URL_PRESET).run()
    at.text_input(key="model").input(model).run()
    at.text_input(key="base_url").input(base_url).run()
    at.session_state["num_reviewers"] = reviewers
    at.run()
    return at


def start_and_wait(at: AppTest, timeout: float = 300):
    at.button(key="run_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=timeout), "the run did not finish"
    at.run()
    return job
