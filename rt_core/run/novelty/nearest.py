"""The papers nearest to one facet of an idea: in the store, and among papers found online.

Why both rankings in the store: the store's hybrid search (store/topics.py) finds papers
that share the facet's words even when an embedding misses them, and the paper vectors
(store/paper_vectors.py) compare the facet with every paper by meaning. Every candidate
from either is then scored the same way, by the cosine of the facet and the paper's title
and abstract under the run's embedder, so one threshold applies to all of them, online
papers included. `searched` is how many papers the facet was really compared with.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...sources.ids import normalise_title
from ...store.paper_vectors import paper_text
from ...store.topics import Topics
from ...types import NearPaper, Paper
from ..evidence.evaluate import content_text
from .online import query_words

SHOWN = 5  # nearest papers kept per facet
FILL_LIMIT = 5000  # papers embedded per check at most (the bundled MiniLM: ~40 ms each, once)
WORD_HITS = 20


def facet_text(answer: str) -> str:
    """What is compared: the answer without headings and sentence stems."""
    return content_text(answer)


def link(paper: Paper) -> str:
    if paper.url:
        return paper.url
    if paper.arxiv_id:
        return f"https://arxiv.org/abs/{paper.arxiv_id}"
    if paper.doi:
        return f"https://doi.org/{paper.doi}"
    return ""


def in_store(store, embedder, text: str, limit: int = SHOWN) -> tuple[list[NearPaper], int]:
    """The store's nearest papers to `text` (best first) and how many papers it compared."""
    topics = Topics(store.corpus, store.corpus.vectors, embedder.name, embedder.encode)
    topics.prepare(FILL_LIMIT)
    ids, matrix = store.corpus.vectors.matrix(embedder.name)
    if not ids or not text.strip():
        return [], len(ids)
    query = embedder.encode([text])[0]
    sims = matrix @ np.asarray(query, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[:limit * 4]
    by_id = {ids[i]: float(sims[i]) for i in order}
    words = " ".join(query_words(text, 12))
    if words:  # papers sharing the facet's words, scored by the same cosine
        row = {pid: i for i, pid in enumerate(ids)}
        for hit in topics.papers(words, limit=WORD_HITS, fill=0):
            if hit.paper.id in row:
                by_id.setdefault(hit.paper.id, float(sims[row[hit.paper.id]]))
    seen = store.corpus.seen_paper_ids(by_id)  # the vectors hold every visitor's papers
    best = sorted(((pid, s) for pid, s in by_id.items() if pid in seen), key=lambda kv: -kv[1])[:limit]
    papers = {p.id: p for p in store.corpus.get_papers(pid for pid, _ in best)}
    return [near(papers[pid], sim, "store") for pid, sim in best if pid in papers], len(ids)


def online_papers(embedder, text: str, papers: list[Paper], source: str) -> list[NearPaper]:
    """Papers found online, scored by the same cosine as the store's, best first."""
    papers = [p for p in papers if p.title.strip()]
    if not papers or not text.strip():
        return []
    vecs = embedder.encode([text] + [paper_text(p.title, p.abstract) for p in papers])
    sims = vecs[1:] @ vecs[0]
    scored = [near(p, float(s), source) for p, s in zip(papers, sims, strict=True)]
    return sorted(scored, key=lambda n: -n.similarity)


def near(paper: Paper, similarity: float, source: str) -> NearPaper:
    return NearPaper(title=paper.title, similarity=round(similarity, 4), year=paper.year,
                     url=link(paper), source=source, paper_id=paper.id if source == "store" else "")


def merged(*rankings: Iterable[NearPaper], limit: int = SHOWN) -> list[NearPaper]:
    """One ranking, best first, each paper once (by its normalised title; the closer kept)."""
    seen: dict[str, NearPaper] = {}
    for ranking in rankings:
        for paper in ranking:
            key = normalise_title(paper.title)
            if key not in seen or paper.similarity > seen[key].similarity:
                seen[key] = paper
    return sorted(seen.values(), key=lambda n: -n.similarity)[:limit]
