"""The units two papers study (people, neighbourhoods, firms, countries, patients, microbial
communities, stars ...), and whether two papers share one: the second kind of question a
proposal can ask when no method of one side can run on the other's data.

Why: on most two-field neighbourhoods outside the case studies no method bridge exists
(kinds.py), and "a long shot: can a compiler help the study of knee pain?" is not worth
reading. Two fields that study the same units can still ask a question together: does what
one field studies (automation displacing workers) bear on what the other measures on the
same units (disorder and crime in neighbourhoods)? That question needs no method carried
across, only the two measures on the same units, so it is asked only when both papers say
they study such units. Each unit is found by a small stated list of words in a paper's
title and abstract, like kinds.py, and named in words a proposal can say.
"""
from __future__ import annotations

import functools
import re


def _words(text: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(text.split()) + r")\b", re.IGNORECASE)


# A unit as a proposal says it (plural: "the same ..."), and the words that show a paper
# studies it. Words that name a unit only in passing are left out: "community" alone may be
# a research community, "population" may be of stars or of people, "industry" and "clinical"
# are said of any applied work, and "people" of any paper that compares a model with people
# (on the labelled pairs, tests/test_units.py, each made false shared units).
UNITS: dict[str, tuple[str, re.Pattern[str]]] = {
    # Not bare "workers" or "jobs": distributed training has workers and jobs too.
    "workers": ("workers and jobs", _words(r"employment wages? labou?r\s+markets? occupations? "
                                           r"unemploy\w* (?:low|high)-skill\w*\s+workers")),
    "places": ("neighbourhoods and cities", _words(
        r"neighbou?rhoods? localities cities city commuting\s+zones urban counties "
        r"communities\s+of\s+residents residents")),
    "countries": ("countries", _words(r"countries nations economies national\s+income "
                                      r"GDP growth\s+rates?")),
    "firms": ("firms", _words(r"firms? companies employers")),
    "patients": ("patients", _words(r"patients? hospitals? care\s+management health\s+systems?")),
    "microbes": ("microbial communities", _words(r"microb\w* bacteria\w* soil\s+communities "
                                                 r"microbial\s+communities taxa")),
    # "species" alone is also physics' word ("relativistic species"): only with a biologist's context.
    "species": ("species and their populations", _words(r"species\s+(?:richness|diversity|trees?|"
                                                        r"delimitation|boundaries) lineages "
                                                        r"biogeograph\w* clades? taxa")),
    "stars": ("stars and galaxies", _words(r"stars? stellar galax\w* clusters\s+of\s+stars")),
    "materials": ("compounds and materials", _words(r"compounds? crystals? inorganic\s+materials "
                                                    r"materials\s+properties")),
    "llms": ("language models", _words(r"language\s+models? LLMs?")),
}


@functools.lru_cache(maxsize=512)
def units_of(text: str) -> frozenset[str]:
    """The units a text says it studies (cached per paper, as kinds_of)."""
    return frozenset(k for k, (_, pat) in UNITS.items() if pat.search(text or ""))


def name(unit: str) -> str:
    return UNITS[unit][0]


def shared(a_text: str, b_text: str) -> tuple[str, ...]:
    """The units both texts study, in UNITS order."""
    both = units_of(a_text) & units_of(b_text)
    return tuple(k for k in UNITS if k in both)


def said(us: tuple[str, ...]) -> str:
    """The shared units in words ("workers and jobs"; "firms, and countries")."""
    return " and ".join(name(u) for u in us[:1])
