"""Search that finds topics: papers by words and by meaning, researchers by their work.

Why: word matching alone misses a topic phrased differently ("decision making" vs a paper
on "decisions") and full-text over names misses researchers entirely unless the query is
a name. Papers are ranked by reciprocal rank fusion (RRF) of two rankings: full-text
(papers with every word; at half weight, papers with some of them) and cosine similarity to the query
over the precomputed paper vectors (paper_vectors.py). A paper that only the second
ranking found is marked `by_meaning`, so the UI can say so. Researchers whose name or
affiliation matches come first; then researchers ordered by their best-ranked matching
paper and how many of their papers match.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..types import Paper, Researcher
from .search import marks, words

RRF_K = 60  # the usual constant: damps the head of each ranking so neither dominates
MIN_SIMILARITY = 0.3  # MiniLM cosine; unrelated or made-up words score ~0.1-0.21 against
#                       the starter papers, on-topic queries 0.3-0.5
PARTIAL_WEIGHT = 0.5  # a paper with only some of the words is a weaker match
CANDIDATES = 100  # papers taken from each ranking before fusion
STOPWORDS = frozenset(("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in",
                       "into", "is", "it", "of", "on", "or", "the", "to", "with", "about", "how",
                       "what", "which", "who", "why"))
EMPTY_HINT = ("Nothing in the store matches these words or their meaning. Try other words, "
              "clear the field filter, or import papers on this topic.")


@dataclass
class PaperHit:
    paper: Paper
    by_words: bool
    similarity: float | None  # cosine to the query when the meaning ranking found it

    @property
    def by_meaning(self) -> bool:
        """Found by meaning rather than by its words."""
        return not self.by_words


@dataclass
class ResearcherHit:
    researcher: Researcher
    by_name: bool
    papers: int = 0  # their papers among the matches
    best_paper: str = ""  # title of their best-ranked matching paper
    by_meaning: bool = False  # that best paper was found by meaning only


class Topics:
    """Hybrid search over a corpus, with the embedder given by the caller (the store
    imports no model code; `rt_core.topic_search.for_store` gives the bundled MiniLM)."""

    def __init__(self, corpus, vectors, model: str, embed: Callable[[list[str]], np.ndarray]):
        self.corpus, self.vectors, self.model, self.embed = corpus, vectors, model, embed
        self._queries: dict[str, np.ndarray] = {}  # each query text is embedded once

    def query_vector(self, text: str) -> np.ndarray:
        key = " ".join(words(text, limit=64)).lower()
        if key not in self._queries:
            if len(self._queries) > 1024:
                self._queries.clear()
            self._queries[key] = np.asarray(self.embed([key])[0], dtype=np.float32)
        return self._queries[key]

    def prepare(self, limit: int | None = None) -> int:
        """Embed papers that lack a vector (up to `limit`; all when None)."""
        return self.vectors.fill(self.model, self.embed, limit=limit)

    def papers(self, text: str, fields: Iterable[str] = (), limit: int = 50,
               fill: int | None = 256) -> list[PaperHit]:
        """Best first; empty for blank text or when nothing matches words or meaning."""
        ranked = self._fused(text, list(fields), limit, fill)
        papers = {p.id: p for p in self.corpus.get_papers(pid for pid, _, _ in ranked)}
        return [PaperHit(papers[pid], by_words, sim) for pid, by_words, sim in ranked]

    def researchers(self, text: str, fields: Iterable[str] = (), limit: int = 50,
                    fill: int | None = 256) -> list[ResearcherHit]:
        """Name or affiliation matches first, then authors of the matching papers."""
        fields = list(fields)
        if not words(text):
            return [ResearcherHit(r, by_name=False)
                    for r in self.corpus.search_researchers("", fields, limit)]
        out = [ResearcherHit(r, by_name=True)
               for r in self.corpus.search_researchers(text, fields, limit)]
        seen = {h.researcher.id for h in out}
        ranked = self._fused(text, [], CANDIDATES, fill)
        pos = {pid: i for i, (pid, _, _) in enumerate(ranked)}
        by_meaning = {pid: not by_words for pid, by_words, _ in ranked}
        by_author: dict[str, ResearcherHit] = {}
        weight: dict[str, float] = {}
        for pid, rid, title in self._authorship(list(pos)):  # best paper first
            if rid in seen:
                continue
            if rid not in by_author:
                by_author[rid] = ResearcherHit(None, False, 0, title, by_meaning[pid])
            by_author[rid].papers += 1
            # the best paper counts most, more matching papers break near-ties (as in RRF)
            weight[rid] = weight.get(rid, 0.0) + 1.0 / (RRF_K + pos[pid] + 1)
        ranked_ids = sorted(by_author, key=lambda rid: -weight[rid])
        if fields:
            keep = self._in_fields(ranked_ids, fields)
            ranked_ids = [rid for rid in ranked_ids if rid in keep]
        for r in self.corpus.get_researchers(ranked_ids[:max(0, limit - len(out))]):
            by_author[r.id].researcher = r
            out.append(by_author[r.id])
        return out[:limit]

    def _fused(self, text: str, fields: list[str], limit: int,
               fill: int | None) -> list[tuple[str, bool, float | None]]:
        """(paper id, found by words, cosine or None), best first, by RRF of the rankings."""
        if not words(text):
            return []
        self.prepare(fill)
        every, some = self._word_rankings(text, fields)
        by_meaning = self._meaning_ranking(text, fields)
        score: dict[str, float] = {}
        for ranking, weight in ((every, 1.0), (some, PARTIAL_WEIGHT), (list(by_meaning), 1.0)):
            for rank, pid in enumerate(ranking):
                score[pid] = score.get(pid, 0.0) + weight / (RRF_K + rank + 1)
        word_set = set(every) | set(some)
        order = sorted(score, key=lambda pid: (-score[pid], pid not in word_set, pid))[:limit]
        return [(pid, pid in word_set, by_meaning.get(pid)) for pid in order]

    def _authorship(self, paper_ids: list[str]) -> list[tuple[str, str, str]]:
        """(paper id, researcher id, title) for the papers, in the order of `paper_ids`."""
        if not paper_ids:
            return []
        seen = self.corpus._see("r")  # authors another visitor added stay theirs
        join = " JOIN researchers r ON r.id=a.researcher_id" if seen else ""
        rows = self.corpus.db.conn.execute(
            "SELECT a.paper_id, a.researcher_id, p.title FROM authorship a JOIN papers p ON "
            f"p.id=a.paper_id{join} WHERE a.paper_id IN ({marks(paper_ids)}){seen}",
            paper_ids).fetchall()
        pos = {pid: i for i, pid in enumerate(paper_ids)}
        return sorted(((r[0], r[1], r[2]) for r in rows), key=lambda r: (pos[r[0]], r[1]))

    def _in_fields(self, researcher_ids: list[str], fields: list[str]) -> set[str]:
        if not researcher_ids:
            return set()
        return {r[0] for r in self.corpus.db.conn.execute(
            f"SELECT DISTINCT researcher_id FROM researcher_fields WHERE researcher_id IN "
            f"({marks(researcher_ids)}) AND field_id IN ({marks(fields)})",
            [*researcher_ids, *fields])}

    def _word_rankings(self, text: str, fields: list[str]) -> tuple[list[str], list[str]]:
        """Papers with every word (as `search_papers` ranks them), and papers with only
        some of them (each word as a prefix), which count for less."""
        every = self.corpus.search_paper_ids(text, fields, limit=CANDIDATES)
        terms = [w for w in words(text) if w.lower() not in STOPWORDS]
        some: list[str] = []
        if len(terms) > 1:
            seen = set(every)
            some = [pid for pid in self.corpus.any_word_ids(terms, fields, CANDIDATES)
                    if pid not in seen]
        return every, some

    def _meaning_ranking(self, text: str, fields: list[str]) -> dict[str, float]:
        """paper id -> cosine, best first, only papers at least MIN_SIMILARITY close."""
        near = self.vectors.nearest(self.model, self.query_vector(text),
                                    CANDIDATES * (4 if fields else 1), MIN_SIMILARITY)
        seen = self.corpus.seen_paper_ids([pid for pid, _ in near])  # the vectors hold every paper
        near = [(pid, s) for pid, s in near if pid in seen]
        if fields:
            keep = self.corpus.papers_in_fields([pid for pid, _ in near], fields)
            near = [(pid, s) for pid, s in near if pid in keep]
        return dict(near[:CANDIDATES])
