"""An OpenAI-compatible HTTP server on 127.0.0.1, for testing the real provider path.

litellm's `openai/<model>` with `api_base=<server>/v1` talks to it over real HTTP.
Replies to /v1/chat/completions come from a queue (`enqueue`) of:
- a string: a normal completion with that content;
- (status, headers, body): a raw HTTP answer (429 with Retry-After, 500, junk);
- HANG: no answer until the server closes (a deterministic client timeout).
With the queue empty, `responder(messages) -> str` answers. /v1/embeddings returns
deterministic vectors derived from the text. `latency` delays every answer (benchmarks).

`hold(n)` keeps back the replies from the n-th chat request on (counted from the call, as
requests arrive) until `Hold.release()`: a kill test acts while a run certainly waits on its
model, so the run cannot have finished before the kill lands (see docs/RELIABILITY.md).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from tests.loopback import HANG, LoopbackServer, QuietHandler, send

__all__ = ["HANG", "Hold", "OpenAIServer", "fake_vector"]


class Hold:
    """A gate on a server's replies: from the `first`-th chat request that `match`es on, each
    such reply waits until `release()` (or the server closes). `wait()` returns once one is
    waiting: the caller then knows the client is inside that call."""

    def __init__(self, first: int, match: Callable[[dict], bool] | None):
        self.first, self.match = first, match
        self.seen = 0  # matching chat requests since the hold was made
        self.holding = threading.Event()
        self.released = threading.Event()

    def takes(self, headers: dict) -> bool:
        """Count a chat request; True when its reply is to be held (called under the lock)."""
        if self.released.is_set() or (self.match is not None and not self.match(headers)):
            return False
        self.seen += 1
        return self.seen >= self.first

    def wait(self, timeout: float = 120) -> bool:
        return self.holding.wait(timeout)

    def release(self) -> None:
        self.released.set()


def fake_vector(text: str, dim: int = 16) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 128) / 128 for b in digest[:dim]]


class _PostHandler(QuietHandler):
    def read_request(self) -> tuple[dict, dict]:
        """The JSON body ({} when it is not JSON) and the headers, names in lower case."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        return body, {k.lower(): v for k, v in self.headers.items()}

    def do_POST(self) -> None:
        body, headers = self.read_request()
        server = self.owner
        reply = server._next(self.path, body, headers)
        hold = server._held(self.path, headers)
        if hold is not None:  # the client is in this call until the test lets the reply go
            hold.holding.set()
            hold.released.wait(timeout=600)  # close() releases every hold
        if reply is HANG:
            server.release.wait(timeout=60)
            return
        if server.latency:
            time.sleep(server.latency)  # simulated provider latency, not synchronisation
        status, headers, payload = reply
        send(self, status, {"Content-Type": "application/json", **headers}, payload)


class OpenAIServer(LoopbackServer):
    handler_class = _PostHandler

    def __init__(self, responder: Callable[[list], str] | None = None, latency: float = 0.0):
        self.queue: deque = deque()
        self.responder = responder
        self.latency = latency
        self.holds: list[Hold] = []
        super().__init__()

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def enqueue(self, *replies: Any) -> OpenAIServer:
        with self.lock:
            self.queue.extend(replies)
        return self

    def hold(self, first: int = 1, match: Callable[[dict], bool] | None = None) -> Hold:
        """Hold the replies to the `first`-th chat request from now on (only requests whose
        lower-cased headers `match`, when given) until the returned Hold is released."""
        hold = Hold(first, match)
        with self.lock:
            self.holds.append(hold)
        return hold

    def close(self) -> None:
        for hold in self.holds:
            hold.release()
        super().close()

    def chat_requests(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def _held(self, path: str, headers: dict) -> Hold | None:  # called from handler threads
        """The Hold this request's reply waits for (None: answer at once)."""
        if not path.endswith("/chat/completions"):
            return None
        with self.lock:
            return next((h for h in self.holds if h.takes(headers)), None)

    def _next(self, path: str, body: dict, headers: dict) -> Any:  # called from handler threads
        with self.lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
            if path.endswith("/embeddings"):
                return (200, {}, _embeddings(body))
            if self.queue:
                reply = self.queue.popleft()
            elif self.responder is not None:
                reply = self.responder(body.get("messages") or [])
            else:
                reply = (500, {}, {"error": {"message": "nothing scripted", "type": "server_error"}})
        if isinstance(reply, str):
            return (200, {}, _completion(body, reply))
        return reply


def _embeddings(body: dict) -> dict:
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    return {"object": "list", "model": body.get("model"),
            "data": [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                     for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}


def _completion(body: dict, content: str) -> dict:
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "test"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(content.split()),
                      "total_tokens": prompt_words + len(content.split())}}
