"""Where a proposal's answers came from (provenance) and what each researcher or paper
brought to it (credit): the records the run's provenance and credit stages store."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .record import Record as _Record


@dataclass
class Source(_Record):
    """A draft or paper an answer draws on, with how strongly."""
    kind: str  # "author" (that author's draft) or "paper"
    id: str
    score: float = 0.0  # embedding attribution, higher = more
    cited: bool = False  # the aggregator cited it by label (instruction models)


@dataclass
class Ground(_Record):
    """A sentence of a paper an answer was written from (base models' proposals from
    facets, run/facets/): the answer's provenance is the papers' own words."""
    paper_id: str
    facet: str  # "purpose", "mechanism", "evaluation" or "gap"
    sentence: str
    field: str = ""


@dataclass
class Provenance(_Record):
    answers: dict[str, list[Source]] = field(default_factory=dict)  # question key -> best first
    reviews: dict[str, list[Source]] = field(default_factory=dict)  # reviewer id -> their papers
    method: str = ""  # what measured it, e.g. the embedder's name

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Provenance:
        d = dict(data)
        for key in ("answers", "reviews"):
            d[key] = {k: [Source.from_dict(s) for s in v] for k, v in (d.get(key) or {}).items()}
        return super().from_dict(d)  # type: ignore[return-value]


@dataclass
class Credit(_Record):
    """What one researcher (or paper) brought: the run re-written without them."""
    kind: str  # "author" or "paper"
    id: str
    moved: dict[str, float] = field(default_factory=dict)  # question -> similarity to the full one
    score_change: float | None = None  # mean review score without them minus with them
    reference_change: float | None = None  # similarity to the reference, same sign rule
    sentence: str = ""  # e.g. "without Yamins, Q5 loses its neural-benchmark method"
