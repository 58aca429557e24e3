"""Which fields sit next to a proposal's fields, judged by the community graph.

A reviewer from a neighbouring field sees what the proposal's own fields take for granted.
"Neighbouring" is read from the graph, not from a fixed list of related fields: two fields
are linked when researchers of one co-author papers with researchers of the other, or when
papers of one cite papers of the other. The graph is built from a bounded neighbourhood
(the authors and the chosen fields' candidates, their papers, the co-authors of those
papers and the papers they cite), so a large store is never loaded whole.

Authors' close co-authors are found here too: someone who has written papers with an author
again and again is not an outside reader, whatever their field.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations, product

import networkx as nx

from ...graph import build_graph, neighbours

PAPERS_EACH = 20  # a researcher's newest papers that enter the neighbourhood graph
CITED_MAX = 200  # cited papers added to the graph at most
# A close co-author has written at least this many stored papers with one author: a working
# relationship, not one shared paper (often one of a consortium's, or a single collaboration).
CLOSE_SHARED = 2


@dataclass
class Link:
    """One field next to the proposal's fields, and what ties them (counts of papers)."""
    field: str
    coauthored: int = 0
    cited: int = 0
    near: list[str] = field(default_factory=list)  # the proposal's fields it is tied to

    @property
    def weight(self) -> int:
        return self.coauthored + self.cited


def close_coauthors(corpus, author_ids: Iterable[str], shared: int = CLOSE_SHARED) -> set[str]:
    """Everyone who shares at least `shared` stored papers with one of the authors (the
    authors excluded)."""
    authors = set(author_ids)
    counts: dict[tuple[str, str], int] = {}
    for a in corpus.get_researchers([a for a in authors if corpus.researcher_exists(a)]):
        for ids in corpus.authors_of(a.publication_ids).values():
            for rid in set(ids) - authors:
                counts[a.id, rid] = counts.get((a.id, rid), 0) + 1
    return {rid for (_, rid), n in counts.items() if n >= shared}


def neighbourhood_graph(corpus, researcher_ids: Iterable[str]) -> nx.MultiDiGraph:
    """The community graph around these researchers: their newest papers, everyone who
    wrote those papers, and the stored papers those papers cite (with their authors)."""
    seeds = [r for r in dict.fromkeys(researcher_ids) if corpus.researcher_exists(r)]
    pids = [pid for r in corpus.get_researchers(seeds) for pid in r.publication_ids[:PAPERS_EACH]]
    papers = corpus.get_papers(pids)
    cited = [ref for p in papers for ref in p.references if corpus.paper_exists(ref)]
    papers += corpus.get_papers([c for c in dict.fromkeys(cited) if c not in set(pids)][:CITED_MAX])
    writers = {rid for ids in corpus.authors_of([p.id for p in papers]).values() for rid in ids}
    return build_graph(corpus.get_researchers(sorted(writers | set(seeds))), papers)


def _fields(g: nx.MultiDiGraph, node: str) -> set[str]:
    """A node's fields; a paper without any takes its authors'."""
    own = set(g.nodes[node].get("fields") or ())
    if own or g.nodes[node].get("kind") != "paper":
        return own
    return {f for a in neighbours(g, node, "author", "researcher") for f in g.nodes[a].get("fields") or ()}


def field_graph(g: nx.MultiDiGraph) -> nx.Graph:
    """Fields as nodes; an edge counts the co-authored papers and citations between two
    fields (a paper counts once per pair of fields it ties)."""
    out = nx.Graph()

    def tie(pairs, kind: str) -> None:
        for a, b in {tuple(sorted(p)) for p in pairs if p[0] != p[1]}:
            if not out.has_edge(a, b):
                out.add_edge(a, b, coauthored=0, cited=0)
            out[a][b][kind] += 1

    for node, data in g.nodes(data=True):
        if data.get("kind") != "paper":
            continue
        writers = neighbours(g, node, "author", "researcher")
        tie([p for x, y in combinations(writers, 2) for p in product(_fields(g, x), _fields(g, y))],
            "coauthored")
    for u, v, data in g.edges(data=True):
        if data.get("kind") == "cite":
            tie(list(product(_fields(g, u), _fields(g, v))), "cited")
    return out


def adjacent_fields(fields_graph: nx.Graph, fields: Iterable[str]) -> list[Link]:
    """Fields outside `fields` with an edge to one of them, the most strongly tied first."""
    fields = list(fields)
    chosen = [f for f in fields if f in fields_graph]
    links: dict[str, Link] = {}
    for f in chosen:
        for other in fields_graph.neighbors(f):
            if other in fields:
                continue
            link = links.setdefault(other, Link(other))
            link.coauthored += fields_graph[f][other]["coauthored"]
            link.cited += fields_graph[f][other]["cited"]
            link.near.append(f)
    return sorted(links.values(), key=lambda k: (-k.weight, k.field))
