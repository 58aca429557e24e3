"""Material a small base model cannot find on its own: the chosen fields, a few key
concepts per field, and what a researcher's record says about them.

A 270M-parameter base model cannot combine two fields unaided, so the stem stages
(run.stem) hand it concepts to build on. Concepts are key phrases of the chosen papers,
ranked with the run's embedder (the bundled MiniLM by default) in the manner of
KeyBERT: candidate phrases are the stop-word-free runs of the titles and abstracts; a
phrase ranks high when its embedding is close to its own field's papers and far from the
other chosen fields', and when it uses words that are rare in the rest of the store.
Maximal marginal relevance keeps the chosen few from repeating one another.

Everything here is deterministic and needs no model call.
"""
from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ...text import words
from ...types import Paper
from ..facets.kept import by_field, facets_of, one_note
from ..facets.pair import Pairings, pairings
from ..facets.phrases import METHOD_HEADS, candidate_phrases, is_noun_phrase  # noqa: F401


def chosen_fields(papers: list[Paper]) -> list[str]:
    """The neighbourhood's fields: each paper's primary (first) field, most common first."""
    counts = Counter(p.fields[0] for p in papers if p.fields)
    return [f for f, _ in counts.most_common()]


def _mmr(vecs: np.ndarray, relevance: np.ndarray, k: int, diversity: float = 0.5) -> list[int]:
    """Maximal marginal relevance: relevant, and unlike what is already picked."""
    picked: list[int] = []
    left = list(range(len(relevance)))
    while left and len(picked) < k:
        if picked:
            redundancy = (vecs[left] @ vecs[picked].T).max(axis=1)
        else:
            redundancy = np.zeros(len(left))
        score = (1 - diversity) * relevance[left] - diversity * redundancy
        picked.append(left.pop(int(np.argmax(score))))
    return picked


def _specificity(phrase: str, df_other: Counter, n_other: int) -> float:
    """1 when some word of the phrase never occurs outside the field, falling towards 0
    as its rarest word gets common there."""
    ws = words(phrase)
    if not ws:
        return 0.0
    rarest = min(df_other[w] for w in ws)
    return 1.0 / (1.0 + rarest * 20.0 / max(n_other, 20))


def _paper_text(p: Paper) -> str:
    return f"{p.title}. {p.abstract}"


def _paper_gist(p: Paper) -> str:
    """Title and first sentence: what a field centroid is embedded from (short is fast)."""
    m = re.match(r"(.+?[.!?])(\s|$)", re.sub(r"\s+", " ", p.abstract or ""))
    return f"{p.title}. {m.group(1) if m else p.abstract}"


def embedded_texts(p: Paper) -> list[str]:
    """Everything `field_concepts` may embed of this paper, whichever run reads it: its gist
    and the phrases its concepts are chosen from (kept once: community.write_kept_vectors)."""
    return [_paper_gist(p), *candidate_phrases(p.title), *candidate_phrases(p.abstract)]


def field_concepts(papers: list[Paper], background: list[Paper], embedder, k: int = 4,
                   fields: list[str] | None = None, max_candidates: int = 40) -> dict[str, list[str]]:
    """Up to k key concepts per chosen field, most representative first.

    `background` is what "rare elsewhere" is measured against (store papers of any field);
    `embedder` is the run's Embedder (the bundled MiniLM by default)."""
    fields = fields or chosen_fields(papers)
    by_field = {f: [p for p in papers if p.fields and p.fields[0] == f] or
                [p for p in papers if f in p.fields] for f in fields}
    pool = {p.id: p for p in list(background) + list(papers)}
    out: dict[str, list[str]] = {}
    centroids = {}
    for f, ps in by_field.items():
        if ps:
            v = embedder.encode([_paper_gist(p) for p in ps]).mean(axis=0)
            centroids[f] = v / (np.linalg.norm(v) or 1.0)
    for f, ps in by_field.items():
        if not ps or f not in centroids:
            out[f] = []
            continue
        others = [p for p in pool.values() if f not in p.fields]
        df_other = Counter(w for p in others for w in words(_paper_text(p)))
        counts: Counter = Counter()
        first_form: dict[str, str] = {}
        for p in ps:
            # Title phrases count double: a title names what the paper is about.
            for weight, text in ((2, p.title), (1, p.abstract)):
                for ph in candidate_phrases(text):
                    key = ph.lower()
                    counts[key] += weight
                    first_form.setdefault(key, ph)
        cands = [c for c in counts if _specificity(c, df_other, len(others)) > 0.3]
        # Embed only the likeliest few dozen: even MiniLM costs ~3 ms per short phrase.
        cands = sorted(cands, key=lambda c: -(_specificity(c, df_other, len(others))
                                              * (1 + counts[c])))[:max_candidates]
        if not cands:
            out[f] = []
            continue
        vecs = embedder.encode([first_form[c] for c in cands])
        own = vecs @ centroids[f]
        rival = [centroids[g] for g in centroids if g != f]
        away = (vecs @ np.stack(rival).T).max(axis=1) if rival else np.zeros(len(cands))
        spec = np.array([_specificity(c, df_other, len(others)) for c in cands])
        freq = np.log1p(np.array([counts[c] for c in cands], dtype=float))
        relevance = own - 0.5 * away + 0.3 * spec + 0.05 * freq
        out[f] = [first_form[cands[i]] for i in _mmr(vecs, relevance, k)]
    return out


