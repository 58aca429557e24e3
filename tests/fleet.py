"""A fleet of loopback OpenAI-compatible model servers behind one router file, for the
router tests (rt_core.models.router).

Each `FleetServer` answers like the demo model and records every request with its
Authorization header (OpenAIServer). `die_after(n)`: once it has answered n requests it
is dead: every later connection is cut without a reply (a crashed backend behind a
port that still accepts), and each arrival is recorded in `after_death` together with
whether the Router had already set this deployment aside when it arrived (`cooling`,
asked on the server's side at arrival).
"""
from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from pathlib import Path

import yaml

from rt_core.models.scripted import demo_responder
from tests.openai_server import OpenAIServer, _PostHandler


class _DyingHandler(_PostHandler):
    def do_POST(self) -> None:
        server = self.owner
        with server.lock:
            dead = server.answered >= server.limit
            if dead:
                server.after_death.append(server.cooling())
        if not dead:
            super().do_POST()
            with server.lock:
                server.answered += 1
            return
        self.read_request()
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone already
            self.connection.shutdown(socket.SHUT_RDWR)


class FleetServer(OpenAIServer):
    handler_class = _DyingHandler

    def __init__(self) -> None:
        self.answered = 0
        self.limit = float("inf")
        self.after_death: list[bool] = []
        self.cooling: Callable[[], bool] = lambda: False
        super().__init__(responder=lambda messages: demo_responder(messages, {}))

    def die_after(self, answers: int, cooling: Callable[[], bool]) -> None:
        with self.lock:
            self.limit = answers
            self.cooling = cooling

    def authorizations(self) -> set[str]:
        with self.lock:
            return {r["headers"].get("authorization", "") for r in self.requests}


def write_router_file(path: Path, chat: list[FleetServer], embed: FleetServer | None = None,
                      keys: list[str] | None = None, settings: dict | None = None,
                      weights: list[int] | None = None) -> Path:
    """A router file in litellm's format: `lab-llm` on every chat server (deployment i's
    key from the environment variable LAB_KEY_<i>, when `keys` is given), and `lab-embed` on
    the embedding server (key LAB_EMBED_KEY). `weights`: litellm's `weight` per chat
deployment (simple-shuffle picks in proportion to it)."""
    model_list = []
    for i, server in enumerate(chat, start=1):
        params = {"model": "openai/lab-model", "api_base": server.base_url}
        if keys:
            params["api_key"] = f"os.environ/LAB_KEY_{i}"
        if weights:
            params["weight"] = weights[i - 1]
        model_list.append({"model_name": "lab-llm", "litellm_params": params,
                           "model_info": {"id": f"gpu{i}"}})
    if embed is not None:
        model_list.append({"model_name": "lab-embed",
                           "litellm_params": {"model": "openai/lab-embedder", "api_base": embed.base_url,
                                              "api_key": "os.environ/LAB_EMBED_KEY"}})
    data = {"model_list": model_list,
            "router_settings": settings or {"num_retries": 2, "allowed_fails": 1, "cooldown_time": 600}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
