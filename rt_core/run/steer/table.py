"""The stored versions of runs (table run_versions, migration m018), and `versions_of`,
the whole tree of one run as other views (the idea map) read it.

A version's id is derived from what made it (the run, its parent, the user's change and
the settings that answered it), so the same steer asked again names the same node: it
is written once and a repeat finds it, instead of growing a second copy of one idea.
"""
from __future__ import annotations

import json

from ...errors import NotFoundError
from ...store import Store, ideas
from ...types import Run
from .tree import Tree, Version, roots


def save(store: Store, node: Version) -> bool:
    """Write one node, and the node as an idea in the bank (store/ideas.py) in the same
    transaction; False when a node with its id was already there (kept as it was)."""
    with store.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO run_versions(run_id, id, parent_id, author, kind, mean_score, version_json, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (node.run_id, node.id, node.parent, node.author, node.kind, node.score,
             json.dumps(node.to_dict()), node.created_at))
        if cur.rowcount:
            ideas.write_version(conn, node.run_id, node.id, node.parent, node.answers(), node.score,
                                node.created_at)
    return cur.rowcount != 0


def stored(store: Store, run_id: str) -> list[Version]:
    """The run's steered nodes, oldest first."""
    rows = store.db.conn.execute(
        "SELECT version_json FROM run_versions WHERE run_id=? ORDER BY created_at, id",
        (run_id,)).fetchall()
    return [Version.from_dict(json.loads(r["version_json"])) for r in rows]


def tree(store: Store, run_id: str) -> Tree:
    """The run's roots (its proposal, its candidates) and every steered node."""
    return tree_of(store, store.runs.load(run_id))


def tree_of(store: Store, run: Run) -> Tree:
    """The tree of a run already at hand (a page that has read it)."""
    return Tree([*roots(run), *stored(store, run.id)])


def versions_of(store: Store, run_id: str) -> list[Version]:
    """Every version of the run, parents before children: each node's id, parent, author
    ('you' or 'community'), kind, the questions it changed, its five answers
    (`node.answers()`) and its mean score (`node.score`). Raises NotFoundError for an
    unknown run."""
    return tree(store, run_id).ordered()


def version(store: Store, run_id: str, vid: str) -> Version:
    """One version, or one clear message naming the versions there are."""
    t = tree(store, run_id)
    node = t.get(vid)
    if node is None:
        ids = ", ".join(list(t.nodes)[:12]) or "none"
        raise NotFoundError(f"run {run_id} has no version {vid!r}",
                            f"Its versions are: {ids}.")
    return node
