"""What the fake servers and the retry tests share: an HTTP server on 127.0.0.1 and a
sleep recorder.

`LoopbackServer` runs a ThreadingHTTPServer on an ephemeral port in a daemon thread.
A subclass sets `handler_class` (a `QuietHandler`, which reaches the server object as
`self.owner`) and answers through `send`. A handler that gets
`HANG` waits on `release`, which `close()` sets: a deterministic client timeout
without sleeping. `requests` records what came in (guarded by `lock`).

`Sleeps` stands in for `time.sleep` and for `asyncio.sleep`: it records each wait
and returns at once, and what it returns can also be awaited.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG = object()  # a response that never comes (until the server is closed)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5. When more clients than that connect at
    # once (15 reviews of the credit bench opening new connections together), Linux
    # drops the extra SYNs and each client retries after its 1 s SYN timeout: a whole
    # second no provider adds. Real servers listen with a backlog in the hundreds.
    request_queue_size = 128
    owner: LoopbackServer


class LoopbackServer:
    """Base for the scripted servers: start on construction, `close()` at teardown."""

    handler_class: type[BaseHTTPRequestHandler]

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.release = threading.Event()
        self.lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", 0), self.handler_class)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.release.set()  # let any HANG handler finish before shutdown
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no access log; `owner` is the LoopbackServer it serves."""

    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as real HTTP servers set it. http.server writes the headers and the
    # body in two sends; with Nagle's algorithm on, the body waited for the client's
    # delayed ACK of the headers (40 ms on Linux) on every reused connection, a delay
    # no provider adds (it was 0.2 s of the orchestration bench's 6 rounds).
    disable_nagle_algorithm = True
    server: _HTTPServer

    @property
    def owner(self) -> Any:
        return self.server.owner

    def log_message(self, *args: Any) -> None:
        pass


def encode(body: Any) -> tuple[bytes, str]:
    """Bytes as they are, text as UTF-8 (Atom XML recognised), anything else as JSON."""
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        ctype = "application/atom+xml" if body.lstrip().startswith("<?xml") else "text/plain"
        return body.encode("utf-8"), ctype + "; charset=utf-8"
    return json.dumps(body).encode("utf-8"), "application/json"


def send(handler: BaseHTTPRequestHandler, status: int, headers: dict, body: Any) -> None:
    """Write one response; a client that already gave up (a timeout test) is not an error."""
    data, ctype = encode(body)
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", headers.get("Content-Type", ctype))
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            if name != "Content-Type":
                handler.send_header(name, str(value))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


class _Done:
    """What a recorded sleep returns: nothing to wait for, in sync or async code."""

    def __await__(self) -> Iterator[None]:
        return iter(())


class Sleeps:
    """Records each requested wait and returns at once.

    Works for `sleep(seconds)` (the paper sources' HttpClient) and for
    `await sleep(seconds)` (LLMClient's `sleep=`)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> _Done:
        self.waits.append(seconds)
        return _Done()
