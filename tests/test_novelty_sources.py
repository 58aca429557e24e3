"""The novelty check's online literature against loopback servers speaking Semantic
Scholar's (/graph/v1/paper/search), OpenAlex's (/works?search=) and arXiv's (Atom export
API) formats: the order of the sources, the breaker, Retry-After, 500s, timeouts, empty
answers, and a re-run that makes no request."""
from __future__ import annotations

import pytest

from rt_core.models.embed import Embedder
from rt_core.run.novelty import OnlineLiterature, assess
from rt_core.types import Paper, Proposal
from tests.fakeservers import HANG

S2 = "/graph/v1"
OA = "/openalex"
AX = "/arxiv"

PROBLEM = "How can language model agents plan multi-step tasks on realistic websites?"
METHOD = "We let language model agents browse websites and plan multi-step web tasks."

S2_HIT = {
    "paperId": "0f2a7c0bbd4c1e5d", "externalIds": {"ArXiv": "2307.13854", "CorpusId": 260164780},
    "url": "https://www.semanticscholar.org/paper/0f2a7c0bbd4c1e5d",
    "title": "WebArena: A Realistic Web Environment for Building Autonomous Agents",
    "abstract": "Language model agents complete multi-step tasks on realistic websites; we build "
                "an environment where agents plan and act on the web.",
    "venue": "ICLR", "year": 2024, "fieldsOfStudy": ["Computer Science"],
    "authors": [{"authorId": "1", "name": "Shuyan Zhou"}],
}
OA_WORK = {
    "id": "https://openalex.org/W4385245566", "doi": "https://doi.org/10.48550/arxiv.2306.06070",
    "title": "Mind2Web: Towards a Generalist Agent for the Web",
    "display_name": "Mind2Web: Towards a Generalist Agent for the Web", "publication_year": 2023,
    "primary_location": {"landing_page_url": "https://arxiv.org/abs/2306.06070",
                         "source": {"display_name": "arXiv"}},
    "authorships": [{"author": {"display_name": "Xiang Deng"}}],
    "abstract_inverted_index": {"Agents": [0], "that": [1], "follow": [2], "language": [3],
                                "instructions": [4], "on": [5], "real": [6], "websites": [7]},
}
AX_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>http://arxiv.org/api/8Xz</id>
  <title type="html">ArXiv Query</title>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{n}</opensearch:totalResults>
{entries}</feed>
"""
AX_ENTRY = """  <entry>
    <id>http://arxiv.org/abs/2207.01206v4</id>
    <published>2022-07-04T03:14:55Z</published>
    <title>WebShop: Towards Scalable Real-World Web Interaction with Grounded
  Language Agents</title>
    <summary>Language agents shop on a simulated website by planning multi-step tasks.</summary>
    <author><name>Shunyu Yao</name></author>
  </entry>
