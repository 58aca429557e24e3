"""How many model calls and tokens each stage of a run makes, from the settings alone.

Each stage of a plan points here (`run.pipeline.runner.Stage.estimate`): a function of the run's
`Sizes` (authors, reviewers, prompt style, how much paper text the prompts carry) giving
its `Calls`. The counts follow the stages' own rules (the stem style's candidates per
part are `run.stem`'s constants); `calls` has no re-asks and `max_calls` every re-ask the
stage may make, so a real run's count lies between them. `reasked` is the re-asks a stage
makes as a rule rather than by exception (a base model's review lines), which the time a
run takes must count (run/pipeline/timing.py); the tokens include them. Tokens assume
about four characters per token and typical reply lengths. `run.budget` adds them up and
prices them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ... import fiveq
from ...models import registry
from ...models.facts import ModelFacts, facts_for
from ...types import MODES, RunConfig
from .. import prompts
from ..facets import bundle, extract
from ..styles import stem

CHARS_PER_TOKEN = 4  # English prose in common tokenizers; the estimate's main assumption
PAPER_CHARS = 1200  # title and abstract of a paper whose text is not at hand
QUESTIONS = 5
MAX_REASKS = 2  # StageContext.max_reasks

# Typical tokens of one reply, per kind of call (instruction models write to these sizes;
# the embedded model's lines stop at their stems' budgets).
CHAT_REPLY = {"profile": 250, "draft": 450, "aggregate": 450, "review": 300, "meta": 300}
# The chat prompt templates, rendered with no material (their own words and the questions).
_TEMPLATES = {"profile": ("profile", {"name": ""}), "draft": ("draft", {"persona": "", "questions": None}),
              "aggregate": ("aggregate", {"drafts": ""}),
              "review": ("review", {"persona": "", "proposal": "", "prior_work": ""}),
              "meta": ("meta_review", {"proposal": "", "reviews": ""})}
STEM_HEADER = 250  # the material a stem document starts with (measured: bench_budget.py)
STEM_LINE = 30  # one completed line
# What the model writes of a proposal's line: its stem carries most of the sentence
# (measured on the embedded model: 9 tokens a call for drafts, 7.6 for candidates).
STEM_WRITTEN = 10
STEM_SCORE = 2
# What the model writes of a review line: it stops at its sentence's end, well before its
# budget of 60. Measured on the embedded model: 13.8 tokens a call in the app's default
# run's reviews on 2026-12-02, the line led by a concept and stopping after four words of
# its own (run/styles/stem.py); 20.7 and 21.0 (credit) on 2026-11-29, before. Counted at
# 21, credit's estimate came out 1.26 times what it took; at 30, up to 1.63
# (docs/PERFORMANCE.md).
STEM_REVIEW_LINE = 14
# Re-asks per review line of a base model: the claims check (run/styles/stem_claims.py)
# drops a line that states a result the material does not, and a line that does not fit
# its heading is asked again. Led by a concept the proposal names (run/styles/stem.py,
# `review_focus`), 3.2 and 3.4 calls per review in the app's default run (2026-12-02; 5.0-5.25
# before, when most lines were generic and asked again), against 3 (two lines and the
# score) without re-asks. Counted over all of a stage's reviews: a fifth of a call each.
REVIEW_LINE_REASKS = 0.2
# The prompt of one such call: the review's header with the proposal's short answers
# (measured: 213 tokens a call in the app's default run, 205 in its revision's reviews).
STEM_REVIEW_PROMPT = 220
# The facets path (run/facets/) makes no model call: its time is work on this machine,
# in seconds on an idle core (timing.py scales them by the machine's load). Measured per
# stage on 2026-12-06 (2 cores, shared) in the CLI default run at load 2.3 (and 6, where
# each took 2-3 times as long), divided by (load + 1) / cores: the neighbourhood's facets
# found, paired and written (0.29 s there, and 0.1 s before the first stage); a rubric
# review with its nearest-paper embedding (0.55 s for 3 reviewers); the answers'
# provenance (0.62 s) and the reviews' (0.15 s). In the app's default run: the
# candidates' merge (0.43 s), the novelty check (0.13 s), 12 reviews of 4 candidates
# (0.42 s: the reviewers' papers are embedded once), a revision round's reviews (cached
# embeddings). What else a run spends the runs' bias learns (run/pipeline/timing.py).
# The facets' work grows with the chosen papers' text (sentences found, embedded and paired):
# the CLI default's papers (1,360 characters) took 0.3 s to write from, the seven papers of
# "LLMs x galaxy surveys" (5,002 characters) 0.82 s in the same sitting (load 2), so about a
# third of it is fixed and the rest goes with the text; scaled to 0.36 s at the CLI default.
# Of the 0.172 s per 1,000 characters, finding the facets and embedding their sentences is
# paid once per paper (kept in the store after; the bundled papers' shipped, with their
# sentences' vectors kept by the setup: run/facets/bundle.py): the app's five walked case
# studies, all kept, wrote in 0.64-1.03 s at load 1.8 (in one process, after the page's
# warm-up; 2026-12-06), about 0.10 s per 1,000 characters on an idle core.
FACETS_WRITE_FIXED = 0.126
FACETS_WRITE_PER_KCHAR = 0.100  # seconds per 1,000 characters of the chosen papers
FACETS_FIND_PER_KCHAR = 0.072  # more, per 1,000 characters of papers whose facets are not kept
FACETS_REVIEW = 0.11  # per reviewer
FACETS_REVIEW_MANY = 0.07  # per reviewer, over all candidates (embeddings shared)
FACETS_REVIEW_AGAIN = 0.03  # per reviewer, a revision round's
FACETS_PROVENANCE = 0.38
FACETS_REVIEW_PROVENANCE = 0.09
FACETS_MERGE = 0.26
FACETS_NOVELTY = 0.08


@dataclass(frozen=True)
class Sizes:
    """What an estimate depends on, from the settings (and the store, when at hand), with
    the run's models' facts (models/facts.py): prompt style, price, calls at once."""
    facts: ModelFacts
    authors: int
    reviewers: int
    new_reviewer_profiles: int
    paper_chars: int
    profile_chars: int
    candidates: int = 1  # proposals written and ranked (run/candidates/stages.py)
    unkept_chars: int | None = None  # of paper_chars, papers whose facets are not kept (None: all)

    @property
    def style(self) -> str:
        return self.facts.style

    @property
    def judge(self) -> bool:
        """A model judges the candidates pairwise (run/candidates/tournament.py)."""
        return self.facts.judge_follows


@dataclass(frozen=True)
class Calls:
    """One stage's estimate: calls without re-asks, calls with every re-ask, tokens."""
    calls: int = 0
    max_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasked: int = 0  # re-asks made as a rule (module docstring): within max_calls - calls
    local: float = 0.0  # seconds of work on this machine that is no model call (`facets_work`)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def typical(self) -> int:
        """The calls a run typically makes: without re-asks, plus those made as a rule."""
        return self.calls + self.reasked

    def __add__(self, other: Calls) -> Calls:
        return Calls(self.calls + other.calls, self.max_calls + other.max_calls,
                     self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.reasked + other.reasked,
                     self.local + other.local)

    def count_text(self) -> str:
        """The number of calls in words: '12', '12 (up to 30 with re-asks)', or with the
        re-asks a run makes as a rule, '12 (typically 18, up to 30 with re-asks)'."""
        if self.calls == self.max_calls:
            return f"{self.calls}"
        typical = f"typically {self.typical}, " if self.reasked else ""
        return f"{self.calls} ({typical}up to {self.max_calls} with re-asks)"

    def times(self, n: int) -> Calls:
        """The same calls made n times (per reviewer, per candidate)."""
        return Calls(self.calls * n, self.max_calls * n, self.prompt_tokens * n,
                     self.completion_tokens * n, self.reasked * n, self.local * n)


