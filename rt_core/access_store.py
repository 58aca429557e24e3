"""The facts `access.may` needs, read from the store (and the process's live jobs), so a page
asks one call and never assembles them itself."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .access import Action, Decision, RunFacts, Viewer, hidden_own, listable, listing, may, may_see_idea


def run_facts(store, run_id: str, linked: bool = False, live_owner: str | None = None) -> RunFacts:
    """A run's facts. `live_owner` is the owner hash of a job of this process (None: no job),
    which counts for a run whose row is not written yet."""
    run_id = (run_id or "").strip()
    stored = store.runs.owner_hash(run_id) if run_id else None
    exists = stored is not None or live_owner is not None
    owner = stored if stored else (live_owner or "")
    return RunFacts(run_id, exists=exists, owner_hash=owner, linked=linked,
                    open_studies=store.studies.open_studies_of(run_id) if exists else frozenset())


def decide(store, viewer: Viewer, action: Action, run_id: str, linked: bool = False,
           live_owner: str | None = None) -> Decision:
    return may(viewer, action, run_facts(store, run_id, linked, live_owner))


def permitted(store, viewer: Viewer, action: Action, run_ids: Iterable[str]) -> list[str]:
    """The stored runs among `run_ids` this viewer may do `action` to (two queries in all,
    not two per run: History asks this for every run it lists)."""
    ids = list(run_ids)
    owners, studies = store.runs.owner_hashes(ids), store.studies.open_item_runs()
    return [i for i in ids if may(viewer, action, RunFacts(i, owner_hash=owners.get(i, ""),
                                                           open_studies=studies.get(i, frozenset())))]


def history(store, viewer: Viewer, rows: Iterable[Mapping]) -> list[dict]:
    """The rows of `store.runs.list` this viewer may see listed."""
    rows = list(rows)
    ids = [r["id"] for r in rows]
    return listable(viewer, rows, store.runs.owner_hashes(ids), store.studies.open_item_runs())


def listed(store, viewer: Viewer, text: str = "", status: str = "", limit: int = 200,
           offset: int = 0) -> list[dict]:
    """The runs this viewer's History lists, newest first, one page of `limit` from `offset`:
    the store selects them by `access.listing` (owner and open studies in SQL), and each is
    then asked of `access.may` too, so the one rule has the last word."""
    rows = store.runs.visible(listing(viewer), text=text, status=status, limit=limit, offset=offset)
    return history(store, viewer, rows)


def idea_runs(store, viewer: Viewer, owners: Mapping[str, str]) -> set[str]:
    """The runs among `owners` (run id to owner hash) whose ideas are in this viewer's bank
    (access.may_see_idea). The rule is asked once per kind of run (its owner, the open
    studies it is in), not once per run: a bank of thousands of runs has a few owners."""
    studies = store.studies.open_item_runs()
    kinds: dict[tuple[str, frozenset], list[str]] = {}
    for rid, owner in owners.items():
        kinds.setdefault((owner, studies.get(rid, frozenset())), []).append(rid)
    out: set[str] = set()
    for (owner, open_studies), rids in kinds.items():
        if may_see_idea(viewer, RunFacts(rids[0], owner_hash=owner, open_studies=open_studies), rids[0]):
            out.update(rids)
    return out


def idea_decision(store, viewer: Viewer, idea_id: str, run_id: str) -> Decision:
    """Whether this one idea (of run `run_id`) is in the viewer's bank."""
    return may_see_idea(viewer, run_facts(store, run_id), idea_id)


def hidden_by_studies(store, viewer: Viewer) -> int:
    """How many of this viewer's own runs are items of an open study, and so hidden from them
    until it closes (two queries, whatever the number of runs)."""
    studies = store.studies.open_item_runs()
    return hidden_own(viewer, store.runs.owner_hashes(list(studies)), studies)
