"""Who may see or do what: one rule, asked by every page, link and export.

A page that decided for itself is how a rater once unblinded a study from History and how a
stranger could delete anybody's run: each page had its own idea of "read-only". Here the
question is always the same: *this viewer* wants *this action* on *this run* (whose facts the
store knows), and `may` answers with a reason the page can show as it is.

Two ways to run the server (rt_core.deployment): in *personal* mode the one person at the
loopback address is treated like the operator (everything visible, as before); in *shared*
mode a visitor sees and changes only the runs their browser started, views a run whose link
they were given, and never learns anything about a run that is an item of an open study,
which only the operator and that study's organiser can open. A rater's browser names no run
in either mode. The refusal for such a run is
word for word the refusal for a run that does not exist, so a guessed id reveals nothing.
"""
from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


class Action(enum.StrEnum):
    LIST = "list"  # appear in this viewer's History (and the pickers fed by it)
    VIEW = "view"  # open it on Results or Run
    EXPORT = "export"  # download it (Markdown, JSON, CSV)
    DELETE = "delete"
    RESUME = "resume"
    CANCEL = "cancel"  # stop a live run
    REVISE = "revise"  # more revision rounds
    CREDIT = "credit"  # ablations that call the model again
    COMPARE = "compare"  # similarity, review comparison, the judge: they write to the run
    STEER = "steer"  # edit or comment on a version and let the community continue (model calls)
    CREATE_STUDY = "create_study"


# Actions that change a run or spend model calls on it: its owner or the operator only.
CHANGES = frozenset({Action.DELETE, Action.RESUME, Action.CANCEL, Action.REVISE, Action.CREDIT,
                     Action.COMPARE, Action.STEER})


@dataclass(frozen=True)
class Viewer:
    """The browser asking. `owner_hash` is the hash of the token its cookie keeps (never
    the token itself); `organiser_of` the studies whose organiser token it showed."""
    shared: bool = False
    operator: bool = False
    owner_hash: str = ""
    organiser_of: frozenset[str] = frozenset()
    rater: bool = False

    @property
    def privileged(self) -> bool:
        """Sees and may do everything: the operator, or anybody on a personal server."""
        return self.operator or not self.shared


@dataclass(frozen=True)
class RunFacts:
    """What the rule needs to know about one run; `run_facts` in rt_core.access_store
    reads them from the store and the live jobs."""
    run_id: str
    exists: bool = True
    owner_hash: str = ""  # '' : started from the command line, or before runs had owners
    open_studies: frozenset[str] = field(default_factory=frozenset)
    linked: bool = False  # the viewer came through this run's own `?run=` link


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.allowed


YES = Decision(True)


def no_such_run(run_id: str) -> str:
    """The one refusal for a run the viewer may not know about, the same whether it was
    deleted, never existed, or is hidden in a study."""
    shown = "".join(c for c in (run_id or "")[:64] if c.isalnum() or c in "-_") or "?"
    return (f"There is no run {shown} here: it may have been deleted, or the link was cut short. "
            "History lists the runs you can open.")


NOT_YOURS = ("This run was started in another browser: you can look at it, but only the browser "
             "that started it (or the server's operator) can change, resume or delete it.")
OPERATOR_ONLY = ("On this shared server only its operator can create a study (the operator link is "
                 "printed in the server's log when it starts).")
RATERS = "This browser joined a study as a rater: it shows the rating page only."


def owns(viewer: Viewer, facts: RunFacts) -> bool:
    """The viewer's browser started the run (constant-time comparison of the hashes)."""
    if not viewer.owner_hash or not facts.owner_hash:
        return False
    return hmac.compare_digest(viewer.owner_hash, facts.owner_hash)


def may(viewer: Viewer, action: Action, facts: RunFacts | None = None) -> Decision:
    """The one rule. `facts` is None only for actions on no run (creating a study)."""
    if action is Action.CREATE_STUDY:
        return YES if viewer.privileged else Decision(False, OPERATOR_ONLY)
    if facts is None:
        raise ValueError(f"{action} needs the run's facts")
    hidden = Decision(False, no_such_run(facts.run_id))
    if not facts.exists:
        return hidden
    if viewer.rater and not viewer.operator and not viewer.organiser_of:
        return hidden  # a rater's browser names no run at all
    if facts.open_studies and not (viewer.privileged or viewer.organiser_of & facts.open_studies):
        return hidden  # an item of an open study: blind for everybody else
    if viewer.privileged or owns(viewer, facts):
        return YES
    if action is Action.LIST:
        return hidden  # a link opens a run; it does not put it in History
    if action in (Action.VIEW, Action.EXPORT):
        return YES if facts.linked else hidden
    return Decision(False, NOT_YOURS if facts.linked else hidden.reason)


def listable(viewer: Viewer, rows: Iterable[Mapping], owners: Mapping[str, str],
             studies: Mapping[str, frozenset[str]]) -> list[dict]:
    """The stored runs (rows with an `id`) this viewer's History may show, in their order.
    `owners` maps run id to its owner hash, `studies` run id to the open studies it is in."""
    out = []
    for row in rows:
        rid = row["id"]
        facts = RunFacts(rid, owner_hash=owners.get(rid, ""), open_studies=studies.get(rid, frozenset()))
        if may(viewer, Action.LIST, facts):
            out.append(dict(row))
    return out


def hidden_own(viewer: Viewer, owners: Mapping[str, str], studies: Mapping[str, frozenset[str]]) -> int:
    """How many of the viewer's own runs an open study hides from them, so a page can say why
    History is empty instead of "no run yet". Asked through the same rule as every listing, so it
    counts only what `may` hides; the count names no run, arm or model."""
    hidden = 0
    for rid, open_studies in studies.items():
        facts = RunFacts(rid, owner_hash=owners.get(rid, ""), open_studies=open_studies)
        hidden += owns(viewer, facts) and not may(viewer, Action.LIST, facts)
    return hidden


def shows_cache_hits(viewer: Viewer) -> bool:
    """Whether a run's cache-hit count may be shown to this viewer. The caches are shared by
    the whole server and keep no record of which run filled them, so on a shared server a hit
    in a visitor's run can only have come from a run with the same model, mode and inputs,
    possibly one they may not see (an item of an open study): the count would confirm a guess
    about that run. Only the privileged (the operator, or anybody on a personal server) see it."""
    return viewer.privileged