def _calls(n: int, reasks: int, prompt: int, reply: int) -> Calls:
    return Calls(n, n + reasks, n * prompt, n * reply)


@functools.lru_cache(maxsize=16)
def template_tokens(kind: str) -> int:
    """The tokens of a chat prompt's own words, from the prompt files as they are now."""
    name, fields = _TEMPLATES[kind]
    fields = {k: (fiveq.headings(with_guidance=True) if v is None else v) for k, v in fields.items()}
    msgs = prompts.load(registry.CHAT)[name].messages(papers="", **fields)
    return sum(len(m["content"]) for m in msgs) // CHARS_PER_TOKEN


def _chat(kind: str, n: int, material_tokens: int, reasks_each: int) -> Calls:
    return _calls(n, n * reasks_each, template_tokens(kind) + material_tokens, CHAT_REPLY[kind])


# -- per stage: how many calls and tokens, from the sizes ---------------------------------
def read_authors(s: Sizes) -> Calls:
    if s.facts.traits.completes_stems:
        return Calls()  # profiles are the record: no model call (run.stem.read_profile)
    return _chat("profile", s.authors, min(8000, s.profile_chars) // CHARS_PER_TOKEN, MAX_REASKS)


def read_reviewers(s: Sizes) -> Calls:
    if s.facts.traits.completes_stems:
        return Calls()
    return _chat("profile", s.new_reviewer_profiles, min(8000, s.profile_chars) // CHARS_PER_TOKEN,
                 MAX_REASKS)


def _draft_material(s: Sizes) -> int:
    # the papers and the persona (a profile)
    return min(12000, s.paper_chars) // CHARS_PER_TOKEN + CHAT_REPLY["profile"]


def from_facets(s: Sizes) -> bool:
    """Whether the run's model writes, reviews and revises from the papers' facets (no call)."""
    return s.facts.traits.writes_from_facets


def facets_write(s: Sizes) -> float:
    """Seconds of work, on an idle core, to find, pair and write from the papers' facets."""
    unkept = s.paper_chars if s.unkept_chars is None else s.unkept_chars
    return (FACETS_WRITE_FIXED + FACETS_WRITE_PER_KCHAR * s.paper_chars / 1000
            + FACETS_FIND_PER_KCHAR * unkept / 1000)


def write_drafts(s: Sizes) -> Calls:
    if from_facets(s):
        return Calls(local=facets_write(s))
    if s.facts.traits.completes_stems:
        per = QUESTIONS * stem.DRAFT_CANDIDATES["default"]
        prompt = STEM_HEADER + min(12000, s.paper_chars) // (3 * CHARS_PER_TOKEN) + 2 * STEM_LINE * 2
        n = s.authors * per
        return Calls(n, n * (MAX_REASKS + 1) + s.authors * QUESTIONS, n * prompt, n * STEM_WRITTEN)
    return _chat("draft", s.authors, _draft_material(s), QUESTIONS * MAX_REASKS)


def aggregate(s: Sizes) -> Calls:
    if s.authors < 2 or from_facets(s):
        return Calls()  # a single draft is the proposal; the facets' best pairing is at hand
    if s.facts.traits.completes_stems:
        cand = stem.AGGREGATE_CANDIDATES
        n = sum(cand.get(f"q{i}", cand["default"]) for i in range(1, QUESTIONS + 1))
        prompt = STEM_HEADER + 4 * STEM_LINE * 3
        # the drafts' own answers compete (alone, for a part sampled 0 times), so a merged
        # question is never re-asked empty
        return Calls(n, n, n * prompt, n * STEM_WRITTEN)
    return _chat("aggregate", 1, s.authors * CHAT_REPLY["draft"], QUESTIONS * MAX_REASKS)


def review(s: Sizes) -> Calls:
    if from_facets(s):
        return Calls(local=s.reviewers * FACETS_REVIEW)
    if s.facts.traits.completes_stems:
        lines = len(stem.REVIEW_HEADINGS) * stem.REVIEW_CANDIDATES
        prompt = STEM_REVIEW_PROMPT
        n = s.reviewers
        again = round(n * lines * REVIEW_LINE_REASKS)
        return Calls(n * (lines + 1), n * (lines + 1) * (MAX_REASKS + 1), (n * (lines + 1) + again) * prompt,
                     (n * lines + again) * STEM_REVIEW_LINE + n * STEM_SCORE, again)
    material = (CHAT_REPLY["aggregate"] + min(6000, s.paper_chars) // CHARS_PER_TOKEN
                + CHAT_REPLY["profile"])
    return _chat("review", s.reviewers, material, 3 * MAX_REASKS)


def review_lanes(s: Sizes) -> int:
    """The calls one review makes at once: a base model's review asks its strengths and
    weaknesses together (run/styles/stem.py); a chat model's review is one call."""
    return len(stem.REVIEW_HEADINGS) if s.facts.traits.completes_stems else 1


def meta_review(s: Sizes) -> Calls:
    if s.facts.traits.completes_stems or not s.reviewers:
        return Calls()  # the stem meta-review clusters the reviews: no model call
    return _chat("meta", 1, CHAT_REPLY["aggregate"] + s.reviewers * CHAT_REPLY["review"], 0)


def attribution(s: Sizes) -> Calls:
    """Provenance (run/evidence/provenance.py): embedding only. Counted for the facets path,
    where it is a good part of the run; a model's calls dwarf it otherwise (and the runs'
    bias, run/pipeline/timing.py, has it)."""
    # with candidates, the merge embedded the answers already (FACETS_MERGE)
    return Calls(local=FACETS_PROVENANCE) if from_facets(s) and s.candidates < 2 else Calls()


def review_again(s: Sizes) -> Calls:
    """A revision round's reviews: as `review`, but the facets path's embeddings are cached."""
    return Calls(local=s.reviewers * FACETS_REVIEW_AGAIN) if from_facets(s) else review(s)


def review_attribution(s: Sizes) -> Calls:
    """The reviews' provenance: as `attribution`."""
    return Calls(local=FACETS_REVIEW_PROVENANCE) if from_facets(s) else Calls()


def nothing(s: Sizes) -> Calls:
    """Stages that make no call on the run's model (queue, embedding, choice, evaluation)."""
    return Calls()


def sizes_for(config: RunConfig, store=None) -> Sizes:
    """The sizes of a run with these settings; with a store, the chosen papers' real text."""
    return sizes_at(config, facts_for(config), store)


def sizes_at(config: RunConfig, facts: ModelFacts, store=None) -> Sizes:
    """The sizes of a run whose models' facts are already known (a run's start)."""
    mode = MODES.get(config.mode, MODES["global"])
    authors = len(config.researcher_ids) if mode.reads_profiles else 1
    wants = bool(config.reviewer_ids) or config.num_reviewers > 0
    reviewers = (len(config.reviewer_ids) or config.num_reviewers) if mode.reads_profiles else 1
    reviewers = reviewers if wants else 0
    new_profiles = len(set(config.reviewer_ids) - set(config.researcher_ids)) \
        if config.reviewer_ids else reviewers
    paper_chars = len(config.paper_ids) * PAPER_CHARS if mode.reads_papers else 0
    profile_chars = config.max_profile_papers * PAPER_CHARS
    unkept_chars = None
    if store is not None:
        try:
            if mode.reads_papers:
                paper_chars = _text_chars(store, config.paper_ids)
                unkept_chars = _unkept_chars(store, config.paper_ids, config.embedder)
            if mode.reads_profiles and config.researcher_ids:
                people = store.corpus.get_researchers(config.researcher_ids)
                profile_chars = sum(_text_chars(store, r.publication_ids[:config.max_profile_papers])
                                    for r in people) // max(1, len(people))
        except Exception:  # an unknown id: validation says so at Start; estimate roughly
            pass
    return Sizes(facts, authors, reviewers, new_profiles if mode.reads_profiles else 0,
                 paper_chars, profile_chars, max(1, config.candidates), unkept_chars)


def _unkept_chars(store, paper_ids: list[str], embedder: str) -> int:
    """Characters of the chosen papers whose facets a run would find: neither kept in the
    store under the current rules nor shipped for this embedder (run/facets/kept.py)."""
    papers = [store.corpus.get_paper(p) for p in dict.fromkeys(paper_ids)]
    kept = set(store.facets.get([p.id for p in papers], extract.VERSION))
    kept |= set(bundle.usable([p for p in papers if p.id not in kept], embedder))
    return sum(len(p.title) + len(p.abstract) + 40 for p in papers if p.id not in kept)


def _text_chars(store, paper_ids: list[str]) -> int:
    """Characters of these papers as the prompts carry them (title, abstract, a label)."""
    papers = [store.corpus.get_paper(p) for p in paper_ids]
    return sum(len(p.title) + len(p.abstract) + 40 for p in papers)
