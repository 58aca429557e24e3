"""Which stage functions a prompt style runs: `run.chat` for instruction models,
`run.stem` for base models.

Kept apart from `run.context` (which both styles import) so that choosing a style
never closes an import circle.
"""
from __future__ import annotations

from types import ModuleType

from . import chat, stem


def stages_for(style: str) -> ModuleType:
    """The stage functions for a prompt style: `run.chat` or `run.stem`."""
    return stem if style == "stem" else chat
