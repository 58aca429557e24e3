"""Typed records shared by every part of rt_core.

All records are plain dataclasses so they serialise to JSON with `to_dict()`
and come back with `from_dict()`; the store, the CLI and the app exchange
nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .attribution import Credit, Ground, Provenance, Source  # noqa: F401
from .fiveq import QUESTION_KEYS, QUESTIONS
from .record import Record as _Record

# The run's settings live with their schema (rt_core/settings); named here with the rest.
from .settings.modes import MODES, Mode  # noqa: F401
from .settings.run_config import Given, RunConfig, RunRequest  # noqa: F401
from .stops import Stop, StopReason


@dataclass
class Paper(_Record):
    id: str
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""
    fields: list[str] = field(default_factory=list)
    arxiv_id: str = ""
    doi: str = ""
    s2_id: str = ""
    openalex_id: str = ""
    url: str = ""
    # "source" says where the abstract text came from: e.g. "arxiv", "openalex",
    # "upload", or "summary" for a summary written by the project (not the real abstract).
    abstract_source: str = ""
    references: list[str] = field(default_factory=list)


@dataclass
class Researcher(_Record):
    id: str
    name: str
    fields: list[str] = field(default_factory=list)
    affiliation: str = ""
    publication_ids: list[str] = field(default_factory=list)
    s2_id: str = ""
    openalex_id: str = ""


@dataclass
class Profile(_Record):
    researcher_id: str
    text: str
    model: str = ""
    paper_ids: list[str] = field(default_factory=list)
    missing: bool = False


@dataclass
class Proposal(_Record):
    q1: str = ""
    q2: str = ""
    q3: str = ""
    q4: str = ""
    q5: str = ""
    # Parts the model never produced, even after re-asking; never silently blank.
    missing: list[str] = field(default_factory=list)
    author_id: str = ""  # "" for the aggregated proposal
    drafts: list[Proposal] = field(default_factory=list)
    # Per question, the papers' sentences the answer was written from (a base model's
    # proposal from facets, run/facets/write.py); empty when a model wrote it freely.
    grounds: dict[str, list[Ground]] = field(default_factory=dict)

    def answers(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in QUESTION_KEYS}

    def to_markdown(self, heading: str = "Proposal") -> str:
        lines = [f"## {heading}", ""]
        for q in QUESTIONS:
            text = getattr(self, q.key) or "_(missing: the model gave no answer)_"
            lines += [f"**{q.heading}**", "", text, ""]
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        data = dict(data)
        data["drafts"] = [Proposal.from_dict(d) for d in data.get("drafts") or []]
        data["grounds"] = {k: [Ground.from_dict(g) for g in v]
                           for k, v in (data.get("grounds") or {}).items()}
        return super().from_dict(data)  # type: ignore[return-value]


@dataclass
class Review(_Record):
    reviewer_id: str
    strengths: str = ""
    weaknesses: str = ""
    score: int | None = None
    missing: list[str] = field(default_factory=list)
    # The sections ("strengths", "weaknesses") the automatic checks of the proposal filled
    # because the base model wrote nothing usable there (run/stem_checks.py).
    checked: list[str] = field(default_factory=list)
    # A review by rubric (base models, run/facets/rubric.py): each check and whether it
    # holds, and how the score follows from them ("" for a review a model wrote).
    rubric: dict[str, bool] = field(default_factory=dict)
    basis: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Review:
        d = dict(data)
        if "checked" not in d:  # stored before the field: the label such a section began with
            d["checked"] = [k for k in ("strengths", "weaknesses")
                            if str(d.get(k) or "").startswith("- Automatic check:")]
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class MetaReview(_Record):
    strengths: str = ""
    weaknesses: str = ""
    score: float | None = None  # mean of the reviewers' scores
    missing: list[str] = field(default_factory=list)


@dataclass
class Usage(_Record):
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


@dataclass
class StageError(_Record):
    stage: str
    agent: str
    kind: str
    message: str
    hint: str = ""  # in the command line's words, as the CLI prints it
    app_hint: str = ""  # the same advice in the app's words, where they differ (render.app_hint)


# The brainstorm loop: candidates, their ranking, novelty, revision rounds, provenance and
# credit. Every number says what measured it: a tournament's `method` is "judge" only when
# a model really compared the candidates, and "signals" when the ranking comes from
# measured signals (the base model cannot judge), so no page presents one as the other.


@dataclass
class NearPaper(_Record):
    """A retrieved paper close to one facet of an idea. Only retrieved papers are ever
    named as prior work: a verdict or an explanation citing anything else is rejected."""
    title: str
    similarity: float = 0.0  # cosine of the facet's answer and the paper's text
    year: int | None = None
    url: str = ""
    source: str = ""  # "store", "semantic_scholar", "openalex" or "arxiv"
    paper_id: str = ""  # the store's id, when it came from the store or was saved there


@dataclass
class FacetNovelty(_Record):
    """One facet (the problem, Q1, or the method, Q5) against the nearest papers."""
    facet: str  # a question key: "q1" or "q5"
    nearest: list[NearPaper] = field(default_factory=list)  # best first
    # 'close prior work: "<title>" (<year>)', naming the nearest retrieved paper, or
    # "no close match found in N papers searched" (rt_core.run.novelty.verdict, is_close)
    verdict: str = ""
    searched: int = 0  # how many papers were compared
    explanation: str = ""  # an instruction model's reading, citing retrieved papers only

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FacetNovelty:
        data = dict(data)
        data["nearest"] = [NearPaper.from_dict(p) for p in data.get("nearest") or []]
        return super().from_dict(data)  # type: ignore[return-value]


@dataclass
class Novelty(_Record):
    facets: list[FacetNovelty] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # where it searched, in order
    online: bool = False  # False: the store was the whole literature (the app says so)
    threshold: float = 0.0  # the similarity from which a paper is "close prior work"
    notes: list[str] = field(default_factory=list)  # e.g. a source that was rate-limited
    warning: str = ""  # the one note to show where it is seen: every online source failed

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Novelty:
        data = dict(data)
        data["facets"] = [FacetNovelty.from_dict(f) for f in data.get("facets") or []]
        if "warning" not in data:  # stored before the field: the note that began so
            data["warning"] = next((n for n in data.get("notes") or []
                                    if n.startswith("every online source failed")), "")
        return super().from_dict(data)  # type: ignore[return-value]


@dataclass
class Lead(_Record):
    """What a candidate leads with, by design (not only by sampling)."""
    author_ids: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    paper_ids: list[str] = field(default_factory=list)


@dataclass
class Candidate(_Record):
    id: str  # "c1", "c2", ... in the order they were written
    proposal: Proposal = field(default_factory=Proposal)
    lead: Lead = field(default_factory=Lead)
    seed: int = 0
    merged_into: str = ""  # a near-duplicate of this candidate id, merged into it
    reviews: list[Review] = field(default_factory=list)
    meta_review: MetaReview | None = None
    novelty: Novelty | None = None
    # Measured signals (reviewers' mean score, novelty, field coverage, fluency...), by name.
    signals: dict[str, float] = field(default_factory=dict)
    # The drafts its editor cited by label (instruction models; run/citations.py): the
    # run's provenance starts from the winner's (run/tournament.py). None: a base model,
    # which cannot cite (an instruction model that cited nothing has an empty one).
    cited: Provenance | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        d = dict(data)
        d["proposal"] = Proposal.from_dict(d.get("proposal") or {})
        d["lead"] = Lead.from_dict(d.get("lead") or {})
        d["reviews"] = [Review.from_dict(r) for r in d.get("reviews") or []]
        d["meta_review"] = MetaReview.from_dict(d["meta_review"]) if d.get("meta_review") else None
        d["novelty"] = Novelty.from_dict(d["novelty"]) if d.get("novelty") else None
        d["cited"] = Provenance.from_dict(d["cited"]) if d.get("cited") else None
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class Judgement(_Record):
    """One pairwise comparison, in the order the judge saw the two."""
    first: str
    second: str
    winner: str = ""  # a candidate id; "" when the judge gave no decision (never guessed)
    reason: str = ""


@dataclass
class Tournament(_Record):
    method: str = "judge"  # "judge" (pairwise judgements) or "signals" (measured, no judge)
    judge_model: str = ""
    order: list[str] = field(default_factory=list)  # candidate ids, best first
    scores: dict[str, float] = field(default_factory=dict)  # Bradley-Terry or signal score
    intervals: dict[str, list[float]] = field(default_factory=dict)  # [low, high] (bootstrap)
    wins: dict[str, dict[str, int]] = field(default_factory=dict)  # wins[a][b]: a beat b
    judgements: list[Judgement] = field(default_factory=list)
    position_bias: float | None = None  # share of decisions won by the first-shown
    merged: int = 0  # near-duplicate candidates merged before ranking
    merge_threshold: float = 0.0
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tournament:
        d = dict(data)
        d["judgements"] = [Judgement.from_dict(j) for j in d.get("judgements") or []]
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class Change(_Record):
    """One question rewritten in a revision round, and the weakness it answers."""
    question: str  # "q1".."q5"
    answers: str = ""  # the weakness, quoted from a review; "" when none was named
    # Where `answers` comes from: "review" (a reviewer's own words) or "check" (an
    # automatic check of the proposal, run/stem_checks.py: base models); "" with no answer.
    source: str = ""


@dataclass
class Round(_Record):
    """One round of the proposal: round 0 is the first, each later one a revision."""
    number: int
    proposal: Proposal = field(default_factory=Proposal)
    reviews: list[Review] = field(default_factory=list)
    meta_review: MetaReview | None = None
    changes: list[Change] = field(default_factory=list)  # against the round before
    stopped: Stop | None = None  # why no round came after this one (None: one may)

    def stopped_for(self, reason: StopReason) -> bool:
        return self.stopped is not None and self.stopped.reason is reason

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Round:
        d = dict(data)
        d["proposal"] = Proposal.from_dict(d.get("proposal") or {})
        d["reviews"] = [Review.from_dict(r) for r in d.get("reviews") or []]
        d["meta_review"] = MetaReview.from_dict(d["meta_review"]) if d.get("meta_review") else None
        d["changes"] = [Change.from_dict(c) for c in d.get("changes") or []]
        d["stopped"] = Stop.from_stored(d.get("stopped"))
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class Similarity(_Record):
    """Proposal vs reference. `mean` is over the five questions the reference answers; a
    question the proposal left out counts 0 in it and is listed in `missing` (it has no
    entry in `per_question`). `evaluator` names everything the number depends on (the
    embedder and where the reference's answers came from): only scores with the same
    evaluator are comparable, and the UI shows it next to every score."""
    per_question: dict[str, float] = field(default_factory=dict)
    mean: float = 0.0
    embedder: str = ""
    reference: Proposal | None = None
    missing: list[str] = field(default_factory=list)
    # "five-question" (answer by answer) or "whole-text" (the proposal vs the abstract,
    # when no five-question reference exists).
    kind: str = "five-question"
    reference_source: str = ""  # pasted, stored restatement (by which model), shipped summary, abstract
    evaluator: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Similarity:
        data = dict(data)
        if data.get("reference"):
            data["reference"] = Proposal.from_dict(data["reference"])
        return super().from_dict(data)  # type: ignore[return-value]


@dataclass
class Run(_Record):
    id: str
    config: RunConfig
    # pending, running, then done, failed or cancelled; `interrupted` when the process
    # running it ended first (store.runs.reap_orphans); all but `done` may resume.
    status: str = "pending"
    created_at: str = ""
    profiles: dict[str, Profile] = field(default_factory=dict)
    proposal: Proposal | None = None
    reviews: list[Review] = field(default_factory=list)
    meta_review: MetaReview | None = None
    similarity: Similarity | None = None
    judge: dict | None = None  # LLM-judge scores against the reference (evaluate.judge)
    review_similarity: dict | None = None  # against real reviews (evaluate.review_similarity)
    timings: dict[str, float] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    errors: list[StageError] = field(default_factory=list)
    # What the run had to shorten or skip to fit the model (e.g. a prompt cut to its
    # context window), in words a reader understands; shown on the Results page.
    notes: list[str] = field(default_factory=list)
    # The brainstorm loop's results (records below): every candidate with its ranking, the
    # revision rounds (round 0 is the first proposal), where each answer came from, and
    # what each researcher brought. Empty for a plain one-proposal run.
    candidates: list[Candidate] = field(default_factory=list)
    tournament: Tournament | None = None
    novelty: Novelty | None = None  # the run's own proposal (each candidate carries its own)
    rounds: list[Round] = field(default_factory=list)
    provenance: Provenance | None = None
    credit: list[Credit] = field(default_factory=list)
    # Why each reviewer was chosen (reviewer id -> one sentence; run/people/reviewers.py).
    reviewer_reasons: dict[str, str] = field(default_factory=dict)
    # The stored row's version (optimistic locking); set by the store, not serialised.
    version: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.pop("version", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Run:
        d = dict(data)
        d["config"] = RunConfig.from_dict(d.get("config") or {})
        d["profiles"] = {k: Profile.from_dict(v) for k, v in (d.get("profiles") or {}).items()}
        d["proposal"] = Proposal.from_dict(d["proposal"]) if d.get("proposal") else None
        d["reviews"] = [Review.from_dict(r) for r in d.get("reviews") or []]
        d["meta_review"] = MetaReview.from_dict(d["meta_review"]) if d.get("meta_review") else None
        d["similarity"] = Similarity.from_dict(d["similarity"]) if d.get("similarity") else None
        d["usage"] = Usage.from_dict(d.get("usage") or {})
        d["errors"] = [StageError.from_dict(e) for e in d.get("errors") or []]
        d["candidates"] = [Candidate.from_dict(c) for c in d.get("candidates") or []]
        d["tournament"] = Tournament.from_dict(d["tournament"]) if d.get("tournament") else None
        d["novelty"] = Novelty.from_dict(d["novelty"]) if d.get("novelty") else None
        d["rounds"] = [Round.from_dict(r) for r in d.get("rounds") or []]
        d["provenance"] = Provenance.from_dict(d["provenance"]) if d.get("provenance") else None
        d["credit"] = [Credit.from_dict(c) for c in d.get("credit") or []]
        d.pop("version", None)
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class ProgressEvent(_Record):
    """What a stage reports while it works, so a UI can draw it live."""
    stage: str  # read, write, review, evaluate
    agent: str  # researcher id, "aggregator", "meta-reviewer", ...
    done: int
    total: int
    status: str = "done"  # started, done, failed, cached
    partial: str = ""  # a short piece of the output, for display
