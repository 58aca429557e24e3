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
Papers and researchers follow the same rule (the end of this module): a visitor's uploads are
theirs, and no upload changes a record that was there before it.
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
    PUBLISH = "publish"  # share a paper or researcher a visitor added with everybody


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
PUBLISH_OPERATOR_ONLY = ("On this shared server only its operator can share a paper or researcher a "
                         "visitor added with everybody.")
RATERS = "This browser joined a study as a rater: it shows the rating page only."


def owns(viewer: Viewer, facts: RunFacts) -> bool:
    """The viewer's browser started the run (constant-time comparison of the hashes)."""
    if not viewer.owner_hash or not facts.owner_hash:
        return False
    return hmac.compare_digest(viewer.owner_hash, facts.owner_hash)


def may(viewer: Viewer, action: Action, facts: RunFacts | None = None) -> Decision:
    """The one rule. `facts` is None only for actions on no run (creating a study, publishing
    records: the records' own rule is `may_see_record` / `may_change_record` below)."""
    if action is Action.CREATE_STUDY:
        return YES if viewer.privileged else Decision(False, OPERATOR_ONLY)
    if action is Action.PUBLISH:
        return may_publish_records(record_scope(viewer))
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


@dataclass(frozen=True)
class Listing:
    """`may(viewer, LIST, ...)` as a question the store can answer in SQL, so History asks for
    this viewer's runs, paged, instead of filtering the newest few hundred of everybody's
    (a busy server pushed a visitor's own runs out of that window). `everything`: every run;
    else only runs of `owner_hash` ('' : none at all). `hide_open_items`: leave out items
    of open studies except those of `open_studies_seen`."""
    everything: bool = False
    owner_hash: str = ""
    hide_open_items: bool = True
    open_studies_seen: frozenset[str] = frozenset()

    @property
    def nothing(self) -> bool:
        return not self.everything and not self.owner_hash


def listing(viewer: Viewer) -> Listing:
    """What this viewer's History lists, by the same rule as `may` for Action.LIST: a rater's
    browser nothing, the privileged every run (open-study items too), anybody else the runs
    their browser started, minus items of open studies they do not organise."""
    if viewer.rater and not viewer.operator and not viewer.organiser_of:
        return Listing()
    if viewer.privileged:
        return Listing(everything=True, hide_open_items=False)
    return Listing(owner_hash=viewer.owner_hash, open_studies_seen=viewer.organiser_of)


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


# -- corpus records: papers and researchers ----------------------------------------------
# On a shared server any visitor may import or upload papers and researchers, and once a
# visitor's upload with a bundled paper's arXiv id rewrote that paper's abstract for
# everybody, and an upload naming a known researcher renamed them. So a record is either
# shared (added_by '': bundled, or added on a personal server or by the operator) or one
# visitor's (added_by: their browser's owner hash) until the operator publishes it. Every
# browser sees the shared records and its own: a visitor's record reaches nobody else's
# search, picker or run, not even the operator's (they list and publish it instead). A
# visitor changes only their own records; a privileged viewer adds to, and merges into,
# the shared corpus as before.

NO_OWNER = ("This browser has no owner token yet, so nothing it adds could be told apart from "
            "the shared records: reload the page and try again.")
KEPT_SHARED = ("On this shared server a visitor cannot change a record the store already holds: "
               "the stored version was kept as it is and used instead of yours.")


@dataclass(frozen=True)
class RecordScope:
    """Which papers and researchers a viewer reads, and as whom it adds them. The store's
    corpus takes one (`Corpus.seen_by`) and applies `may_see_record` in its SQL.
    `everything`: every record, unfiltered (the command line, which serves nobody else)."""
    everything: bool = True
    owner_hash: str = ""  # the browser whose own records it also sees
    privileged: bool = True  # adds to and merges into the shared corpus

    @property
    def adds_as(self) -> str:
        """The `added_by` of what this viewer adds ('' = shared)."""
        return "" if self.everything or self.privileged else self.owner_hash


EVERY_RECORD = RecordScope()


def record_scope(viewer: Viewer) -> RecordScope:
    """What a browser's pages (and the runs they start) read of the corpus, and as whom they
    add to it: the shared records and its own; the privileged add to the shared ones."""
    return RecordScope(everything=False, owner_hash=viewer.owner_hash, privileged=viewer.privileged)


def _same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a, b)


def may_see_record(scope: RecordScope, added_by: str) -> bool:
    """A shared record, or one this viewer's browser added."""
    return scope.everything or not added_by or _same(scope.owner_hash, added_by)


def may_add_records(scope: RecordScope) -> Decision:
    return YES if scope.everything or scope.privileged or scope.owner_hash else Decision(False, NO_OWNER)


def may_change_record(scope: RecordScope, added_by: str) -> Decision:
    """Change a stored record (title, abstract, name, affiliation, fields, authorship): a
    privileged viewer a shared record (an import merges into it as it always has), anybody
    a record their own browser added."""
    if scope.everything or _same(scope.owner_hash, added_by):
        return YES
    return YES if scope.privileged and not added_by else Decision(False, KEPT_SHARED)


def may_publish_records(scope: RecordScope) -> Decision:
    """List every visitor's records with who added them, and share them with everybody."""
    return YES if scope.everything or scope.privileged else Decision(False, PUBLISH_OPERATOR_ONLY)


def no_such_idea(idea_id: str) -> str:
    """The one refusal for an idea the viewer may not know about (as `no_such_run`)."""
    shown = "".join(c for c in (idea_id or "")[:80] if c.isalnum() or c in "-_:") or "?"
    return f"There is no idea {shown} in your bank: its run may have been deleted, or the id is mistyped."


def may_see_idea(viewer: Viewer, facts: RunFacts, idea_id: str) -> Decision:
    """An idea is in a viewer's bank exactly when its run is in their History: the run's LIST
    rule, so a visitor's bank holds the ideas of their own runs, the operator's every idea, and
    an item of an open study stays hidden. A star, a note and an export of the idea follow the
    same answer: they are the viewer's notebook, and change nothing of the run."""
    return YES if may(viewer, Action.LIST, facts) else Decision(False, no_such_idea(idea_id))


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
