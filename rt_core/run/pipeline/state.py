"""What a run's stages share, as typed records: the run's fixed context, what each stage
hands on, and the state the runner folds those outputs into.

A stage is a function of one `RunState` (run/pipeline/runner.py's `Stage.action`) that
returns its output: a small frozen record below (`Drafts`, `Reviewers`, `Proposed`...),
which the runner folds into the state when the stage ends (`RunState.fold`), before the
run is saved, like the memory steps of an agent loop. A stage reads the context (`store`,
`ctx`, `reader`...) and the folded outputs of the stages it needs, and never writes
another stage's part. What its agents produce one by one (profiles, reviews) is also kept
on the run's record the moment each arrives, through the recorder (`Recorder.keep`), so a
failure keeps what finished; that is the one write a stage makes itself (tests/
test_stage_outputs.py checks every plan for it). The brainstorm's and the revision's outputs
live beside their stages (run/candidates/outputs.py, run/revision/outputs.py), a replay's in
run/replay/outputs.py; they follow the same rule. Keeping
the records here, in a module that imports no stage, is what lets every stage name its
input's type without importing the simulation or the plan: nothing below the runner
points back up.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...models.queue import model_queue
from ...types import (
    MODES,
    MetaReview,
    Mode,
    Novelty,
    Profile,
    Proposal,
    Provenance,
    Review,
    Run,
    RunConfig,
    RunRequest,
    Similarity,
)
from ..people.reading import Reader
from ..people.reviewers import ReviewerChoice
from ..styles.grounding import Grounding

if TYPE_CHECKING:
    from ...models.client import LLMClient
    from ...models.embed import Embedder
    from ...store import Store
    from ..evidence.evaluate import Reference
    from ..styles.context import StageContext
    from ..styles.style import PromptStyle
    from .recorder import Recorder


@dataclass
class CandidateWork:
    """What the candidate stages (run/candidates/stages.py, run/candidates/tournament.py) leave each other
    beyond the run's own records."""
    lead_texts: dict[str, str] = field(default_factory=dict)  # candidate id -> lead in words
    personas: dict[str, str] = field(default_factory=dict)  # candidate id -> lead author's profile
    vectors: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # id -> q -> unit vector
    fluency: dict[str, float] = field(default_factory=dict)  # id -> mean token log-probability


@dataclass
class RunState:
    """One run's context (fixed once it starts), what it derives from that context (the
    reader, the reviewer choice, the grounding: `start` only wires the models and the store
    in), and its stages' outputs."""
    # -- the context every stage may read
    request: RunRequest
    store: Store
    run: Run  # the record saved after each stage
    client: LLMClient
    ctx: StageContext
    style: PromptStyle
    recorder: Recorder
    embedder: Embedder
    cutoff_year: int | None  # the profiles' cut-off, with the reference paper's year applied
    # -- what the stages leave for each other
    reference: Reference | None = None  # a replay resolves it once for every mode
    candidate_vectors: dict | None = None  # a replay shares them between modes
    candidates_error: Exception | None = None
    drafts: dict[str, Proposal] = field(default_factory=dict)
    author_order: list[str] = field(default_factory=list)
    reviewer_ids: list[str] = field(default_factory=list)
    candidates: CandidateWork = field(default_factory=CandidateWork)

    @property
    def config(self) -> RunConfig:
        return self.request.config

    # What the run reads and whom it may ask to review, derived from the context when a
    # stage first asks (once: the reviewer choice keeps the reasons of its last choice).
    @functools.cached_property
    def reader(self) -> Reader:
        return Reader(self.store, self.config, self.cutoff_year, self.ctx, self.style)

    @functools.cached_property
    def reviewers(self) -> ReviewerChoice:
        return ReviewerChoice(self.store, self.config, self.reader, self.embedder)

    @functools.cached_property
    def grounding(self) -> Grounding:
        """Field names and background papers for the base-model stages' key concepts, which
        are computed on first use (chat stages never ask, so never pay the embedding)."""
        own = [p for rid in self.config.researcher_ids for p in self.reader.publications(rid)[:5]] \
            if self.mode.reads_profiles else []
        return Grounding.for_store(self.store, self.reader.grounding_papers(self.mode), self.embedder,
                                   facet_pool=own)

    @property
    def mode(self) -> Mode:
        return MODES[self.config.mode]

    @property
    def serial(self) -> bool:
        """One in-process model: agents one after another, so llama.cpp reuses its prefix."""
        return self.client.semaphore_limit == 1

    def model_queue(self):
        """The first-come queue in front of a serial model, or None."""
        return model_queue(self.client.settings.model.strip()) if self.client.facts.serial else None

    def ordered_drafts(self) -> list[Proposal]:
        return [self.drafts[a] for a in self.author_order if a in self.drafts]

    def fold(self, output: Output | None) -> None:
        """Take a stage's output into the state (the runner calls this as the stage ends)."""
        if output is not None:
            output.fold_into(self)


