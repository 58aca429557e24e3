"""Paper-source clients come from one factory (rt_core/sources/clients.py): every door asks it,
each client it makes keeps its answers in the store's HTTP cache, and the operator's Semantic
Scholar key goes to Semantic Scholar's address only."""
from __future__ import annotations

import ast
from contextlib import closing
from pathlib import Path

from rt_core.sources import clients

ROOT = Path(__file__).resolve().parent.parent
CLIENT_CLASSES = {"SemanticScholar", "OpenAlex", "ArxivSource", "HttpClient"}
FACTORIES = {"semantic_scholar", "openalex", "arxiv", "clients_for"}


def _doors() -> list[Path]:
    """Every module that may ask for a client: all of rt_core but the sources themselves,
    the shared UI, the pages and the entry file."""
    files = [p for p in (ROOT / "rt_core").rglob("*.py") if "sources" not in p.parts]
    return files + sorted((ROOT / "studio").rglob("*.py")) + sorted((ROOT / "pages").rglob("*.py")) \
        + [ROOT / "app.py"]


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def test_every_door_gets_its_clients_from_the_factory_with_a_cache():
    by_hand, uncached = [], []
    asked = 0
    for path in _doors():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if name in CLIENT_CLASSES:
                by_hand.append(where)
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            if name in FACTORIES and getattr(owner, "id", "") == "clients":
                asked += 1
                first = node.args[0] if node.args else None
                if first is None or (isinstance(first, ast.Constant) and first.value is None):
                    uncached.append(where)
    assert not by_hand, f"clients built by hand, not by rt_core.sources.clients: {by_hand}"
    assert not uncached, f"clients asked for without the store's cache: {uncached}"
    assert asked >= 9  # the doors that ask today: pages, studio, CLI, runs, novelty, suggest


def test_the_factory_uses_the_cache_and_sends_the_key_to_semantic_scholar_only(
        store, fake_server, monkeypatch):
    monkeypatch.setenv("S2_API_KEY", "s2-operator-secret")
    monkeypatch.setenv("OPENALEX_MAILTO", "operator@example.org")
    for var, part in (("RT_S2_URL", "/s2"), ("RT_OPENALEX_URL", "/oa"), ("RT_ARXIV_URL", "/ax")):
        monkeypatch.setenv(var, fake_server.url + part)  # the operator's addresses
        fake_server.json(part + "/probe", {"ok": part})
    made = clients.clients_for(store.http_cache)
    for client in made.values():
        with closing(client):
            assert client.http.cache is store.http_cache
            client.http.get_json("/probe")
    hits = {h.path.split("/")[1]: h for h in fake_server.hits()}
    assert set(hits) == {"s2", "oa", "ax"}
    assert hits["s2"].headers.get("x-api-key") == "s2-operator-secret"
    for part in ("oa", "ax"):
        assert "x-api-key" not in {k.lower() for k in hits[part].headers}
        assert "s2-operator-secret" not in hits[part].raw_path
    assert hits["oa"].param("mailto") == "operator@example.org"
    assert "operator@example.org" not in hits["s2"].raw_path + hits["ax"].raw_path

    again = clients.clients_for(store.http_cache)  # as a new process would: from the store
    for client in again.values():
        with closing(client):
            client.http.get_json("/probe")
    assert len(fake_server.hits()) == 3
