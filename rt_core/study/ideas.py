"""A blind study of the ideas a researcher starred in the bank (rt_core/ideas), from any runs.

Each starred idea is one item in an arm of its own (named by the idea's id, which only the
organiser's results show), and all of them share one target, so in a pairwise study every
two ideas make a pair. Items carry their run's id as a study of runs does, so while the
study is open those runs are hidden from everybody but the operator and the organiser, and
a rater sees only the five answers in the neutral format: the study is exactly as blind as
one made from runs (rt_core.access).
"""
from __future__ import annotations

import dataclasses
import hashlib

from ..access import Action, Viewer, may
from ..errors import InputError
from ..ideas.bank import Bank, Idea
from .design import StudyItem, StudySettings, build_units

ARM_BY = "idea"  # recorded on the study: its arms are ideas, not run settings
TARGET = "starred ideas"
NONE_STARRED = ("there are no starred ideas to make a study of",
                "Star at least two ideas on the Ideas page (or with `python -m rt_core ideas star ID`).")


def idea_items(ideas: list[Idea]) -> list[StudyItem]:
    return [StudyItem("it-" + hashlib.sha1(f"idea\x1f{i.id}".encode()).hexdigest()[:10], f"idea {i.id}", TARGET,
                      "run", {k: i.answers.get(k, "") for k in ("q1", "q2", "q3", "q4", "q5")}, run_id=i.run_id)
            for i in ideas]


def create_from_starred(store, bank: Bank, viewer: Viewer, settings: StudySettings) -> dict:
    """Store a study of the viewer's starred ideas; returns it with its organiser token
    (shown once). Zero starred ideas, or one for a pairwise study, is one clear message."""
    allowed = may(viewer, Action.CREATE_STUDY)
    if not allowed:
        raise InputError(allowed.reason)
    ideas = bank.starred(viewer)
    if not ideas:
        raise InputError(*NONE_STARRED)
    if settings.mode == "pairwise" and len(ideas) < 2:
        raise InputError("a pairwise study needs at least two starred ideas",
                         "Star one more idea, or choose the absolute mode (each idea rated alone).")
    settings = dataclasses.replace(settings, arm_by=ARM_BY)
    items, units = build_units(idea_items(ideas), settings.mode, gold_check=settings.gold_check)
    return store.studies.create(settings, items, units)
