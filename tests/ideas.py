"""Scripted replies for tests of several candidates and their tournament.

Candidate i (its calls carry seeds from i * 1000 on, run/candidates/leads.py) gets a proposal about
topic i, whose words no other topic shares, so candidates are distinct ideas unless a
test makes two of them the same. A judge reply is decided by `prefer(a, b)` on the
candidate numbers shown as A and B (None: a reply without a decision).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from rt_core import fiveq
from rt_core.models.scripted import demo_responder
from rt_core.run.candidates.leads import SEED_STEP

TOPICS = [
    ("galaxy redshift surveys", "spectroscopic catalogues of distant galaxies", "telescope time"),
    ("courtroom transcripts", "sentencing remarks read by judges", "legal archives"),
    ("protein folding kinetics", "misfolded enzymes in yeast cells", "cryo-electron microscopy"),
    ("wheat crop yields", "drought stress on farmland soils", "satellite rainfall records"),
    ("songbird migration routes", "radio tags on warblers crossing deserts", "ringing stations"),
    ("jazz chord harmony", "improvised solos over chord changes", "recorded concert tapes"),
    ("urban bus timetables", "commuter delays at rush hour", "ticket gate logs"),
    ("glacier meltwater chemistry", "ice cores drilled in Greenland", "isotope ratios"),
    ("children's vocabulary growth", "picture-book reading at bedtime", "nursery recordings"),
    ("volcanic ash dispersal", "aircraft routes near eruptions", "lidar soundings"),
    ("coral reef bleaching", "sea surface heat waves", "diver photo transects"),
    ("medieval trade ledgers", "merchant guild accounts in Venice", "parchment archives"),
]
JUDGE_MARK = 'exactly "Winner: A"'


def topic_of(text: str) -> int | None:
    """The number (1-based) of the topic a text is about."""
    for i, (a, _, _) in enumerate(TOPICS, 1):
        if a in text:
            return i
    return None


def proposal(i: int) -> str:
    a, b, c = TOPICS[(i - 1) % len(TOPICS)]
    answers = [f"Can {a} be predicted from {b}?", f"Knowing {a} changes how {b} is studied.",
               f"Measurements of {b} are noisy and sparse.", f"Earlier work on {a} ignored {c}.",
               f"We combine {c} with models of {a} and test them on {b}."]
    return "\n".join(f"{q.heading}\n{x}" for q, x in zip(fiveq.QUESTIONS, answers, strict=True))


def responder(prefer: Callable[[int, int], str | None] | None = None,
              same: dict[int, int] | None = None) -> Callable[[list, dict], str]:
    """Replies for every call of a run with several candidates. `same` maps a candidate
    number to another whose proposal it repeats word for word (a near-duplicate)."""
    same = same or {}

    def reply(messages: list, params: dict) -> str:
        prompt = str(messages[-1].get("content", ""))
        whole = " ".join(str(m.get("content", "")) for m in messages)
        if JUDGE_MARK in whole:
            first, _, second = whole.partition("Proposal B:")
            a, b = topic_of(first.split("Proposal A:", 1)[-1]), topic_of(second)
            decided = prefer(a, b) if prefer else "A"
            return f"A is about topic {a}, B about topic {b}." + (f"\nWinner: {decided}" if decided else "")
        if "The direction of this proposal:" in prompt:
            i = int(params.get("seed", 0)) // SEED_STEP
            return proposal(same.get(i, i))
        return demo_responder(messages, params)

    return reply


def by_order(hidden: list[int]) -> Callable[[int, int], str]:
    """A judge that prefers whichever comes first in `hidden` (best first)."""
    rank = {c: r for r, c in enumerate(hidden)}
    return lambda a, b: "A" if rank[a] < rank[b] else "B"


def number(cid: str) -> int:
    return int(re.sub(r"\D", "", cid))
