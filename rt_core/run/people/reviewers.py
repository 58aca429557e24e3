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

Graph position (issue 27): every field the proposal draws on is covered first, even with
fewer seats than fields (a reviewer who publishes in two of them covers both); then one
seat goes to a field next to them in the community graph (adjacent.py: tied by co-authored
papers or citations, never a fixed list), and the rest by similarity. Authors and their
close co-authors (two or more papers with an author: adjacent.CLOSE_SHARED) never review.
Each chosen reviewer keeps one sentence saying why (`reasons`), which the run stores
beside its reviewers.
"""
from __future__ import annotations

import collections
import re
from dataclasses import dataclass

from ...models.embed import Embedder
from ...store import Store
from ...text import STOP, clip, first_sentence, wordset
from ...types import Paper, Proposal, RunConfig
from ..evidence.evaluate import content_text
from ..styles.grounding import chosen_fields as primary_fields
from . import adjacent
from .reading import Reader

REVIEWER_POOL = 30  # at most this many candidates per run, found by full-text search
CANDIDATE_PAPERS = 5  # each candidate's newest papers, embedded one by one
PER_FIELD = 4  # candidates kept in the pool for each chosen field, so no field goes unseen
ADJACENT_FIELDS = 2  # the most strongly tied neighbouring fields whose researchers join the pool
HAND_PICKED = "Picked by hand on the Run page."
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
        self.reasons: dict[str, str] = {}  # the last choice: reviewer id -> why
        self._excluded: list[str] | None = None
        self._links: list[adjacent.Link] | None = None
        self._word_list: list[str] | None = None

    def candidate_pool(self) -> list[str]:
        """Who may review, without loading every researcher: full-text search for the
        neighbourhood's words (its papers' and authors' titles), among researchers of the
        neighbourhood's fields when any exist, widened only when too few are found."""
        corpus = self.store.corpus
        authors = self.excluded()
        words = self._words()
        fields = corpus.researcher_fields(self.config.researcher_ids) or sorted(
            {f for p in corpus.get_papers(self.config.paper_ids) for f in p.fields})
        need = max(self.config.num_reviewers, 1)
        size = min(REVIEWER_POOL, max(12, 3 * need))
        per_field = self._per_field(words, authors)
        per_field += self._adjacent_pool(words, authors + per_field)
        pool = list(per_field)
        # The pool by field and by adjacency can already fill `size`: never ask for a
        # negative count (SQLite reads LIMIT -1 as "no limit"; PostgreSQL refuses it).
        if fields and len(pool) < size:
            pool += corpus.reviewer_candidates(words, fields, authors + pool, size - len(pool))
        if len(pool) < need:  # too few in the neighbourhood's fields: any field
            pool += [r for r in corpus.reviewer_candidates(words, (), authors + pool,
                                                           max(need, size) - len(pool))]
        for scope in ([fields] if fields else []) + [[]]:
            if len(pool) >= need:
                break
            # No word in common: anyone in those fields, then anyone (a bounded query each).
            pool += [r.id for r in corpus.search_researchers(fields=scope, limit=size + len(authors))
                     if r.id not in authors and r.id not in pool]
        return pool[:max(size, len(per_field))]

    def _words(self) -> list[str]:
        """The neighbourhood's most frequent title words (its papers' and its authors')."""
        if self._word_list is not None:
            return self._word_list
        titles = [p.title for p in self.store.corpus.get_papers(self.config.paper_ids)]
        for rid in self.config.researcher_ids:
            titles += [p.title for p in self.reader.publications(rid)[:CANDIDATE_PAPERS]]
        counts = collections.Counter(w for t in titles for w in re.findall(r"[a-z][a-z0-9-]{2,}",
                                                                           t.lower())
                                     if w not in _STOPWORDS)
        self._word_list = [w for w, _ in counts.most_common(24)]
        return self._word_list

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
    def embedded_text(p: Paper) -> str:
        """The line a candidate's paper is matched by (kept once: community.write_kept_vectors)."""
        return f"{p.title}. {first_sentence(p.abstract, 120)}"

    def candidate_vectors(self) -> dict[str, object]:
        """researcher id -> one unit vector per publication (each embedded on its own, so
        nothing is cut at the embedder's token limit). Only candidates with something to
        read, before the cut-off and never the hidden reference, are kept. All texts go
        to the embedder in one call (one batch, one cache write)."""
        pubs = {rid: self.reader.publications(rid)[:CANDIDATE_PAPERS] for rid in self.candidate_pool()}
        pubs = {rid: ps for rid, ps in pubs.items() if ps}
        texts = [self.embedded_text(p) for ps in pubs.values() for p in ps]
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
        """Named reviewers, else k candidates (never authors or their co-authors): every
        field of the proposal covered, one reviewer from a field next to them in the graph,
        the rest the closest by their best-matching paper to the proposal, or to `query` (a
        unit vector: several candidates' mean), ties broken by the mean match. Why each was
        chosen is left in `self.reasons`."""
        k = self.config.num_reviewers
        if self.config.reviewer_ids:
            self.reasons = {r: HAND_PICKED for r in self.config.reviewer_ids}
            return list(self.config.reviewer_ids)
        self.reasons = {}
        if k == 0:
            return []
        vectors = self.candidate_vectors() if vectors is None else vectors
        vectors = {r: v for r, v in vectors.items() if r not in self.excluded()}
        if not vectors:
            return []
        q = self.query_vector(proposal) if query is None else query
        scored = {}
        for rid, vecs in vectors.items():
            sims = vecs @ q
            scored[rid] = (float(sims.max()), float(sims.mean()))
        ranked = sorted(scored, key=lambda r: (-scored[r][0], -scored[r][1], r))
        links = self.adjacency()
        seats = choose_seats(ranked, self._fields_of(ranked), self.chosen_fields(), k,
                             [link.field for link in links])
        self.reasons = {s.rid: self._reason(s, scored[s.rid][0], links) for s in seats}
        return [s.rid for s in seats]

    def excluded(self) -> list[str]:
        """The authors, then their close co-authors (adjacent.close_coauthors)."""
        if self._excluded is None:
            authors = list(self.config.researcher_ids)
            self._excluded = authors + sorted(adjacent.close_coauthors(self.store.corpus, authors))
        return self._excluded

    def adjacency(self) -> list[adjacent.Link]:
        """Fields next to the chosen ones in the graph around the authors and the best
        researchers of each chosen field (computed once per run)."""
        if self._links is None:
            fields = self.chosen_fields()
            people = [*self.config.researcher_ids, *self._per_field(self._words(), self.excluded())]
            g = adjacent.neighbourhood_graph(self.store.corpus, people)
            self._links = adjacent.adjacent_fields(adjacent.field_graph(g), fields)
        return self._links

    def _adjacent_pool(self, words: list[str], skip: list[str]) -> list[str]:
        """The best full-text matches of the most strongly tied neighbouring fields."""
        picked: list[str] = []
        for link in self.adjacency()[:ADJACENT_FIELDS]:
            got = self.store.corpus.reviewer_candidates(words, [link.field], skip + picked, PER_FIELD)
            if not got:
                got = [r.id for r in self.store.corpus.search_researchers(
                    fields=[link.field], limit=PER_FIELD + len(skip) + len(picked))
                    if r.id not in skip and r.id not in picked][:PER_FIELD]
            picked += got
        return picked

    def _reason(self, seat: Seat, similarity: float, links: list[adjacent.Link]) -> str:
        names = {f["id"]: f["name"] for f in self.store.corpus.list_fields()}
        name = lambda f: names.get(f, f)
        close = f"their closest paper matches the proposal at {similarity:.2f}"
        if seat.why == COVERS:
            return (f"Covers {', '.join(name(f) for f in seat.fields)}, drawn on by the proposal; "
                    f"{close}.")
        if seat.why == ADJACENT:
            link = next(k for k in links if k.field == seat.fields[0])
            ties = " and ".join(t for t in (_count(link.coauthored, "co-authored paper"),
                                            _count(link.cited, "citation")) if t)
            return (f"From {name(link.field)}, a field next to {', '.join(name(f) for f in link.near)} "
                    f"in the community graph ({ties}); {close}.")
        return f"Among the closest to the proposal: {close}."

    def _fields_of(self, ids: list[str]) -> dict[str, set[str]]:
        return {rid: set(self.store.corpus.researcher_fields([rid])) for rid in ids}


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}" if n else ""


