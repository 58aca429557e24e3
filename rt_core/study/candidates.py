"""A pairwise human study of one run's candidates, so people can check its tournament.

Each candidate that stands on its own (near-duplicates merged into another are left out)
is one item in an arm of its own, named by its id and its place in the tournament, so the
study's Bradley-Terry ranking of arms sits beside the tournament's. All candidates share
the run's target, so every pair is a unit: the raters see what the judge (or the signals)
compared, blind and in the neutral format, with no model, rank or id in sight.
"""
from __future__ import annotations

import hashlib

from ..errors import InputError
from ..fiveq import QUESTION_KEYS
from ..run.candidates.order import ranked
from ..types import Run
from .design import StudyItem, StudySettings, build_units, target_of

ARM_BY = "candidate"  # recorded on the study: its arms are candidates, not run settings


def arm_name(cid: str, rank: int | None) -> str:
    return f"{cid} (tournament #{rank})" if rank else f"{cid} (unranked)"


def candidate_items(run: Run) -> list[StudyItem]:
    """One blinded item per candidate with an answer to rate."""
    target = target_of(run)
    items = []
    for r in ranked(run):
        c = r.candidate
        if not any(getattr(c.proposal, k).strip() for k in QUESTION_KEYS):
            continue
        item_id = "it-" + hashlib.sha1(f"{run.id}\x1f{c.id}".encode()).hexdigest()[:10]
        items.append(StudyItem(item_id, arm_name(c.id, r.rank), target, "run", c.proposal.answers(),
                               run_id=run.id))
    return items


def default_settings(run: Run) -> StudySettings:
    """Pairwise on the session rubric, as the tournament compared them two at a time."""
    return StudySettings(name=f"Candidates of run {run.id}", mode="pairwise", arm_by=ARM_BY)


def create_from_candidates(store, run: Run, settings: StudySettings | None = None) -> dict:
    """Store the study; returns it with its organiser token (shown once)."""
    settings = settings or default_settings(run)
    items = candidate_items(run)
    if len(items) < 2:
        raise InputError("a study of candidates needs at least two with a proposal",
                         "Run again with more candidates, or rate this proposal in a study of runs.")
    items, units = build_units(items, settings.mode, gold_check=settings.gold_check)
    return store.studies.create(settings, items, units)