@dataclass
class Record:
    """What a researcher's publications say about them, and nothing more."""
    fields: list[str]
    topics: list[str]
    methods: list[str]


def researcher_record(papers: list[Paper], max_topics: int = 4, max_methods: int = 3) -> Record:
    """Fields (by their papers' primary fields), recurring topics (phrases whose words come
    back across papers, titles weighted up) and methods (phrases headed by a method noun)."""
    fields = chosen_fields(papers)
    word_papers: Counter = Counter()
    for p in papers:
        word_papers.update(words(_paper_text(p)))
    topic_score: Counter = Counter()
    methods: Counter = Counter()
    form: dict[str, str] = {}
    for p in papers:
        for weight, text in ((3, p.title), (1, p.abstract)):
            for ph in candidate_phrases(text):
                key = ph.lower()
                form.setdefault(key, ph)
                ws = words(ph)
                if not ws:
                    continue
                recurrence = sum(word_papers[w] for w in ws) / len(ws)
                topic_score[key] += weight * recurrence * (1 + 0.3 * (len(ws) > 1))
                if key.split()[-1] in METHOD_HEADS and len(ws) > 1:
                    methods[key] += weight
    topics = _distinct([form[k] for k, _ in topic_score.most_common(30)], max_topics)
    meths = _distinct([form[k] for k, _ in methods.most_common(20)], max_methods,
                      avoid=topics)
    return Record(fields, topics, meths)


def _distinct(phrases: list[str], k: int, avoid: list[str] = ()) -> list[str]:
    """First k phrases that do not repeat a word-set already kept (or one to avoid)."""
    kept: list[str] = []
    seen = [words(a) for a in avoid]
    for ph in phrases:
        ws = words(ph)
        if not ws or any(ws <= s or s <= ws for s in seen):
            continue
        kept.append(ph)
        seen.append(ws)
        if len(kept) == k:
            break
    return kept


@dataclass
class Grounding:
    """Per-run material for the stem stages, computed on first use (instruction-model runs
    never ask for it, so they never pay for it)."""
    papers: list[Paper]
    background: list[Paper] = field(default_factory=list)
    field_names: dict[str, str] = field(default_factory=dict)
    embedder: object = None
    k: int = 4
    _concepts: dict[str, list[str]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Where the papers' facets are kept (found once per paper; run/facets/kept.py); None:
    # found for this run only.
    store: object = None
    _pairings: Pairings | None = field(default=None, repr=False)
    # Papers whose facets may be paired besides the chosen ones: the authors' own recent
    # papers (what their profiles are read from), so each field offers more than one.
    facet_pool: list[Paper] = field(default_factory=list)

    @classmethod
    def for_store(cls, store, papers: list[Paper], embedder, background_limit: int = 400,
                  facet_pool: list[Paper] = ()) -> Grounding:
        """The material for a run on `store`, ranked with the run's own `embedder` (an
        rt_core Embedder): a run that chose another embedder gets concepts from it, and
        its prompts (hence its cached calls) differ from a MiniLM run's."""
        names = {f["id"]: f["name"] for f in store.corpus.list_fields()}
        background = store.corpus.search_papers("", limit=background_limit)
        return cls(papers, background, names, embedder, store=store, facet_pool=list(facet_pool))

    @property
    def fields(self) -> list[str]:
        return chosen_fields(self.papers)

    def name(self, field_id: str) -> str:
        return self.field_names.get(field_id, field_id.replace("_", " ").title())

    @property
    def concepts(self) -> dict[str, list[str]]:
        with self._lock:
            if self._concepts is None:
                if self.embedder is None or not self.papers:
                    self._concepts = {f: [] for f in self.fields}
                else:
                    self._concepts = field_concepts(self.papers, self.background, self.embedder,
                                                    self.k, self.fields)
            return self._concepts

    def specific_words(self) -> dict[str, set[str]]:
        """Per field: the content words of its concepts (what 'covers this field' means
        when candidates are scored)."""
        return {f: set().union(*(words(c) for c in cs)) if cs else set()
                for f, cs in self.concepts.items()}

    @property
    def pairings(self) -> Pairings:
        """The neighbourhood's pairings of one field's mechanism with another's purpose,
        best first (run/facets/pair.py), found on first use; empty with a note (said once
        on the run) when the papers share no usable facet."""
        with self._lock:
            if self._pairings is None:
                # The authors' papers add facets to the chosen fields, never a field of their
                # own: a case study of NLP and astronomy pairs those two.
                chosen = set(self.fields)
                extra = [p for p in self.facet_pool if not chosen or (p.fields and p.fields[0] in chosen)]
                pool = list({p.id: p for p in [*self.papers, *extra]}.values())
                found = facets_of(pool, self.store, self.embedder)
                texts = {p.id: f"{p.title}. {p.abstract or ''}" for p in pool}
                plans = pairings(by_field(pool, found), self.embedder, name=self.name, texts=texts,
                                 paper_fields={p.id: tuple(p.fields) for p in pool})
                self._pairings = Pairings(plans.ranked, one_note(pool, found, plans.note))
            return self._pairings
