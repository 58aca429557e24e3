"""The community graph: researchers (agent nodes) and papers (data nodes).

Edges are `author` (researcher -> paper), `cite` (paper -> paper) and
`review` (researcher -> paper). Researcher-researcher edges are left out on
purpose: co-authorship is the 2-hop path researcher -> paper <- researcher.
"""
from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import networkx as nx

from .types import Paper, Researcher, Run

PROPOSAL_NODE = "proposal"


def build_graph(researchers: Iterable[Researcher], papers: Iterable[Paper]) -> nx.MultiDiGraph:
    """The selection as a graph: author edges to selected papers, cite edges among them."""
    g = nx.MultiDiGraph()
    papers = list(papers)
    paper_ids = {p.id for p in papers}
    for p in papers:
        g.add_node(p.id, kind="paper", label=p.title, year=p.year, fields=list(p.fields))
    for r in researchers:
        g.add_node(r.id, kind="researcher", label=r.name, fields=list(r.fields))
        for pid in r.publication_ids:
            if pid in paper_ids:
                g.add_edge(r.id, pid, kind="author")
    for p in papers:
        for ref in p.references:
            if ref in paper_ids:
                g.add_edge(p.id, ref, kind="cite")
    return g


def add_proposal(g: nx.MultiDiGraph, title: str, author_ids: Iterable[str],
                 cited_ids: Iterable[str], reviewer_ids: Iterable[str]) -> nx.MultiDiGraph:
    """A copy of the graph with the generated paper, its authors, citations and reviewers."""
    g = g.copy()
    g.add_node(PROPOSAL_NODE, kind="proposal", label=title or "Generated proposal", fields=[])
    for a in author_ids:
        if a in g:
            g.add_edge(a, PROPOSAL_NODE, kind="author")
    for c in cited_ids:
        if c in g:
            g.add_edge(PROPOSAL_NODE, c, kind="cite")
    for r in reviewer_ids:
        if r not in g:
            g.add_node(r, kind="researcher", label=r, fields=[])
        g.add_edge(r, PROPOSAL_NODE, kind="review")
    return g


def run_graph(corpus, run: Run, *, title: str | None = None, authors: Iterable[str] | None = None,
              papers: Iterable[str] | None = None,
              reviewers: Iterable[str] | None = None) -> nx.MultiDiGraph:
    """A run's neighbourhood (its researchers and papers still in the store) with a star for
    what it wrote, read from `corpus` (the store's corpus) and assembled here once, so Results
    and the Candidates view draw the same graph.

    Each keyword left out is the run's own: its proposal's Q1 as the title, its researchers
    as authors, its papers as citations, its reviewers. A candidate passes its own title and
    lead, and no reviewers. A reviewer the store knows is labelled by name and fields; one it
    no longer knows stays a node named by its id, so the review is never hidden."""
    rids = [i for i in run.config.researcher_ids if corpus.researcher_exists(i)]
    pids = [i for i in run.config.paper_ids if corpus.paper_exists(i)]
    g = build_graph(corpus.get_researchers(rids), corpus.get_papers(pids))
    if title is None:
        title = run.proposal.q1 if run.proposal else "Generated proposal (unfinished)"
    if reviewers is None:
        reviewers = [r.reviewer_id for r in run.reviews]
    reviewers = list(reviewers)
    g = add_proposal(g, title, rids if authors is None else authors, pids if papers is None else papers,
                     reviewers)
    for rv in reviewers:
        if corpus.researcher_exists(rv):
            rec = corpus.get_researcher(rv)
            g.nodes[rv]["label"] = rec.name
            g.nodes[rv]["fields"] = list(rec.fields)
    return g


def neighbours(g: nx.MultiDiGraph, node: str, edge_kind: str | None = None,
               node_kind: str | None = None) -> list[str]:
    """Nodes one edge away in either direction, optionally filtered by edge and node kind."""
    out = []
    for u, v, data in list(g.out_edges(node, data=True)) + list(g.in_edges(node, data=True)):
        other = v if u == node else u
        if edge_kind and data.get("kind") != edge_kind:
            continue
        if node_kind and g.nodes[other].get("kind") != node_kind:
            continue
        if other not in out:
            out.append(other)
    return out


def coauthors(g: nx.MultiDiGraph, researcher_id: str) -> list[str]:
    """Researchers sharing a paper with this one (the 2-hop path)."""
    out = []
    for p in neighbours(g, researcher_id, edge_kind="author", node_kind="paper"):
        for r in neighbours(g, p, edge_kind="author", node_kind="researcher"):
            if r != researcher_id and r not in out:
                out.append(r)
    return out


def to_json(g: nx.MultiDiGraph) -> dict:
    return nx.node_link_data(g, edges="edges")


def from_json(data: dict) -> nx.MultiDiGraph:
    return nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")


# -- how interdisciplinary is a selection -------------------------------------------

def field_distance(a: str, b: str, domains: dict[str, str]) -> float:
    """0 same field, 0.5 same broad domain, 1 different domains."""
    if a == b:
        return 0.0
    da, db = domains.get(a), domains.get(b)
    return 0.5 if da and da == db else 1.0


def interdisciplinarity(fields: Iterable[str], domains: dict[str, str]) -> dict:
    """How many fields a selection spans and how far apart they are.

    The ResearchTown paper saw mixing four or more distant fields produce
    buzzword soup, while two or three fields work; the warning says so.
    """
    # Only fields the store knows count: free-form keywords from an upload are not fields.
    fs = sorted(set(f for f in fields if f in domains))
    pairs = list(combinations(fs, 2))
    dists = [field_distance(a, b, domains) for a, b in pairs]
    n_domains = len({domains.get(f, f) for f in fs})
    mean = sum(dists) / len(dists) if dists else 0.0
    warning = ""
    if len(fs) >= 4 and n_domains >= 3:
        warning = (f"This neighbourhood mixes {len(fs)} fields from {n_domains} distant domains. "
                   "With four or more distant fields, generated ideas tend to become a mix of "
                   "buzzwords without focus; two or three fields work best.")
    return {"fields": fs, "n_fields": len(fs), "n_domains": n_domains,
            "mean_distance": round(mean, 3), "max_distance": max(dists) if dists else 0.0,
            "warning": warning}
