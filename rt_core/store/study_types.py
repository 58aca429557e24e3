"""The records of a human-evaluation study: its rubric and settings, items (blinded
proposals), units (what a rater judges) and tasks (what the rating page shows).

Records, like types.py for runs: the store keeps and returns them, and rt_core.study
designs, assigns and analyses studies with them. Living with the store rather than in
study/, they let the store stay below the study code (store/ imports no domain module).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..fiveq import QUESTION_KEYS

MODES = ("absolute", "pairwise")
RATER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{1,39}$")
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: easy to read out loud


class StudyClosedError(InputError):
    hint = "The organiser has closed this study; answers given before it closed are kept."


@dataclass(frozen=True)
class Criterion:
    """One rubric line: a 1-10 scale with what 1 and 10 mean."""
    name: str
    question: str
    low: str  # anchor for 1
    high: str  # anchor for 10

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,29}", self.name):
            raise InputError(f"criterion name {self.name!r} is not usable",
                             "Use lower-case letters, digits and _ (up to 30 characters).")


# The Si et al. (2024) rubric, anchors in our own words.
DEFAULT_CRITERIA: tuple[Criterion, ...] = (
    Criterion("novelty", "How new is the idea?", "a well-known idea, done before",
              "clearly different from anything published"),
    Criterion("feasibility", "Could a small team carry it out in a few months?",
              "impossible with today's means", "straightforward to execute"),
    Criterion("excitement", "Would the field care if it worked?", "nobody would notice",
              "would change how people work"),
    Criterion("effectiveness", "How likely is it to work as promised?", "almost certainly fails",
              "very likely to deliver"),
    Criterion("overall", "Your overall judgement of the proposal.", "reject", "top-conference award"),
)
# What a ten-minute session asks by default; the other two are there on request.
SESSION_CRITERIA: tuple[Criterion, ...] = tuple(c for c in DEFAULT_CRITERIA
                                                if c.name in ("novelty", "feasibility", "overall"))


@dataclass(frozen=True)
class StudySettings:
    name: str
    mode: str = "pairwise"
    criteria: tuple[Criterion, ...] = SESSION_CRITERIA
    raters_per_unit: int = 2  # the overlap every unit is brought up to first (a floor, not a ceiling)
    max_units_per_rater: int = 20  # a cap per rater, so no one rater dominates
    minutes_per_rater: float = 10.0  # session length: sizes each rater's queue (store/study_queue.py)
    repeat_check: bool = False  # show one unit again (sides swapped) at the end
    gold_check: bool = False  # pairwise: a pair with a known answer
    allowed_raters: tuple[str, ...] = ()  # empty: any well-formed rater id
    arm_by: str = "mode"
    restyled: bool = False  # items were restyled by a model (originals kept)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise InputError("the study needs a name", "Give it a short name raters will recognise.")
        if self.mode not in MODES:
            raise InputError(f"unknown study mode {self.mode!r}", f"Choose one of {', '.join(MODES)}.")
        names = [c.name for c in self.criteria]
        if not names or len(set(names)) != len(names):
            raise InputError("the rubric needs at least one criterion and unique names",
                             "Remove the duplicate criterion.")
        if self.raters_per_unit < 1 or self.max_units_per_rater < 1:
            raise InputError("raters per item and items per rater must be at least 1")
        if not 1 <= self.minutes_per_rater <= 240:
            raise InputError("minutes per rater must be between 1 and 240",
                             "Ten minutes suits a session in a room.")
        for rid in self.allowed_raters:
            check_rater_id(rid)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudySettings:
        d = dict(data)
        d["criteria"] = tuple(Criterion(**c) for c in d.get("criteria") or ())
        d["allowed_raters"] = tuple(d.get("allowed_raters") or ())
        return cls(**d)


def check_rater_id(rater_id: str) -> str:
    rid = (rater_id or "").strip()
    if not RATER_ID.fullmatch(rid):
        raise InputError(f"{rid!r} is not a valid rater id" if rid else "enter your rater id",
                         "Use 2-40 letters, digits, '.', '_', '-' or '@' (no spaces), e.g. your "
                         "initials or the id the organiser gave you.")
    return rid


@dataclass
class StudyItem:
    item_id: str
    arm: str
    target: str  # what the proposal is about: the reference paper, or the neighbourhood
    source: str  # "run", "real" or "gold"
    answers: dict[str, str]
    run_id: str = ""
    styled: dict[str, str] | None = None  # restyled answers; `answers` stays the original

    def shown(self) -> dict[str, str]:
        """What a rater sees: the restyled text if there is one, in the neutral format."""
        return neutral(self.styled or self.answers)


@dataclass(frozen=True)
class Unit:
    unit_id: str
    item_a: str
    item_b: str | None = None  # None: an absolute-mode unit (one item)
    gold_item: str | None = None  # a gold pair: the item that should win


_MARKUP = re.compile(r"(\*\*|__|`|^#+\s*|^\s*[-*•]\s+)", re.M)


def neutral(answers: Mapping[str, str]) -> dict[str, str]:
    """One plain format for every arm: Markdown markers and list bullets removed, whitespace
    collapsed, so layout cannot give an arm away."""
    out = {}
    for k in QUESTION_KEYS:
        text = _MARKUP.sub("", str(answers.get(k) or ""))
        out[k] = " ".join(text.split()) or "(no answer)"
    return out


@dataclass
class Task:
    """One thing a rater is asked to do, as the rating page needs it (no arm, run or model)."""
    position: int
    unit_id: str
    left: dict[str, str]
    right: dict[str, str] | None = None
    done: bool = False


def check_answers(s: StudySettings, answers: Mapping[str, Any], pairwise: bool) -> list[tuple]:
    """(criterion, score, choice) per rubric line, each checked: a choice for a pair, a whole
    score from 1 to 10 for a single item."""
    values = []
    for c in s.criteria:
        v = answers.get(c.name)
        if pairwise:
            if v not in ("left", "right", "tie"):
                raise InputError(f"choose left, right or tie for {c.name}")
            values.append((c.name, None, v))
        else:
            if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or not 1 <= v <= 10:
                raise InputError(f"give {c.name} a score from 1 to 10")
            values.append((c.name, int(v), None))
    return values
