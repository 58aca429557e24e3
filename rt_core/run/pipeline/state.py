"""What a run's stages share, as typed records: the run's fixed context and what each
stage leaves for the next.

A stage is a function of one `RunState` (run/pipeline/runner.py's `Stage.action`). The record is
made once, when the run starts (`Simulation.start`), from the validated request; a
stage reads the context (`store`, `ctx`, `reader`...) and the outputs of the stages it
needs (`drafts`, `reviewer_ids`...), and writes its own. Keeping the fields here, in a
module that imports no stage, is what lets every stage name its input's type without
importing the simulation or the plan: nothing below the runner points back up.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...models import registry
from ...types import MODES, Mode, Proposal, Run, RunConfig, RunRequest

if TYPE_CHECKING:
    from ...models.client import LLMClient
    from ...models.embed import Embedder
    from ...store import Store
    from ..evidence.evaluate import Reference
    from ..people.reading import Reader
    from ..people.reviewers import ReviewerChoice
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
    """One run's context (fixed once it starts) and its stages' outputs."""
    # -- the context every stage may read
    request: RunRequest
    store: Store
    run: Run  # the record saved after each stage
    client: LLMClient
    ctx: StageContext
    style: PromptStyle
    recorder: Recorder
    embedder: Embedder
    reader: Reader
    reviewers: ReviewerChoice
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

    @property
    def mode(self) -> Mode:
        return MODES[self.config.mode]

    @property
    def serial(self) -> bool:
        """One in-process model: agents one after another, so llama.cpp reuses its prefix."""
        return self.client.semaphore_limit == 1

    def model_queue(self):
        """The first-come queue in front of a serial model, or None."""
        return registry.queue_for(self.client.settings.model)

    def ordered_drafts(self) -> list[Proposal]:
        return [self.drafts[a] for a in self.author_order if a in self.drafts]
