"""The stage protocol: what a prompt style must provide to run every stage of a run.

There are two styles: `run.chat` for instruction models (one reply answers a whole
format) and `run.stem` for base models (documents that end in a sentence stem). The
steps of a run (`run.steps`) call only these functions, so they never ask which style
they are in, and a third style is a third module with the same functions.
`stages_for(style)` picks the module; tests/test_plan.py checks that both modules
conform (names and parameters), since modules cannot inherit. Kept apart from
`run.context` (which both styles import) so that choosing a style never closes an
import circle.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from ...models import registry
from ...types import MetaReview, Paper, Profile, Proposal, Review
from . import chat, stem
from .context import StageContext


@runtime_checkable
class PromptStyle(Protocol):
    """One module per style; each function is one agent's work in one stage."""

    async def read_profile(self, ctx: StageContext, researcher_id: str, name: str,
                           papers: list[Paper]) -> Profile:
        """A researcher's profile from their papers (missing=True when none came)."""
        ...

    async def write_draft(self, ctx: StageContext, persona: str | None, papers: list[Paper],
                          author_id: str = "") -> Proposal:
        """One author's five-question draft (persona None: a neutral writer)."""
        ...

    async def aggregate(self, ctx: StageContext, drafts: list[Proposal]) -> Proposal:
        """The joint proposal from the drafts (which it keeps in `drafts`)."""
        ...

    async def review(self, ctx: StageContext, reviewer_id: str, persona: str | None,
                     proposal: Proposal, papers: list[Paper], prior: list[str] | None = None) -> Review:
        """One reviewer's strengths, weaknesses and score; `prior` holds the titles of the
        nearest published work the novelty check found (rt_core.run.novelty), if it ran."""
        ...

    async def meta_review(self, ctx: StageContext, proposal: Proposal,
                          reviews: list[Review]) -> MetaReview:
        """The reviews summarised, with the reviewers' mean score."""
        ...


STAGE_FUNCTIONS = ("read_profile", "write_draft", "aggregate", "review", "meta_review")


# The stage functions of each prompt style the registry declares (models/registry.py).
STYLE_MODULES: dict[str, PromptStyle] = {registry.CHAT: chat, registry.STEM: stem}


def stages_for(style: str) -> PromptStyle:
    """The stage functions for a prompt style: `run.chat` or `run.stem`."""
    return STYLE_MODULES.get(style, chat)
