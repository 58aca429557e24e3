"""A scripted HTTP server on 127.0.0.1 for testing the paper sources offline.

Routes map a path to a queue of responses (status, headers, body); each
request takes the next one and the last one repeats. Every request is
recorded. `HANG` makes the handler block on an Event until teardown, which
gives a deterministic client timeout without sleeping.

Use it through the `fake_server` fixture (import it into the test module).
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import pytest

HANG = object()  # a response that never comes (until the server is closed)
Handler = Callable[["Recorded"], Any]


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw_path: str

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class _Route:
    responses: list[Any] = field(default_factory=list)
    handler: Handler | None = None

    def next(self, request: Recorded) -> Any:
        if self.handler is not None:
            return self.handler(request)
        return self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]


class FakeServer:
    """ThreadingHTTPServer on an ephemeral loopback port with scripted routes."""

    def __init__(self) -> None:
        self.routes: dict[str, _Route] = {}
        self.requests: list[Recorded] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, path: str, *responses: Any, handler: Handler | None = None) -> None:
        """Script `path`: successive requests get successive responses; the last repeats."""
        if not responses and handler is None:
            raise ValueError("give responses or a handler")
        self.routes[path] = _Route(list(responses), handler)

    def json(self, path: str, body: Any, status: int = 200, headers: dict | None = None) -> None:
        self.route(path, (status, headers or {}, body))

    def hits(self, path: str | None = None) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def close(self) -> None:
        self.release.set()  # let any HANG handler finish before shutdown
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # called from handler threads
    def _respond(self, request: Recorded) -> Any:
        with self._lock:
            self.requests.append(request)
            route = self.routes.get(request.path)
            if route is None:
                return (404, {"Content-Type": "application/json"}, {"error": f"no route {request.path}"})
            return route.next(request)


def _encode(body: Any) -> tuple[bytes, str]:
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        ctype = "application/atom+xml" if body.lstrip().startswith("<?xml") else "text/plain"
        return body.encode("utf-8"), ctype + "; charset=utf-8"
    return json.dumps(body).encode("utf-8"), "application/json"


def _make_handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            parts = urlsplit(self.path)
            request = Recorded("GET", parts.path, parse_qs(parts.query),
                               {k.lower(): v for k, v in self.headers.items()}, self.path)
            reply = server._respond(request)
            if reply is HANG:
                server.release.wait(timeout=30)
                reply = (200, {}, {"released": True})
            self._send(*reply)

        def _send(self, status: int, headers: dict, body: Any) -> None:
            data, ctype = _encode(body)
            try:
                self.send_response(status)
                self.send_header("Content-Type", headers.get("Content-Type", ctype))
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    if name != "Content-Type":
                        self.send_header(name, str(value))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing to tell it

        def log_message(self, *args: Any) -> None:
            pass

    return _Handler


@pytest.fixture
def fake_server():
    server = FakeServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def closing():
    """Register clients made in a test (`src = closing(ArxivSource(...))`); closed at teardown."""
    made: list[Any] = []

    def register(client: Any) -> Any:
        made.append(client)
        return client

    yield register
    for client in made:
        client.close()


class SleepRecorder:
    """Stands in for time.sleep: records each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
