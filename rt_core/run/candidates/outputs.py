"""What the brainstorm's stages return (run/candidates/stages.py, tournament.py), each folded
into the run's state by the runner when its stage ends, as the single proposal's outputs are
(run/pipeline/state.py). What a stage's agents finish one by one (a candidate written, a
review, a meta-review) is kept on the run's candidates as it arrives, through the recorder
(`Recorder.keep`), so a failure keeps it; everything else a stage makes is here.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...types import Candidate, Review, Tournament

if TYPE_CHECKING:
    from ..pipeline.state import RunState


@dataclass(frozen=True)
class Leads:
    """`leads`: one candidate record per requested candidate, with its lead in words."""
    candidates: tuple[Candidate, ...]
    lead_texts: dict[str, str]

    def fold_into(self, state: RunState) -> None:
        state.run.candidates.extend(self.candidates)
        state.candidates.lead_texts.update(self.lead_texts)


@dataclass(frozen=True)
class Written:
    """`write_candidates`: each candidate's fluency (mean token log-probability), when the
    model gives log-probabilities (the candidates themselves were kept as they arrived)."""
    fluency: dict[str, float]

    def fold_into(self, state: RunState) -> None:
        state.candidates.fluency.update(self.fluency)


@dataclass(frozen=True)
class Merged:
    """`merge_candidates`: the answers' vectors, and which candidate repeats which."""
    vectors: dict[str, dict[str, np.ndarray]]
    merged: dict[str, str]  # later candidate -> the earlier one it repeats
    threshold: float

    def fold_into(self, state: RunState) -> None:
        state.candidates.vectors = self.vectors
        for c in state.run.candidates:
            if c.id in self.merged:
                c.merged_into = self.merged[c.id]
        t = state.run.tournament or Tournament()
        t.merged, t.merge_threshold = len(self.merged), self.threshold
        state.run.tournament = t


@dataclass(frozen=True)
class Reviewed:
    """`review_candidates`: each live candidate's reviews in reviewer order (they arrived in
    any order), so each meta-review's prompt is stable."""
    reviews: dict[str, tuple[Review, ...]]

    def fold_into(self, state: RunState) -> None:
        for c in state.run.candidates:
            if c.id in self.reviews:
                c.reviews = list(self.reviews[c.id])


@dataclass(frozen=True)
class Judged:
    """`tournament`: the tournament record with its judgements and fit (a copy of the run's,
    filled by the stage)."""
    tournament: Tournament

    def fold_into(self, state: RunState) -> None:
        state.run.tournament = self.tournament


@dataclass(frozen=True)
class Ranked:
    """`rank`: the tournament's order, each live candidate's signals, and the winner, whose
    proposal, reviews, meta-review and citations become the run's."""
    tournament: Tournament
    signals: dict[str, dict[str, float]]
    best: str

    def fold_into(self, state: RunState) -> None:
        state.run.tournament = self.tournament
        by_id = {c.id: c for c in state.run.candidates}
        for cid, signals in self.signals.items():
            by_id[cid].signals = signals
        best = by_id[self.best]
        state.run.proposal, state.run.reviews, state.run.meta_review = best.proposal, list(best.reviews), \
            best.meta_review
        # What the winner's editor cited starts the run's provenance (the provenance stage
        # scores it); a loser's citations stay on its own candidate record.
        state.run.provenance = copy.deepcopy(best.cited)


def own_tournament(state: RunState) -> Tournament:
    """A copy of the run's tournament record for a stage to fill and return (the run's
    stays as it is until the runner folds the stage's output in)."""
    return copy.deepcopy(state.run.tournament) if state.run.tournament is not None else Tournament()