COVERS, ADJACENT, CLOSEST = "covers", "adjacent", "closest"


@dataclass
class Seat:
    """One chosen reviewer and why: the fields they cover, or the neighbouring field."""
    rid: str
    why: str
    fields: list[str]


def choose_seats(ranked: list[str], fields_of: dict[str, set[str]], fields: list[str], k: int,
                 adjacent_fields: list[str] = ()) -> list[Seat]:
    """k of the ranked candidates (best first). First the proposal's fields are covered:
    repeatedly the candidate covering the most fields not yet covered (the better ranked on
    a tie), while seats remain; then, when a seat is left, the best candidate of the most
    strongly tied adjacent field (in `adjacent_fields` order) that publishes in none of
    the proposal's fields; then the rest by rank. Returned in rank order."""
    seats: list[Seat] = []
    left = [f for f in dict.fromkeys(fields)]
    taken = lambda r: any(s.rid == r for s in seats)
    while left and len(seats) < k:
        gain = {r: [f for f in left if f in fields_of.get(r, ())] for r in ranked if not taken(r)}
        best = max(gain, key=lambda r: len(gain[r]), default=None)  # max keeps the first (best rank)
        if best is None or not gain[best]:
            break
        seats.append(Seat(best, COVERS, gain[best]))
        left = [f for f in left if f not in gain[best]]
    for f in adjacent_fields:
        if len(seats) >= k:
            break
        outside = next((r for r in ranked if not taken(r) and f in fields_of.get(r, ())
                        and not fields_of.get(r, set()) & set(fields)), None)
        if outside is not None:
            seats.append(Seat(outside, ADJACENT, [f]))
            break
    seats += [Seat(r, CLOSEST, []) for r in ranked if not taken(r)][:max(0, k - len(seats))]
    order = {r: i for i, r in enumerate(ranked)}
    return sorted(seats, key=lambda s: order[s.rid])


