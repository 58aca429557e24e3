"""What a suggestion is: the records `suggest` returns, the CLI prints and the app shows."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .bridges import Bridge


@dataclass
class Suggested:
    """A researcher or a paper, with its score, the parts of it and the reason in words."""
    kind: str  # "researcher" or "paper"
    id: str
    label: str  # the researcher's name or the paper's title
    fields: list[str]
    field_names: list[str]
    score: float
    parts: dict[str, float]  # raw parts, 0..1: topic, distance, bridges
    weighted: dict[str, float]  # parts x weights, summing to the score
    reason: str
    bridges: list[Bridge] = field(default_factory=list)
    detail: str = ""  # affiliation, or year
    closeness: float = 0.0  # the raw cosine to the topic
    source: str = "store"  # or "openalex", "semantic_scholar" (not in the store yet)
    import_id: str = ""  # what the app asks the source for to add it (online only)
    record: dict = field(default_factory=dict)  # an online paper as Paper.to_dict (to import it)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["bridges"] = [b.to_dict() for b in self.bridges]
        return d


@dataclass
class Suggestions:
    topic: str
    seed: str = ""
    seed_label: str = ""
    far_from: str = ""
    researchers: list[Suggested] = field(default_factory=list)
    papers: list[Suggested] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. what the online sources said

    def to_dict(self) -> dict:
        return {"topic": self.topic, "seed": self.seed, "seed_label": self.seed_label,
                "far_from": self.far_from, "notes": list(self.notes),
                "researchers": [s.to_dict() for s in self.researchers],
                "papers": [s.to_dict() for s in self.papers]}
