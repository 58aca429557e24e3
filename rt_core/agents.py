"""An agent of a run in words a reader knows: a researcher by name, a brainstorm's candidate
by its label.

Progress events, errors and steers name agents by the ids the pipeline gives them: a
researcher's id ("r-jia-zhihao"), a candidate's ("c1", its writer or its meta-review), a
candidate's reviewer ("c1:r-jia-zhihao"), a profile read ("profile:r-jia-zhihao"), or a
step of the run itself ("merge", "run"). A presenter reads names, so every page that lists
agents turns the id into words here, once: the same agent reads the same everywhere.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_CANDIDATE = re.compile(r"c\d+")
PROFILE = "profile:"
STEPS = {"merge": "merging near-duplicates", "run": "the run", "": "the run"}


def split(agent: str) -> tuple[str, str]:
    """(candidate id or '', researcher id or '') of an agent name."""
    agent = agent.removeprefix(PROFILE)
    head, sep, tail = agent.partition(":")
    if sep and _CANDIDATE.fullmatch(head):
        return head, tail
    if _CANDIDATE.fullmatch(agent):
        return agent, ""
    return "", "" if agent in STEPS else agent


def people(agents: Iterable[str]) -> set[str]:
    """The researcher ids the agent names hold (what to look up names for)."""
    return {rid for a in agents if (rid := split(a)[1])}


def label(agent: str, names: Mapping[str, str]) -> str:
    """'Zhihao Jia', 'Zhihao Jia on c1', 'c1', 'merging near-duplicates'. A researcher the
    store does not know keeps their id (there is no other name to give)."""
    cand, rid = split(agent)
    if not cand and not rid:
        return STEPS.get(agent, agent)
    who = " ".join((names.get(rid) or rid).split()) if rid else ""
    if cand and who:
        return f"{who} on {cand}"
    return who or cand


def names_for(corpus, agents: Iterable[str]) -> dict[str, str]:
    """Researcher id -> name for every researcher the agent names hold (one store read)."""
    return corpus.researcher_names(sorted(people(agents)))
