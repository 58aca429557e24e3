"""Continue from an idea: a new neighbourhood seeded from an idea of the bank, so a finished
run's idea can be taken further by another run.

The seed is the idea's own neighbourhood (the researchers and papers its run, or its
candidate's lead, started from) plus the store's papers nearest its problem (Q1, by words
and meaning through the topic search), and its Q1 as the topic for suggestions of people
from other fields. The new run starts from the Neighbourhood page (or `run --researchers
... --papers ... --from-idea ID`) like any other, and stores the idea it came from
(RunConfig.from_idea, lineage.py).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..access import Viewer
from ..store import Store
from . import lineage
from .bank import Bank

NEAREST = 5  # papers nearest the idea's problem added to its neighbourhood


@dataclass(frozen=True)
class Seed:
    idea_id: str
    run_id: str
    topic: str  # the idea's Q1: the topic for suggestions
    researcher_ids: tuple[str, ...]
    paper_ids: tuple[str, ...]
    nearest: tuple[str, ...]  # the papers added for being nearest its problem

    def command(self) -> str:
        """The same neighbourhood as a `run` command line."""
        return (f"python -m rt_core run --researchers {','.join(self.researcher_ids)} "
                f"--papers {','.join(self.paper_ids)} --from-idea {self.idea_id}")


def seed_from(store: Store, bank: Bank, viewer: Viewer, idea_id: str,
              nearest_papers: Callable[[str, int], list[str]] | None = None) -> Seed:
    """The neighbourhood to continue from `idea_id`. An idea whose run was deleted (its ideas
    went with it), an unknown id and an idea the viewer may not see are each one message."""
    idea = lineage.source(bank, viewer, idea_id)
    researchers = tuple(r for r in idea.researcher_ids if store.corpus.researcher_exists(r))
    papers = [p for p in idea.paper_ids if store.corpus.paper_exists(p)]
    near = [p for p in (nearest_papers or _topic_papers(store))(idea.q1, NEAREST) if p not in papers]
    return Seed(idea.id, idea.run_id, idea.q1, researchers, tuple(papers + near), tuple(near))


def _topic_papers(store: Store) -> Callable[[str, int], list[str]]:
    def nearest(text: str, k: int) -> list[str]:
        from ..topic_search import for_store  # noqa: PLC0415  (MiniLM: only when asked)

        return [h.paper.id for h in for_store(store).papers(text, limit=k)]
    return nearest
