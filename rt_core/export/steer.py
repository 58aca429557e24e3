"""A version as a run export: the same JSON shape as a run's (rt_core/export/run.py), so
whatever reads a run's JSON reads a version's, plus a `version` object saying where it
sits in the tree. What was measured on the run's own proposal (similarity, judge,
credit, provenance, novelty, rounds, candidates) is left out: it does not hold for a
version with other answers."""
from __future__ import annotations

import dataclasses
import json

from ..run.steer.tree import Tree, Version
from ..types import Run, Usage
from .run import Names, run_json


def as_run(run: Run, node: Version, usage: Usage | None = None) -> Run:
    """The run with the version's answers, reviews and meta-review in place of its own."""
    return dataclasses.replace(
        run, proposal=node.proposal, reviews=list(node.reviews), meta_review=node.meta_review,
        similarity=None, judge=None, review_similarity=None, candidates=[], tournament=None,
        novelty=None, rounds=[], provenance=None, credit=[], errors=[],
        usage=usage if usage is not None else Usage())


def version_info(t: Tree, node: Version) -> dict:
    """Where the version sits: its parent, who changed what, its score, and the path from
    its root."""
    return {"id": node.id, "parent": node.parent, "author": node.author, "kind": node.kind,
            "changed": list(node.changed), "note": node.note, "kept_as_written": list(node.kept),
            "mean_score": node.score, "created_at": node.created_at,
            "path": [n.id for n in t.path(node.id)]}


def version_json(store, run: Run, t: Tree, node: Version, usage: Usage | None = None) -> str:
    shown = as_run(run, node, usage)
    doc = json.loads(run_json(shown, Names.for_runs(store, [shown])))
    doc["version"] = version_info(t, node)
    return json.dumps(doc, indent=2, ensure_ascii=False)
