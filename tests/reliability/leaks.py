"""Where a key could leak: shared scanners for the secrets tests (AppTest and browser)."""
from __future__ import annotations

import json
from pathlib import Path

from rt_core.models.scripted import demo_responder
from tests.openai_server import OpenAIServer


def demo_server() -> OpenAIServer:
    """A loopback OpenAI-compatible server answering like the demo model; it records every
    request (path, headers, body)."""
    return OpenAIServer(responder=lambda messages: demo_responder(messages, {}))


def sightings_in_requests(server: OpenAIServer, keys) -> int:
    """(request, key) pairs where a key appears anywhere in a request: headers or body."""
    return sum(k in json.dumps(r["headers"]) or k in json.dumps(r["body"]) for r in server.requests for k in keys)


def sightings_outside_auth(server: OpenAIServer, keys) -> int:
    """(request, key) pairs where a key appears anywhere but the Authorization header."""
    return sum(k in json.dumps({h: v for h, v in r["headers"].items() if h != "authorization"})
               or k in json.dumps(r["body"]) for r in server.requests for k in keys)


def sightings_in_files(folder: Path, keys) -> tuple[int, int]:
    """(file, key) pairs where a key's bytes appear in a file under folder; and the file count."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    hits = sum(k.encode() in p.read_bytes() for p in files for k in keys)
    return hits, len(files)
