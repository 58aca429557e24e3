"""The aggregation modes: which parts of the neighbourhood the writers read."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """An aggregation mode, and what its writers read. Code asks the mode, never its name."""
    name: str
    help: str
    reads_profiles: bool  # authors write from their profiles (so profiles are read first)
    reads_papers: bool  # writers and reviewers see the chosen papers

    @property
    def needs_researchers(self) -> bool:
        return self.reads_profiles

    @property
    def needs_papers(self) -> bool:
        return self.reads_papers and not self.reads_profiles


MODES: dict[str, Mode] = {m.name: m for m in (
    Mode("self", "No neighbourhood at all: a baseline that writes from nothing.", False, False),
    Mode("agent", "Researchers only: each author writes from their profile, without the chosen "
                  "papers.", True, False),
    Mode("data", "Papers only: one agent with no persona reads all chosen papers.", False, True),
    Mode("global", "Researchers and papers together: the full method (recommended).", True, True),
)}
