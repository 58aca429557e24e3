"""Making a study from stored runs in one call, and adding runs to one that is open (the
create and results pages and the tests use these)."""
from __future__ import annotations

from ..errors import InputError
from .candidates import ARM_BY as CANDIDATE_ARMS
from .design import REAL_ARM, StudySettings, build_items, build_units
from .ideas import ARM_BY as IDEA_ARMS

# Studies are made in the app only, so the hint names its page.
CANDIDATES_HINT = "To compare runs, create a study of runs on the Create a study page and add runs to that one."


def create_from_runs(store, run_ids: list[str], settings: StudySettings, real_arm: bool = True,
                     targets=None) -> dict:
    """Load the runs, group them into arms, add the hidden real-paper arm, build the units
    (pairs or single items) and store the study. Returns the stored study, with the organiser
    token (shown once)."""
    if not run_ids:
        raise InputError("pick at least one run", "Runs come from the History page; start one on Run.")
    runs = [store.runs.load(rid) for rid in dict.fromkeys(run_ids)]
    items = build_items(runs, settings.arm_by, real_arm=real_arm, targets=targets)
    items, units = build_units(items, settings.mode, gold_check=settings.gold_check)
    return store.studies.create(settings, items, units)


def add_runs(store, study_id: str, run_ids: list[str], targets=None) -> int:
    """Add runs to a study while it is open: their proposals become items in the study's arms,
    paired with the items already there; the real paper joins if the study has that arm.
    Returns how many units are new. Refused for a restyled study, whose new items would stand
    out in their original voice."""
    settings = store.studies.get(study_id)["settings"]
    if settings.arm_by == IDEA_ARMS:
        raise InputError("a study of starred ideas takes its items from the bank, not from runs",
                         "Star the ideas on the Ideas page and make a new study of them there.")
    if settings.arm_by == CANDIDATE_ARMS:
        raise InputError("a study of one run's candidates takes its items from that run's candidates, "
                         "not from other runs", CANDIDATES_HINT)
    items = store.studies.items(study_id)
    if any(i.styled for i in items.values()):
        raise InputError("this study's proposals were restyled, so new ones would stand out",
                         "Create a new study with all the runs instead.")
    runs = [store.runs.load(rid) for rid in dict.fromkeys(run_ids)]
    real = any(i.arm == REAL_ARM for i in items.values())
    new = [i for i in build_items(runs, settings.arm_by, real_arm=real, targets=targets) if i.item_id not in items]
    # Ordered as build_items orders them, so the units already stored get the same ids again.
    pool = sorted([i for i in items.values() if i.source != "gold"] + new, key=lambda i: (i.target, i.arm, i.item_id))
    _, units = build_units(pool, settings.mode)
    added = store.studies.add(study_id, new, units)
    if not added:
        raise InputError("these runs add nothing new to rate",
                         "Pick runs whose proposals are not in the study yet, on a target it shares.")
    return added