def cover_fields(ranked: list[str], fields_of: dict[str, set[str]], fields: list[str],
                 k: int) -> list[str]:
    """The ids `choose_seats` picks without an adjacent field."""
    return [s.rid for s in choose_seats(ranked, fields_of, fields, k)]


def reason_for(run, reviewer_id: str) -> str:
    """Why this reviewer reviews the run: as stored at the choice, or hand-picked."""
    if reviewer_id in (run.reviewer_reasons or {}):
        return run.reviewer_reasons[reviewer_id]
    return HAND_PICKED if reviewer_id in run.config.reviewer_ids else ""


def uncovered_fields(store, run) -> list[str]:
    """The proposal's fields that no chosen reviewer publishes in (by name), when the choice
    was the graph's: none of those fields had a researcher left who is neither an author nor
    a close co-author (or the seats ran out). Hand-picked reviewers are the user's call."""
    if not run.reviewer_reasons or run.config.reviewer_ids:
        return []
    corpus = store.corpus
    wanted = (primary_fields(corpus.get_papers([p for p in run.config.paper_ids if corpus.paper_exists(p)]))
              or corpus.researcher_fields(run.config.researcher_ids))
    covered = set(corpus.researcher_fields([r.reviewer_id for r in run.reviews]))
    names = {f["id"]: f["name"] for f in corpus.list_fields()}
    return [names.get(f, f) for f in wanted if f not in covered]
