"""What a replay's own stages return (run/replay/paper.py), folded into the Replay by its
runner when each ends, as a run's stages' outputs are folded into the run's state
(run/pipeline/state.py). The shared stages make something once for every mode; the fold
hands it to each mode's run state, so no stage writes a mode's state itself. A mode's own
run is its own plan's business (its stages return their outputs to its own runner).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ...types import Profile, StageError

if TYPE_CHECKING:
    from ..evidence.evaluate import Reference
    from ..pipeline.simulation import Simulation
    from ..pipeline.state import CandidateVectors, RunState


class Replay(Protocol):
    """What the folds below write of a replay (run/replay/paper.py's Replay, named by its
    parts so this module does not import the one that imports it)."""
    reference: Reference | None
    band: ChanceBand | None
    sims: dict[str, Simulation]

    def readers(self) -> list[RunState]: ...


@dataclass
class ChanceBand:
    """Similarity of the reference to random unrelated papers' five answers."""
    median: float
    low: float  # 5th percentile
    high: float  # 95th percentile
    n: int
    per_question: dict[str, float] = field(default_factory=dict)  # medians


@dataclass(frozen=True)
class Resolved:
    """`reference`: the reference paper's answers, for the replay and every mode."""
    reference: Reference

    def fold_into(self, replay: Replay) -> None:
        replay.reference = self.reference
        for sim in replay.sims.values():
            sim.state.reference = self.reference


@dataclass(frozen=True)
class SharedVectors:
    """`candidates`: the reviewer candidates' vectors (or why there are none), for every
    mode that chooses reviewers (None: the first such mode had them already)."""
    vectors: CandidateVectors | None

    def fold_into(self, replay: Replay) -> None:
        for state in replay.readers():
            state.fold(self.vectors)


@dataclass(frozen=True)
class SharedProfiles:
    """`read`: the authors' profiles, read once (kept on the first reading mode's run as each
    arrived), and the reading's errors, for every mode that reads profiles."""
    profiles: dict[str, Profile]
    errors: tuple[StageError, ...]

    def fold_into(self, replay: Replay) -> None:
        first, *rest = replay.readers()
        first.run.profiles.update(self.profiles)
        for state in rest:
            state.run.profiles.update(self.profiles)
            state.run.errors.extend(self.errors)


@dataclass(frozen=True)
class Banded:
    """`chance`: the similarity band of unrelated papers to the reference."""
    band: ChanceBand

    def fold_into(self, replay: Replay) -> None:
        replay.band = self.band
