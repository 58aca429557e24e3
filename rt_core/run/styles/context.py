"""What every stage gets: the model client, progress, cancel, the run's material, and
the rules for choosing what a stage reads.

The stages themselves come in two styles with the same functions:
`chat` (instruction models) and `stem` (base models); `run.style.stages_for(style)`
picks one, so no stage ever asks which style it is in. This module imports neither,
so both can import it.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import CancelledRun
from ...models import registry
from ...models.client import LLMClient
from ...types import Paper, ProgressEvent
from .. import prompts

NEUTRAL_PERSONA = "You are a careful scientist writing a research proposal."
NEUTRAL_REVIEWER = "You are a careful scientist reviewing research proposals."
NO_PAPERS = "(No related papers were given.)"


@dataclass
class StageContext:
    client: LLMClient
    on_progress: Callable[[ProgressEvent], None] = lambda e: None
    cancel: threading.Event = field(default_factory=threading.Event)
    max_reasks: int = 2
    # Per-run material for base-model stages (run.grounding.Grounding, which also carries
    # the run's embedder for the clustered meta-review); chat stages ignore it.
    grounding: Any = None

    @property
    def style(self) -> str:
        return self.client.style

    @property
    def traits(self) -> registry.StyleTraits:
        """What the style can do: stages ask this, never compare the style's name."""
        return self.client.traits

    @property
    def temperature(self) -> float:
        return self.client.settings.temperature

    @property
    def prompts(self) -> prompts.PromptSet:
        return prompts.load(self.style)

    def check_cancel(self) -> None:
        if self.cancel.is_set():
            raise CancelledRun("the run was cancelled", "Finished parts are kept; start again to resume.")


def papers_key(parts: list[str]) -> str:
    """A short stable hash of what a cached item depends on."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def select_publications(papers: list[Paper], cutoff_year: int | None, exclude: set[str],
                        limit: int, keep_undated: bool = False) -> list[Paper]:
    """Newest first, none after the cut-off year, never an excluded (target) paper. With a
    cut-off, a paper without a year is left out (it may be later) unless keep_undated."""
    kept = [p for p in papers if p.id not in exclude and
            (cutoff_year is None or (p.year is None and keep_undated) or
             (p.year is not None and p.year <= cutoff_year))]
    kept.sort(key=lambda p: (p.year or 0), reverse=True)
    return kept[:limit]
