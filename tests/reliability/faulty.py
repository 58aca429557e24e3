"""An OpenAI-compatible loopback server that injects provider faults, seeded.

Whether a request gets a fault, and which, is drawn from a hash of (seed, the request
body, how many times that exact body has arrived before): the same run meets the same
faults whatever order its concurrent calls arrive in, and a retry of a faulted request
gets a fresh draw. Faults are real HTTP behaviour on the socket, not mocks:

- 429 with Retry-After: 0, and 429 without it (the client backs off);
- 500, 502, 503 with a JSON error body;
- a dropped connection (closed without a response);
- a timeout (no answer until the client has given up, then closed);
- a truncated body (Content-Length promises more than is sent);
- a non-JSON body with status 200;
- a completion with no choices;
- an unstructured reply (prose that ignores the requested format).

`log` records, per request, the body's hash, the fault (or "ok") and the path, so a
test can tell which calls had succeeded.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter

from tests.loopback import send
from tests.openai_server import OpenAIServer, _completion, _PostHandler

FAULTS = ("429-retry-after", "429", "500", "502", "503", "drop", "timeout", "truncated", "non-json",
          "no-choices", "unstructured")
UNSTRUCTURED = ("What a fascinating combination of fields. I would be glad to think about it "
                "further; there are many possibilities and much to consider.")


def body_hash(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


class _FaultyHandler(_PostHandler):
    def do_POST(self) -> None:
        body, headers = self.read_request()
        server: FaultyServer = self.owner
        fault = server.draw(self.path, body, headers)
        if fault == "ok" or (fault == "unstructured" and not self.path.endswith("/chat/completions")):
            status, hdrs, payload = server._next(self.path, body, headers)
            send(self, status, {"Content-Type": "application/json", **hdrs}, payload)
        elif fault == "unstructured":
            send(self, 200, {}, _completion(body, UNSTRUCTURED))
        elif fault.startswith("429"):
            extra = {"Retry-After": "0"} if fault == "429-retry-after" else {}
            send(self, 429, extra, {"error": {"message": "slow down", "type": "rate_limit_error"}})
        elif fault in ("500", "502", "503"):
            send(self, int(fault), {}, {"error": {"message": f"upstream {fault}", "type": "server_error"}})
        elif fault == "drop":
            self.close_connection = True
        elif fault == "timeout":
            server.release.wait(timeout=server.hang_seconds)
            self.close_connection = True
        elif fault == "truncated":
            data = json.dumps(_completion(body, "This answer never arrives in full.")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif fault == "non-json":
            send(self, 200, {"Content-Type": "text/html"}, "<html><body>Bad gateway</body></html>")
        elif fault == "no-choices":
            send(self, 200, {}, {"id": "x", "object": "chat.completion", "created": 1,
                                 "model": body.get("model", "m"), "choices": []})


class FaultyServer(OpenAIServer):
    """OpenAIServer whose requests fail with probability `rate` (seeded, per body)."""

    handler_class = _FaultyHandler

    def __init__(self, seed: int, rate: float = 0.2, responder=None, hang_seconds: float = 4.0):
        self.seed = seed
        self.rate = rate
        self.hang_seconds = hang_seconds
        self.seen: Counter[str] = Counter()
        self.log: list[dict] = []
        self._draw_lock = threading.Lock()
        super().__init__(responder=responder)

    def draw(self, path: str, body: dict, headers: dict) -> str:
        h = body_hash({"path": path, **body})
        with self._draw_lock:
            n = self.seen[h]
            self.seen[h] += 1
            digest = hashlib.sha256(f"{self.seed}:{h}:{n}".encode()).digest()
            u = int.from_bytes(digest[:8], "big") / 2**64
            fault = "ok" if u >= self.rate else FAULTS[int.from_bytes(digest[8:12], "big") % len(FAULTS)]
            self.log.append({"hash": h, "fault": fault, "path": path, "headers": headers})
        return fault

    def succeeded(self) -> set[str]:
        """Hashes of request bodies that got a usable answer (a plain or unstructured 200)."""
        with self._draw_lock:
            return {e["hash"] for e in self.log if e["fault"] in ("ok", "unstructured")}

    def faults(self) -> Counter[str]:
        with self._draw_lock:
            return Counter(e["fault"] for e in self.log)
