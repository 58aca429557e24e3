"""The first run of a process should not wait for imports.

A model call needs litellm (about 1.7 s to import on the project's machine) and, for
every provider litellm reaches through the OpenAI SDK, `openai.resources` (about 1.3 s
more, imported by the SDK on its first request); the default embedder loads the bundled
MiniLM (0.1-0.3 s, competing with the first round for the GIL). All of this used to
happen on the first run's critical path: the orchestration bench discarded its first
run, so its 1.09-1.13x hid that a user's first run took about 1.9x the critical path
(and the mean over the bench's runs, timed from outside, was 1.22x). `warm_up()` loads
them in a background thread as soon as a page that can start a run is drawn (or a run
is built), so by the time anyone presses Start they are there. Importing the same
modules from two threads is safe: the import system makes the second wait.
"""
from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import_model_client() -> None:
    try:
        from ...models.registry import litellm  # noqa: PLC0415  (slow: what this warms)

        litellm()
        import openai.resources  # noqa: F401, PLC0415  (slow: what this warms)

        from ...models.embed import local_minilm  # noqa: PLC0415  (slow: loads weights)

        local_minilm()  # the default embedder: reviewer candidates, similarity, concepts
    except Exception:  # the first real call will report whatever is wrong, in its words
        log.debug("warming the model client failed", exc_info=True)


def warm_up() -> threading.Thread:
    """Start importing the model client in the background (once per process)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_import_model_client, name="rt-warm-up", daemon=True)
            _thread.start()
        return _thread
