"""Suggestions online, only when asked: OpenAlex topics and their authors, Semantic Scholar
papers, from a loopback server that answers in the real APIs' shapes; answers cached in the
store, a failing source a note."""
from __future__ import annotations

import pytest

from rt_core.suggest import suggest
from rt_core.suggest.online import OnlineCandidates
from tests.test_suggest import TOPIC, plant

EARTH = {"id": "https://openalex.org/fields/19", "display_name": "Earth and Planetary Sciences"}
PHYSICAL = {"id": "https://openalex.org/domains/3", "display_name": "Physical Sciences"}
TOPICS = {"meta": {"count": 1}, "results": [
    {"id": "https://openalex.org/T11444", "display_name": "Galaxy surveys and machine reading of catalogues",
     "subfield": {"id": "https://openalex.org/subfields/1912", "display_name": "Space and Planetary Science"},
     "field": EARTH, "domain": PHYSICAL, "works_count": 5120}]}
AUTHORS = {"meta": {"count": 1}, "results": [
    {"id": "https://openalex.org/A5000000001", "display_name": "Olga Orbit", "works_count": 88,
     "last_known_institutions": [{"display_name": "Lund Observatory"}],
     "topics": [{"id": "https://openalex.org/T11444", "count": 30,
                 "display_name": "Galaxy surveys and machine reading of catalogues",
                 "field": EARTH, "domain": PHYSICAL}]}]}
S2 = {"total": 1, "offset": 0, "data": [
    {"paperId": "5c5751d45e298cea054f32b392c12c61027d2fe7", "externalIds": {"DOI": "10.1000/gal.1"},
     "title": "Reading galaxy survey catalogues with language models", "year": 2025,
     "abstract": "We let language models read survey catalogues of galaxies.", "venue": "ApJ",
     "authors": [{"authorId": "1", "name": "Olga Orbit"}], "fieldsOfStudy": ["Physics"],
     "url": "https://www.semanticscholar.org/paper/5c57"}]}


@pytest.fixture
def planted_store(store):
    return plant(store)


def online(server, key: str = "", cache=None) -> OnlineCandidates:
    def no_wait(_seconds: float) -> None:
        return None

    return OnlineCandidates(cache, key, mailto="", sleep=no_wait,
                            base_urls={"openalex": server.url,
                                       "semantic_scholar": server.url + "/graph/v1"})


def script(server) -> None:
    server.json("/topics", TOPICS)
    server.json("/authors", AUTHORS)
    server.json("/graph/v1/paper/search", S2)


def test_online_reaches_a_field_the_store_lacks(planted_store, fake_server):
    script(fake_server)
    src = online(fake_server, cache=planted_store.http_cache)
    result = suggest(planted_store, TOPIC, limit=8, online=src)
    olga = next(s for s in result.researchers if s.source == "openalex")
    assert olga.label == "Olga Orbit" and olga.fields == ["Earth and Planetary Sciences"]
    assert olga.import_id == "A5000000001" and olga.detail == "Lund Observatory"
    assert olga.parts["topic"] > 0.5 and "found online (openalex)" in olga.reason
    paper = next(s for s in result.papers if s.source == "semantic_scholar")
    assert paper.record["title"].startswith("Reading galaxy survey")
    assert any(s.source == "store" for s in result.researchers)  # the store's still come
    assert fake_server.hits("/authors")[0].param("filter") == "topics.id:T11444"
    src.close()
    asked = len(fake_server.hits())
    again = online(fake_server, cache=planted_store.http_cache)  # as a new process would
    suggest(planted_store, TOPIC, limit=8, online=again)  # the same question: from the store
    again.close()
    assert len(fake_server.hits()) == asked


def test_a_failing_source_is_a_note_and_the_store_answers(planted_store, fake_server):
    fake_server.json("/topics", {"error": "down"}, status=500)
    fake_server.json("/graph/v1/paper/search", S2)
    src = online(fake_server)
    result = suggest(planted_store, TOPIC, limit=4, online=src)
    src.close()
    assert any(n.startswith("OpenAlex could not be asked") for n in result.notes)
    assert result.researchers and all(s.source == "store" for s in result.researchers)


def test_the_s2_key_goes_to_semantic_scholar_only(planted_store, fake_server):
    script(fake_server)
    src = online(fake_server, key="s2-secret")
    suggest(planted_store, TOPIC, limit=4, online=src)
    src.close()
    assert fake_server.hits("/graph/v1/paper/search")[0].headers.get("x-api-key") == "s2-secret"
    assert all("x-api-key" not in h.headers and "s2-secret" not in h.raw_path
               for h in fake_server.hits() if not h.path.startswith("/graph/"))

