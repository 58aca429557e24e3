"""Driving the app through its entry file (AppTest): the helpers every app test shares."""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PRESET = "nlp-astronomy"


def new_app(secrets: dict | None = None) -> AppTest:
    """The app as a first visit sees it (the Neighbourhood page), with optional secrets."""
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (secrets or {}).items():
        at.secrets[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def shown(markdown: str) -> str:
    """What a reader sees of escaped Markdown: the backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def infos(at: AppTest) -> str:
    return "\n".join(shown(i.value) for i in at.info)


def errors(at: AppTest) -> str:
    return "\n".join(shown(e.value) for e in at.error)


class DataDir:
    """Point RT_DATA_DIR somewhere (for a module or a test), then restore it."""

    def __init__(self, path: Path):
        self.old = os.environ.get("RT_DATA_DIR")
        os.environ["RT_DATA_DIR"] = str(path)

    def restore(self) -> None:
        if self.old is None:
            os.environ.pop("RT_DATA_DIR", None)
        else:
            os.environ["RT_DATA_DIR"] = self.old


def module_data_dir(name: str):
    """An autouse fixture giving a test module one RT_DATA_DIR of its own (the app keys
    its cached store by path), restored after the module."""
    @pytest.fixture(scope="module", autouse=True)
    def _data_dir(tmp_path_factory):
        d = DataDir(tmp_path_factory.mktemp(name))
        yield
        d.restore()

    return _data_dir


def record_downloads(monkeypatch) -> dict[str, bytes]:
    """What the page's download buttons would serve, by file name, as they are drawn."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    seen: dict[str, bytes] = {}
    original = MediaFileManager.add

    def record(self, data, mimetype, coordinates, file_name=None, is_for_static_download=False):
        seen[file_name or ""] = data
        return original(self, data, mimetype, coordinates, file_name=file_name,
                        is_for_static_download=is_for_static_download)

    monkeypatch.setattr(MediaFileManager, "add", record)
    return seen


SCRIPTED_PRESET = "Scripted demo model (tests and demos, no real model)"


def run_page(provider: str = SCRIPTED_PRESET) -> AppTest:
    """A new session with the case study loaded, on the Run page, with `provider` chosen."""
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select(provider).run()
    return at


def captions(at: AppTest) -> str:
    """Every caption of the page, as shown (Markdown escapes removed)."""
    return "\n".join(shown(c.value) for c in at.caption)


@contextlib.contextmanager
def shared_server(monkeypatch, operator_token: str):
    """The app as a shared server (RT_SHARED=1) whose operator token is `operator_token`. The
    process keeps the token's hash once read, so it is forgotten before and after: the next
    test reads its own. Every app test of roles enters the server this one way."""
    from rt_core import deployment

    monkeypatch.setenv("RT_SHARED", "1")
    monkeypatch.setenv(deployment.OPERATOR_ENV, operator_token)
    deployment.OPERATOR.forget()
    try:
        yield
    finally:
        deployment.OPERATOR.forget()
