"""Who reviews a proposal: the researchers (not its authors) whose work is closest to it.

Choosing must not cost a model round. The candidates do not depend on the proposal,
so they are found and their papers embedded while the authors read and write (the
plan's `candidates` stage); once the proposal exists only its own short text is
embedded. Candidates come from a bounded full-text search, never the whole store, and
each of their papers is embedded on its own (a joined text would be cut at the
embedder's token limit); a candidate's best-matching paper decides.

Every chosen field that has a candidate in the store gets a reviewer when there are at
least as many reviewers as fields: the words of the neighbourhood can all come from one
field (NLP x astronomy once got three NLP reviewers and no astronomer), so the pool holds
the best matches of each field, and the choice takes the best of each field first and
fills the remaining seats by similarity alone.
"""
from __future__ import annotations

import collections
import re

from ...models.embed import Embedder
from ...store import Store
from ...text import STOP, clip, first_sentence, wordset
from ...types import Paper, Proposal, RunConfig
from ..evidence.evaluate import content_text
from ..styles.grounding import chosen_fields as primary_fields
from .reading import Reader

REVIEWER_POOL = 30  # at most this many candidates per run, found by full-text search
CANDIDATE_PAPERS = 5  # each candidate's newest papers, embedded one by one
PER_FIELD = 4  # candidates kept in the pool for each chosen field, so no field goes unseen
# The shared stop-word list, plus words every title in every field uses: searching the
# store for them would find everyone.
_STOPWORDS = STOP | wordset("""approach approaches method methods model models study results show
learning data paper novel based towards using""")


