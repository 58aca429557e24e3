"""The facts `access.may` needs, read from the store (and the process's live jobs), so a page
asks one call and never assembles them itself."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .access import Action, Decision, RunFacts, Viewer, hidden_own, listable, may


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


def hidden_by_studies(store, viewer: Viewer) -> int:
    """How many of this viewer's own runs are items of an open study, and so hidden from them
    until it closes (two queries, whatever the number of runs)."""
    studies = store.studies.open_item_runs()
    return hidden_own(viewer, store.runs.owner_hashes(list(studies)), studies)
