"""What a revision round's stages return (run/revision/rounds.py), folded into the run's
state by the runner when the stage ends, as every stage's output is (run/pipeline/state.py).
A round's reviews are kept on it as each arrives (`Recorder.keep`), so a failure keeps them;
the rest of a round (its proposal, its meta-review, why it stopped, which round the run
shows) is a stage's output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...types import MetaReview, Proposal, Review, Round, Run, Stop

if TYPE_CHECKING:
    from ..pipeline.state import RunState


def mean(meta: MetaReview | None) -> float | None:
    return meta.score if meta is not None else None


def best_round(rounds: list[Round]) -> Round:
    """The best-scored round (the earliest on a tie), else the last."""
    scored = [x for x in rounds if mean(x.meta_review) is not None]
    return max(scored, key=lambda x: (mean(x.meta_review), -x.number)) if scored else rounds[-1]


def show_best(run: Run) -> Round:
    """The run's proposal, reviews and meta-review become the best-scored round's (the
    earliest on a tie): a revision that made things worse is kept in `rounds` and shown
    there, but never replaces a better proposal."""
    best = best_round(run.rounds)
    run.proposal = Proposal(**best.proposal.answers(), missing=list(best.proposal.missing),
                            drafts=list(run.proposal.drafts) if run.proposal else [],
                            grounds=dict(best.proposal.grounds))
    run.reviews, run.meta_review = list(best.reviews), best.meta_review
    return best


@dataclass(frozen=True)
class Revised:
    """`revise_r`: round 0 when this is the first revision (None: the run has it), why round
    r-1 stops when the revision changed nothing, else round r's proposal."""
    r: int
    first: Round | None = None
    stopped_before: Stop | None = None
    revised: Round | None = None

    def fold_into(self, state: RunState) -> None:
        rounds = state.run.rounds
        if self.first is not None and not rounds:
            rounds.append(self.first)
        if self.stopped_before is not None:
            rounds[self.r - 1].stopped = self.stopped_before
        if self.revised is not None:
            rounds.append(self.revised)


@dataclass(frozen=True)
class RoundReviews:
    """`review_r`: round r's reviews in the round-0 reviewers' order (they arrive in any)."""
    r: int
    reviews: tuple[Review, ...]

    def fold_into(self, state: RunState) -> None:
        state.run.rounds[self.r].reviews = list(self.reviews)


@dataclass(frozen=True)
class RoundMetaReview:
    """`meta_review_r`: round r's meta-review and why the revision stops after it (None:
    it goes on); the run then shows its best-scored round."""
    r: int
    meta_review: MetaReview
    stopped: Stop | None

    def fold_into(self, state: RunState) -> None:
        rnd = state.run.rounds[self.r]
        rnd.meta_review, rnd.stopped = self.meta_review, self.stopped
        show_best(state.run)


@dataclass(frozen=True)
class Settled:
    """`settle_results` (more rounds of a finished run, run/revision/more.py): whether the
    judge's scores and the real-review comparison, made on the old proposal and reviews,
    no longer hold."""
    stale: bool

    def fold_into(self, state: RunState) -> None:
        if self.stale:
            state.run.judge, state.run.review_similarity = None, None
