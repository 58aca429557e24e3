from rt_core import graph
from rt_core.types import Paper, Proposal, Researcher, Review, Run, RunConfig

PAPERS = [Paper(id="p1", title="A", references=["p2", "outside"]), Paper(id="p2", title="B"),
          Paper(id="p3", title="C")]
PEOPLE = [Researcher(id="r1", name="One", publication_ids=["p1", "p9"]),
          Researcher(id="r2", name="Two", publication_ids=["p1", "p3"]),
          Researcher(id="r3", name="Three", publication_ids=["p3"])]


def test_graph_has_author_and_cite_edges_and_no_researcher_researcher_edges():
    g = graph.build_graph(PEOPLE, PAPERS)
    kinds = {(u, v, d["kind"]) for u, v, d in g.edges(data=True)}
    assert ("r1", "p1", "author") in kinds and ("p1", "p2", "cite") in kinds
    assert not any(g.nodes[u]["kind"] == g.nodes[v]["kind"] == "researcher" for u, v, _ in kinds)
    assert "outside" not in g and "p9" not in g  # edges only inside the selection


def test_neighbourhood_queries():
    g = graph.build_graph(PEOPLE, PAPERS)
    assert graph.neighbours(g, "p1", edge_kind="author") == ["r1", "r2"]
    assert graph.neighbours(g, "p1", edge_kind="cite") == ["p2"]
    assert sorted(graph.coauthors(g, "r2")) == ["r1", "r3"]


def test_json_round_trip_keeps_nodes_edges_and_attributes():
    g = graph.add_proposal(graph.build_graph(PEOPLE, PAPERS), "New idea", ["r1"], ["p1"], ["r3"])
    back = graph.from_json(graph.to_json(g))
    assert set(back.nodes) == set(g.nodes)
    assert sorted((u, v, d["kind"]) for u, v, d in back.edges(data=True)) == \
        sorted((u, v, d["kind"]) for u, v, d in g.edges(data=True))
    assert back.nodes["proposal"]["label"] == "New idea"
    assert graph.neighbours(back, "proposal", edge_kind="review") == ["r3"]


def test_interdisciplinarity_warns_on_four_distant_fields():
    domains = {"nlp": "computing", "systems": "computing", "astronomy": "physical",
               "biology": "life", "criminology": "social"}
    two = graph.interdisciplinarity(["nlp", "astronomy", "nlp"], domains)
    assert two["n_fields"] == 2 and two["mean_distance"] == 1.0 and two["warning"] == ""
    close = graph.interdisciplinarity(["nlp", "systems"], domains)
    assert close["mean_distance"] == 0.5
    four = graph.interdisciplinarity(["nlp", "astronomy", "biology", "criminology"], domains)
    assert four["n_domains"] == 4 and "four or more" in four["warning"]
    assert graph.interdisciplinarity([], domains)["n_fields"] == 0


STORED = [Researcher(id="r1", name="One", publication_ids=["p1"]), *PEOPLE[1:],
          Researcher(id="r4", name="Four", fields=["nlp"])]


def _run(proposal: Proposal | None, reviewers: list[str]) -> Run:
    config = RunConfig(model="scripted/demo", researcher_ids=["r1", "r2", "gone"], paper_ids=["p1", "p3", "lost"])
    return Run(id="graphrun0001", config=config, status="done", created_at="2026-12-06T04:00:00",
               proposal=proposal, reviews=[Review(reviewer_id=r, score=6) for r in reviewers])


def test_a_runs_graph_is_read_from_the_store_with_its_star_authors_citations_and_reviewers(store):
    store.corpus.upsert_papers(PAPERS)
    store.corpus.upsert_researchers(STORED)
    run = _run(Proposal(q1="A new idea"), ["r4", "r-unknown"])
    g = graph.run_graph(store.corpus, run)
    assert g.nodes[graph.PROPOSAL_NODE]["label"] == "A new idea"
    assert "gone" not in g and "lost" not in g and "p2" not in g and "r3" not in g  # only the run's, still stored
    assert sorted(graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="author")) == ["r1", "r2"]
    assert sorted(graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="cite")) == ["p1", "p3"]
    assert sorted(graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="review")) == ["r-unknown", "r4"]
    assert (g.nodes["r4"]["label"], g.nodes["r4"]["fields"]) == ("Four", ["nlp"])  # a stored reviewer by name
    assert g.nodes["r-unknown"]["label"] == "r-unknown"  # one the store lost stays, by its id
    unfinished = graph.run_graph(store.corpus, _run(None, []))
    assert unfinished.nodes[graph.PROPOSAL_NODE]["label"] == "Generated proposal (unfinished)"


def test_a_candidates_graph_stars_its_own_title_and_lead_without_reviewers(store):
    store.corpus.upsert_papers(PAPERS)
    store.corpus.upsert_researchers(STORED)
    run = _run(Proposal(q1="The winner"), ["r1"])
    g = graph.run_graph(store.corpus, run, title="c2: Second idea", authors=["r2"], papers=["p3"], reviewers=[])
    assert g.nodes[graph.PROPOSAL_NODE]["label"] == "c2: Second idea"
    assert graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="author") == ["r2"]
    assert graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="cite") == ["p3"]
    assert graph.neighbours(g, graph.PROPOSAL_NODE, edge_kind="review") == []
    assert "r1" in g  # still the run's neighbourhood, only not the star's author
