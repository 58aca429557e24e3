"""Noun phrases, by a small stated rule (no tagger is installed): runs of content words
between stop words, verbs, adverbs and punctuation. Used for a field's key concepts
(run/styles/grounding.py) and for the topic of a paper's stated problem (run/facets/extract.py):
one rule for both, below both."""
from __future__ import annotations

import re

from ...text import STOP, wordset

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


