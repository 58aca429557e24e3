"""Why a revision round was the last: a value, never a sentence.

A round records its stop as a `Stop` (the reason and the numbers its words need);
the revision decides with the reason (`Round.stopped_for`), and only
`run.rounds_report.stop_words` turns a stop into words, for the app, the CLI and the
export. Kept out of types.py, which imports it, so it depends on nothing.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class StopReason(StrEnum):
    """Why no revision round came after a round; stored as its value."""
    CHANGED_NOTHING = "changed_nothing"  # the next revision rewrote no answer
    NO_SCORE = "no_score"  # no mean score to compare with the round before
    NOT_IMPROVED = "not_improved"  # the mean score did not rise
    LAST_ROUND = "last_round"  # the last of the rounds asked for


# How runs stored before stops were values said them: the one place such words are read,
# so that an older run still loads, shows its own words, and is refused what it was refused.
_EARLIER_WORDS = (("changed nothing", StopReason.CHANGED_NOTHING), ("no mean score", StopReason.NO_SCORE),
                  ("last of the", StopReason.LAST_ROUND))


@dataclass
class Stop:
    """A round's stop: its reason, and the numbers that its words need."""
    reason: StopReason
    before: float | None = None  # the round before's mean score
    after: float | None = None  # this round's mean score
    kept: int | None = None  # the round the run kept (the best-scored) when it stopped
    reopened: bool = False  # a further round was asked for after this stop (run/revise_more.py)
    words: str = ""  # an older run's own words, shown as they were stored

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_stored(cls, data: dict[str, Any] | str | None) -> Stop | None:
        """A stored stop: a record, nothing, or (a run stored before stops were values) words."""
        if not data:
            return None
        if isinstance(data, str):
            low = data.lower()
            reason = next((r for phrase, r in _EARLIER_WORDS if phrase in low), StopReason.NOT_IMPROVED)
            return cls(reason, reopened="further round was asked for" in low, words=data)
        names = {f.name for f in dataclasses.fields(cls)}
        d = {k: v for k, v in data.items() if k in names}
        return cls(**(d | {"reason": StopReason(d["reason"])}))
