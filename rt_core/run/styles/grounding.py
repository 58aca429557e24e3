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

from ...text import STOP, words, wordset
from ...types import Paper

# Words that name a method when they end a phrase ("importance sampling", "mixed model").
METHOD_HEADS = wordset("""sampling hashing model models modelling modeling regression network
networks simulation simulations inference estimation estimator estimators learning training
transformer transformers agents agent benchmark benchmarks survey surveys analysis analyses
algorithm algorithms decoding retrieval clustering classification forecasting forecasts
forecast astrometry photometry spectroscopy sequencing phylogenetics phylogenomics coalescent
optimisation optimization experiment experiments trial trials interviews panel design
measurement measurements evaluation prompting tuning fine-tuning distillation quantization
pruning compression parallelism scheduling caching theory theorem proof proofs equations
calculus geometry statistics mapping imaging tomography spectra catalogue catalog emulator
emulators embedding embeddings attention""")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9\-]*|[0-9]+|[^\sA-Za-z0-9]")
# A key concept is a noun phrase: seeded into "How can {a} help ...", a verb phrase reads
# "How can understand sensory cortex help". No tagger is installed, so the rule is small
# and stated: words that are (almost) always verbs, auxiliaries, adverbs or pronouns
# split a run as stop words do, so a phrase never starts or ends with one; so do adverbs
# in -ly (except the nouns listed). What remains is adjectives and nouns.
NOT_NOUN = wordset("""understand understands understood explore explores explored investigate
investigates investigated develop develops developed analyse analyses analyze analyzes
identify identifies identified detect detects demonstrate demonstrates demonstrated
evaluate evaluates examine examines examined leverage leverages leveraged utilize utilizes
utilise utilises employ employs employed determine determines discover discovers
discovered infer infers inferred quantify quantifies generate generates perform performs
performed outperform outperforms outperformed address addresses addressed consider
considers considered build builds built create creates created identify enhance enhances
enhanced investigate aim aims aimed seek seeks sought try tries tried attempt attempts
focus focuses focused explore ensure ensures ensured provide
constrain constrains constrained characterise characterises characterize characterizes
see sees saw seen get gets got go goes say says said think thinks know knows want wants
am isn aren wasn weren doesn don didn cannot won wouldn couldn shouldn
i me my mine you yours he him his she hers it its we us our ours they them their theirs
itself themselves ourselves himself herself one's someone something anything everything
here there now today currently recently usually typically generally largely mainly
particularly especially significantly substantially directly simply easily widely
highly fully newly jointly further""")
LY_NOUNS = wordset("""family families anomaly anomalies assembly supply butterfly reply
italy july monopoly poly rally belly ally jelly""")


def _splits(tok: str) -> bool:
    """Whether a token ends a candidate phrase (punctuation, a number, a stop word, or a
    word that is not part of a noun phrase)."""
    low = tok.lower()
    return (not tok[0].isalnum() or tok.isdigit() or low in STOP or low in NOT_NOUN
            or (low.endswith("ly") and len(low) > 4 and low not in LY_NOUNS))


def is_noun_phrase(phrase: str) -> bool:
    """The stated rule of NOT_NOUN, for a whole phrase: no word that splits phrases."""
    toks = _TOKEN.findall(phrase or "")
    return bool(toks) and not any(_splits(t) for t in toks)


def candidate_phrases(text: str, max_words: int = 3) -> list[str]:
    """Runs of content words between stop words, non-noun words (NOT_NOUN) and
    punctuation, at most max_words long (longer runs give their trailing max_words,
    where English puts the head noun)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            tail = run[-max_words:]
            if any(len(w) > 2 for w in tail):
                out.append(" ".join(tail))
            run.clear()

    for tok in _TOKEN.findall(text or ""):
        if _splits(tok):
            flush()
        else:
            run.append(tok)
    flush()
    return out


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

    @classmethod
    def for_store(cls, store, papers: list[Paper], embedder, background_limit: int = 400) -> Grounding:
        """The material for a run on `store`, ranked with the run's own `embedder` (an
        rt_core Embedder): a run that chose another embedder gets concepts from it, and
        its prompts (hence its cached calls) differ from a MiniLM run's."""
        names = {f["id"]: f["name"] for f in store.corpus.list_fields()}
        background = store.corpus.search_papers("", limit=background_limit)
        return cls(papers, background, names, embedder)

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
