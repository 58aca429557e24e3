"""Continue from an idea, linked both ways: a run started from an idea (its neighbourhood
seeded by seed.py) stores the idea's id in its config (`RunConfig.from_idea`), so Results can
say "Continued from idea X" and the idea on the Ideas page "continued in run Y".

Both directions answer only with what the viewer may see (rt_core.access, through the bank and
access_store): an idea outside the viewer's bank is not named, a run they may not list is not
named. The one exception is an idea whose run was deleted since: it can show nobody anything,
and the run that came from it says so in one sentence instead of a dead link.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..access import Action, Viewer
from ..access_store import idea_decision, permitted
from ..errors import NotFoundError
from ..types import Run
from .bank import Bank, Idea

OPEN, DELETED = "open", "deleted"


@dataclass(frozen=True)
class Origin:
    idea_id: str
    state: str  # OPEN: in the viewer's bank (a link opens it); DELETED: its run is gone

    def sentence(self) -> str:
        if self.state == DELETED:
            return (f"Continued from idea {self.idea_id}, whose run has since been deleted "
                    "(the idea went with it).")
        return f"Continued from idea {self.idea_id}."


def source(bank: Bank, viewer: Viewer, idea_id: str) -> Idea:
    """The idea a new run continues from, or one message: an idea whose run was deleted (its
    ideas went with it) says so; an unknown id and an idea the viewer may not see are the
    bank's one refusal. Asked by the seed (the page's button, `ideas continue`) and by
    `run --from-idea`."""
    idea_id = (idea_id or "").strip()
    run_id = idea_id.split(":", 1)[0]
    store = bank.store
    if ":" in idea_id and not store.runs.exists(run_id) and not store.ideas.get([idea_id]):
        raise NotFoundError(f"idea {idea_id} came from run {run_id}, which was deleted, and its ideas with it",
                            "Continue from an idea of a run that is still stored (see `ideas list`).",
                            app_hint="Pick an idea of a run that is still stored.")
    return bank.one(viewer, idea_id)


def origin(bank: Bank, viewer: Viewer, run: Run) -> Origin | None:
    """Where this run came from, as far as the viewer may know; None: not from an idea, or from
    one the viewer may not see."""
    iid = (run.config.from_idea or "").strip()
    if not iid:
        return None
    store = bank.store
    source_run = iid.split(":", 1)[0]
    if not store.runs.exists(source_run) and not store.ideas.get([iid]):
        return Origin(iid, DELETED)
    if store.ideas.get([iid]) and idea_decision(store, viewer, iid, source_run):
        return Origin(iid, OPEN)
    return None


def continued_in(bank: Bank, viewer: Viewer, idea_id: str) -> list[str]:
    """The runs started from this idea that the viewer may list (History's rule), oldest first."""
    return permitted(bank.store, viewer, Action.LIST, bank.store.ideas.continued_in(idea_id))