# -- what the stages hand on (each folds itself into the state) ---------------------------------
@dataclass(frozen=True)
class Profiles:
    """`read`: the researchers' profiles (also kept on the run as each is read)."""
    by_researcher: dict[str, Profile]

    def fold_into(self, state: RunState) -> None:
        state.run.profiles.update(self.by_researcher)


@dataclass(frozen=True)
class CandidateVectors:
    """`candidates`: the reviewer candidates' vectors, or why they could not be made (the
    writers go on; the choice, which needs them, fails with it)."""
    vectors: dict | None
    error: Exception | None = None

    def fold_into(self, state: RunState) -> None:
        state.candidate_vectors, state.candidates_error = self.vectors, self.error


@dataclass(frozen=True)
class Drafts:
    """`write`: one draft per author, in the authors' order."""
    by_author: dict[str, Proposal]
    order: tuple[str, ...]

    def fold_into(self, state: RunState) -> None:
        state.drafts, state.author_order = dict(self.by_author), list(self.order)


@dataclass(frozen=True)
class Proposed:
    """`aggregate`: the drafts merged into the run's proposal, and what its merge cited
    (None: nothing, and the run's provenance stands)."""
    proposal: Proposal
    cited: Provenance | None = None

    def fold_into(self, state: RunState) -> None:
        state.run.proposal = self.proposal
        if self.cited is not None:
            state.run.provenance = self.cited


@dataclass(frozen=True)
class Reviewers:
    """`choose` and `read_reviewers`: who reviews, in order, and (from the choice) one
    sentence each saying why (None: the reasons the run has stand)."""
    ids: tuple[str, ...]
    reasons: dict[str, str] | None = None

    def fold_into(self, state: RunState) -> None:
        state.reviewer_ids = list(self.ids)
        if self.reasons is not None:
            state.run.reviewer_reasons = dict(self.reasons)


@dataclass(frozen=True)
class Reviews:
    """`review`: the reviews in reviewer order (kept on the run as each arrives; the order
    is set here, so the meta-review's prompt does not depend on who answered first)."""
    reviews: tuple[Review, ...]

    def fold_into(self, state: RunState) -> None:
        state.run.reviews = list(self.reviews)


@dataclass(frozen=True)
class MetaReviewed:
    """`meta_review`: the reviews summarised."""
    meta_review: MetaReview

    def fold_into(self, state: RunState) -> None:
        state.run.meta_review = self.meta_review


@dataclass(frozen=True)
class Checked:
    """`novelty`: the check of the run's proposal (key `PROPOSAL`) or of each candidate (by
    id); a check that failed is absent (recorded beside the run)."""
    by_owner: dict[str, Novelty]
    PROPOSAL = "proposal"

    def fold_into(self, state: RunState) -> None:
        by_id = {c.id: c for c in state.run.candidates}
        for owner, novelty in self.by_owner.items():
            if owner == self.PROPOSAL:
                state.run.novelty = novelty
            else:
                by_id[owner].novelty = novelty


@dataclass(frozen=True)
class Evaluated:
    """`evaluate`: the similarity to the reference, and the reference's answers when this
    stage restated them (a replay resolves them once and hands them over)."""
    similarity: Similarity
    reference: Reference | None = None

    def fold_into(self, state: RunState) -> None:
        if self.reference is not None:
            state.reference = self.reference
        state.run.similarity = self.similarity


Output = Profiles | CandidateVectors | Drafts | Proposed | Reviewers | Reviews | MetaReviewed | Checked | Evaluated