class ReviewerChoice:
    """Reviewer choice for one run (reads the run's config when asked, not when built)."""

    def __init__(self, store: Store, config: RunConfig, reader: Reader, embedder: Embedder):
        self.store = store
        self.config = config
        self.reader = reader
        self.embedder = embedder

    def candidate_pool(self) -> list[str]:
        """Who may review, without loading every researcher: full-text search for the
        neighbourhood's words (its papers' and authors' titles), among researchers of the
        neighbourhood's fields when any exist, widened only when too few are found."""
        corpus = self.store.corpus
        authors = list(self.config.researcher_ids)
        titles = [p.title for p in corpus.get_papers(self.config.paper_ids)]
        for rid in authors:
            titles += [p.title for p in self.reader.publications(rid)[:CANDIDATE_PAPERS]]
        counts = collections.Counter(w for t in titles for w in re.findall(r"[a-z][a-z0-9-]{2,}",
                                                                           t.lower())
                                     if w not in _STOPWORDS)
        words = [w for w, _ in counts.most_common(24)]
        fields = corpus.researcher_fields(authors) or sorted(
            {f for p in corpus.get_papers(self.config.paper_ids) for f in p.fields})
        need = max(self.config.num_reviewers, 1)
        size = min(REVIEWER_POOL, max(12, 3 * need))
        per_field = self._per_field(words, authors)
        pool = list(per_field)
        if fields:
            pool += corpus.reviewer_candidates(words, fields, authors + pool, size - len(pool))
        if len(pool) < need:  # too few in the neighbourhood's fields: any field
            pool += [r for r in corpus.reviewer_candidates(words, (), authors + pool,
                                                           size - len(pool))]
        for scope in ([fields] if fields else []) + [[]]:
            if len(pool) >= need:
                break
            # No word in common: anyone in those fields, then anyone (a bounded query each).
            pool += [r.id for r in corpus.search_researchers(fields=scope, limit=size + len(authors))
                     if r.id not in authors and r.id not in pool]
        return pool[:max(size, len(per_field))]

    def chosen_fields(self) -> list[str]:
        """The fields a proposal of this run combines: the chosen papers' primary fields,
        else the authors' fields."""
        corpus = self.store.corpus
        return (primary_fields(corpus.get_papers(self.config.paper_ids))
                or corpus.researcher_fields(self.config.researcher_ids))

    def _per_field(self, words: list[str], authors: list[str]) -> list[str]:
        """The best full-text matches of each chosen field (anyone of the field when no
        word matches), so that every field with a candidate reaches the pool."""
        corpus, picked = self.store.corpus, []
        for f in self.chosen_fields():
            got = corpus.reviewer_candidates(words, [f], authors + picked, PER_FIELD)
            if not got:
                got = [r.id for r in corpus.search_researchers(fields=[f], limit=PER_FIELD + len(authors))
                       if r.id not in authors and r.id not in picked][:PER_FIELD]
            picked += got
        return picked

    @staticmethod
    def _paper_text(p: Paper) -> str:
        return f"{p.title}. {first_sentence(p.abstract, 120)}"

    def candidate_vectors(self) -> dict[str, object]:
        """researcher id -> one unit vector per publication (each embedded on its own, so
        nothing is cut at the embedder's token limit). Only candidates with something to
        read, before the cut-off and never the hidden reference, are kept. All texts go
        to the embedder in one call (one batch, one cache write)."""
        pubs = {rid: self.reader.publications(rid)[:CANDIDATE_PAPERS] for rid in self.candidate_pool()}
        pubs = {rid: ps for rid, ps in pubs.items() if ps}
        texts = [self._paper_text(p) for ps in pubs.values() for p in ps]
        if not texts:
            return {}
        vecs = self.embedder.encode(texts)
        out, start = {}, 0
        for rid, ps in pubs.items():
            out[rid] = vecs[start:start + len(ps)]
            start += len(ps)
        return out

    def query_vector(self, proposal: Proposal):
        """One short text for the proposal, embedded: this embedding is the only part of
        reviewer choice between the stages, so it is kept to one pass of the embedder."""
        content = " ".join(t for t in (content_text(v) for v in proposal.answers().values()) if t)
        return self.embedder.encode([clip(content or " ".join(proposal.answers().values()), 700)])[0]

    def choose_reviewers(self, proposal: Proposal, vectors: dict | None = None,
                         query=None) -> list[str]:
        """Named reviewers, else the k candidates (not authors) whose best-matching paper is
        closest to the proposal, or to `query` (a unit vector: several candidates' mean),
        ties broken by the mean match."""
        k = self.config.num_reviewers
        if self.config.reviewer_ids:
            return list(self.config.reviewer_ids)
        if k == 0:
            return []
        vectors = self.candidate_vectors() if vectors is None else vectors
        if not vectors:
            return []
        q = self.query_vector(proposal) if query is None else query
        scored = []
        for rid, vecs in vectors.items():
            sims = vecs @ q
            scored.append((rid, float(sims.max()), float(sims.mean())))
        scored.sort(key=lambda x: (-x[1], -x[2], x[0]))
        return cover_fields([rid for rid, _, _ in scored], self._fields_of(list(vectors)),
                            self.chosen_fields(), k)

    def _fields_of(self, ids: list[str]) -> dict[str, set[str]]:
        return {rid: set(self.store.corpus.researcher_fields([rid])) for rid in ids}


def cover_fields(ranked: list[str], fields_of: dict[str, set[str]], fields: list[str],
                 k: int) -> list[str]:
    """k of the ranked candidates (best first): when k >= the number of fields, first the
    best candidate of each field that has one (a candidate covers every field they
    publish in), then the rest by rank. Returned in rank order."""
    picked: list[str] = []
    if k >= len(fields):
        for f in fields:
            if any(f in fields_of.get(r, ()) for r in picked):
                continue
            best = next((r for r in ranked if f in fields_of.get(r, ()) and r not in picked), None)
            if best is not None:
                picked.append(best)
    picked += [r for r in ranked if r not in picked][:max(0, k - len(picked))]
    order = {r: i for i, r in enumerate(ranked)}
    return sorted(picked[:k], key=order.__getitem__)
