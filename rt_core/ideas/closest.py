"""The closest earlier idea of a run's idea, named on Results' novelty section and in the run's
export beside the closest paper: novelty against one's own earlier ideas, not only the papers.

"Earlier" and "the same person" are the bank's seen-before rule (seen.py): an idea of an
earlier run, of the same owner when the bank is per owner (a shared server). On top, the
earlier idea must be in the *viewer's* bank (rt_core.access.may_see_idea through
access_store.idea_runs): a stranger who opens a visitor's run by its link, or anyone while the
earlier run is an item of an open study, is told there is none, the same words as when there
is truly none, so the answer reveals nothing. The closest is named whatever its similarity, as
the closest paper is; whether it counts as *seen before* is the bank's threshold.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..access import Viewer
from ..access_store import idea_runs
from ..store.ideas import idea_id
from ..types import Run
from . import seen
from .bank import Bank


@dataclass(frozen=True)
class Closest:
    """The closest earlier idea ('' when there is none the viewer may see)."""
    idea_id: str = ""
    run_id: str = ""
    q1: str = ""
    similarity: float | None = None
    threshold: float = seen.THRESHOLD

    @property
    def found(self) -> bool:
        return bool(self.idea_id)

    @property
    def repeats(self) -> bool:
        return self.similarity is not None and self.similarity >= self.threshold

    def sentence(self) -> str:
        """The words a page and an export say (plain text: the page escapes it)."""
        if not self.found:
            return "Closest earlier idea: none (no idea of an earlier run of the same person to compare with)."
        verdict = (f"seen before (from {self.threshold:.2f})" if self.repeats
                   else f"not a repeat (seen before from {self.threshold:.2f})")
        return (f"Closest earlier idea: {self.idea_id} of run {self.run_id}, similarity "
                f"{self.similarity:.2f}, {verdict}: {self.q1}")

    def to_dict(self) -> dict:
        return {"id": self.idea_id or None, "run_id": self.run_id or None, "q1": self.q1 or None,
                "similarity": self.similarity, "seen_before": self.repeats, "threshold": self.threshold}


def for_run(bank: Bank, viewer: Viewer, run: Run, version: str = "proposal") -> Closest | None:
    """The closest earlier idea to the run's `version` (its proposal by default) that this
    viewer may see; None when the run has no such idea in the bank (nothing to compare)."""
    return for_versions(bank, viewer, run, (version,)).get(version)


def for_versions(bank: Bank, viewer: Viewer, run: Run, versions) -> dict[str, Closest]:
    """The closest earlier idea of each of the run's `versions` (a brainstorm's candidates: one
    card each), read from the bank once for all of them. A version the bank does not hold is
    left out. Another candidate of the same run is never "earlier": the run's ideas were
    written together."""
    bank.refresh()  # embeds the run's ideas if the bank has not read them yet
    store = bank.store
    rows = {r["id"]: r for r in store.ideas.select()}
    ids, m = store.ideas.matrix(bank.model)
    row = {iid: n for n, iid in enumerate(ids)}
    mine = {v: idea_id(run.id, v) for v in versions}
    mine = {v: iid for v, iid in mine.items() if iid in rows and iid in row}
    if not mine:
        return {}
    owners = store.ideas.run_owners()
    owner = owners.get(run.id, "")
    visible = idea_runs(store, viewer, owners)
    out: dict[str, Closest] = {}
    for version, me in mine.items():
        at = (rows[me]["created_at"], run.id)
        keep = [n for n, iid in enumerate(ids)
                if iid in rows and rows[iid]["run_id"] != run.id and rows[iid]["run_id"] in visible
                and (rows[iid]["created_at"], rows[iid]["run_id"]) < at
                and (not bank.per_owner or owners.get(rows[iid]["run_id"], "") == owner)]
        if not keep:
            out[version] = Closest()
            continue
        sims = m[keep] @ m[row[me]]
        best = int(np.argmax(sims))
        got = store.ideas.get([ids[keep[best]]])[0]
        out[version] = Closest(got["id"], got["run_id"], got["q1"], round(float(sims[best]), 4))
    return out