"""


def s2_body(*rows):
    if not rows:
        return {"total": 0, "offset": 0}  # what S2 sends for no match: no "data" at all
    return {"total": len(rows), "offset": 0, "next": len(rows), "data": list(rows)}


def oa_body(*rows):
    return {"meta": {"count": len(rows), "page": 1, "per_page": 10}, "results": list(rows),
            "group_by": []}


def feed(*entries):
    return AX_FEED.format(n=len(entries), entries="".join(entries))


@pytest.fixture
def literature(fake_server, store, sleeps, closing):
    def make(timeout: float = 5.0):
        urls = {"semantic_scholar": fake_server.url + S2, "openalex": fake_server.url + OA,
                "arxiv": fake_server.url + AX}
        return closing(OnlineLiterature(store.http_cache, sleep=sleeps, timeout=timeout,
                                        base_urls=urls))
    return make


@pytest.fixture
def check(community):
    embedder = Embedder(store=community)

    def run(lit):
        return assess(Proposal(q1=PROBLEM, q5=METHOD), community, embedder, lit)
    return run


def hits(server, prefix):
    return [r for r in server.hits() if r.path.startswith(prefix)]


def test_semantic_scholar_answers_first_and_names_its_papers(fake_server, literature, check):
    fake_server.json(S2 + "/paper/search", s2_body(S2_HIT))
    novelty = check(literature())
    assert novelty.online and novelty.sources == ["store", "semantic_scholar"]
    titles = {p.title: p for f in novelty.facets for p in f.nearest}
    web = titles[S2_HIT["title"]]
    assert web.source == "semantic_scholar" and web.year == 2024 and web.url == S2_HIT["url"]
    assert not hits(fake_server, OA) and not hits(fake_server, AX)  # nobody else was asked
    sent = hits(fake_server, S2)[0]
    assert "agents" in sent.param("query") and "title" in sent.param("fields")
    # every facet compared the store's papers and the ones found online
    assert all(f.searched == len(community_papers()) + 1 for f in novelty.facets)


def community_papers():
    from tests.conftest import PAPERS
    return PAPERS


def test_a_rerun_makes_no_request(fake_server, literature, check):
    fake_server.json(S2 + "/paper/search", s2_body(S2_HIT))
    first = check(literature())
    asked = len(fake_server.hits())
    second = check(literature())  # a new check, a new client: the store's cache answers
    assert len(fake_server.hits()) == asked == 2
    assert second.to_dict() == first.to_dict()


def test_429_with_a_short_retry_after_is_waited_out(fake_server, literature, check, sleeps):
    fake_server.route(S2 + "/paper/search", (429, {"Retry-After": "2"}, {"message": "slow down"}),
                      (200, {}, s2_body(S2_HIT)))
    novelty = check(literature())
    assert sleeps.waits[0] == 2.0  # the wait it asked for, through the injected sleep
    assert "semantic_scholar" in novelty.sources and not hits(fake_server, OA)


def test_429_asking_too_long_a_wait_moves_on_and_opens_the_breaker(fake_server, literature,
                                                                    check, sleeps):
    fake_server.json(S2 + "/paper/search", {"message": "Too Many Requests"}, status=429,
                     headers={"Retry-After": "3600"})
    fake_server.json(OA + "/works", oa_body(OA_WORK))
    lit = literature()
    novelty = check(lit)
    assert sleeps.waits == []  # an hour is not waited
    assert novelty.sources == ["store", "openalex"]
    assert len(hits(fake_server, S2)) == 1  # the second facet skipped the open breaker
    assert lit.breakers["semantic_scholar"].is_open
    assert any("Semantic Scholar failed" in n for n in novelty.notes)
    assert any("Semantic Scholar skipped" in n for n in novelty.notes)
    mind2web = [p for f in novelty.facets for p in f.nearest if p.source == "openalex"]
    assert mind2web and mind2web[0].url == "https://arxiv.org/abs/2306.06070"


def test_500s_and_timeouts_hand_over_to_arxiv(fake_server, literature, check):
    fake_server.json(S2 + "/paper/search", {"error": "Internal"}, status=500)
    fake_server.route(OA + "/works", HANG)
    fake_server.route(AX + "/api/query", (200, {}, feed(AX_ENTRY)))
    lit = literature(timeout=0.5)
    novelty = check(lit)
    assert novelty.sources == ["store", "arxiv"]
    paper = next(p for f in novelty.facets for p in f.nearest if p.source == "arxiv")
    assert paper.title.startswith("WebShop: Towards Scalable") and paper.year == 2022
    assert paper.url == "https://arxiv.org/abs/2207.01206"
    query = hits(fake_server, AX)[0].param("search_query")
    assert query.startswith("all:") and " OR " in query
    # two failures each (one per facet) open both breakers
    assert lit.breakers["semantic_scholar"].is_open and lit.breakers["openalex"].is_open


def test_every_source_failing_gives_one_clear_note_and_store_verdicts(fake_server, literature, check):
    fake_server.json(S2 + "/paper/search", {"error": "down"}, status=503)
    fake_server.json(OA + "/works", {"error": "down"}, status=500)
    fake_server.json(AX + "/api/query", "Rate exceeded.", status=503)
    novelty = check(literature())
    assert not novelty.online and novelty.sources == ["store"]
    failed = [n for n in novelty.notes if n.startswith("every online source failed")]
    assert len(failed) == 1
    assert novelty.warning == failed[0]  # the one note shown as a warning, by its field
    assert all(name in failed[0] for name in ("Semantic Scholar", "OpenAlex", "arXiv"))
    assert all(f.verdict for f in novelty.facets) and all(f.searched == 6 for f in novelty.facets)


def test_nothing_anywhere_is_no_close_match_in_0_papers(fake_server, literature, store):
    """An empty store and three sources that find nothing: a verdict, never a crash."""
    fake_server.json(S2 + "/paper/search", s2_body())
    fake_server.json(OA + "/works", oa_body())
    fake_server.route(AX + "/api/query", (200, {}, feed()))
    novelty = assess(Proposal(q1=PROBLEM, q5=METHOD), store, Embedder(store=store), literature())
    assert [f.verdict for f in novelty.facets] == ["no close match found in 0 papers searched"] * 2
    assert not novelty.online
    assert any("no online source found a paper" in n for n in novelty.notes)
    assert any("Semantic Scholar found nothing" in n for n in novelty.notes)


def test_an_online_paper_found_twice_is_listed_once(fake_server, literature, community):
    fake_server.json(S2 + "/paper/search", s2_body(S2_HIT))
    community.corpus.upsert_papers([Paper(id="arxiv:2307.13854", title=S2_HIT["title"],
                                          abstract=S2_HIT["abstract"], year=2024)])
    novelty = assess(Proposal(q1=PROBLEM, q5=METHOD), community, Embedder(store=community),
                     literature())
    for facet in novelty.facets:
        assert [p.title for p in facet.nearest].count(S2_HIT["title"]) == 1
