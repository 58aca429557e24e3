"""The versions of one run's ideas as a tree: who changed what, from which version.

A run's own proposal and each of its candidates are roots; they are never stored as
versions (the run already holds them), only read from the run, so the tree of an
unsteered run is its roots alone. Every steer adds the user's node under the version
it started from, and the community's revision rounds add nodes under that one. A node
keeps its whole proposal, its reviews and its meta-review, so any version can be shown,
exported or steered again without replaying its ancestors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...fiveq import QUESTION_KEYS
from ...record import Record
from ...types import MetaReview, Proposal, Review, Run
from ..revision.diff import QuestionDiff, changed_questions, proposal_diff

YOU = "you"
COMMUNITY = "community"
ROOT = "v0"  # the run's own proposal
ORIGINAL, EDIT, COMMENT, REVISION = "original", "edit", "comment", "revision"


@dataclass
class Version(Record):
    id: str
    run_id: str
    parent: str = ""  # "" for a root
    author: str = COMMUNITY  # YOU or COMMUNITY
    kind: str = ORIGINAL  # ORIGINAL, EDIT, COMMENT or REVISION
    changed: list[str] = field(default_factory=list)  # question keys that differ from the parent
    note: str = ""  # the user's comment, or what a community node answered
    kept: list[str] = field(default_factory=list)  # the user's answers kept as written
    proposal: Proposal = field(default_factory=Proposal)
    reviews: list[Review] = field(default_factory=list)
    meta_review: MetaReview | None = None
    created_at: str = ""

    @property
    def score(self) -> float | None:
        return self.meta_review.score if self.meta_review else None

    def answers(self) -> dict[str, str]:
        return self.proposal.answers()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Version:
        d = dict(data)
        d["proposal"] = Proposal.from_dict(d.get("proposal") or {})
        d["reviews"] = [Review.from_dict(r) for r in d.get("reviews") or []]
        d["meta_review"] = MetaReview.from_dict(d["meta_review"]) if d.get("meta_review") else None
        return super().from_dict(d)  # type: ignore[return-value]


def roots(run: Run) -> list[Version]:
    """The run's proposal (id v0) and each candidate not merged into another (by its id),
    with their reviews: the versions a user may steer before any steer."""
    out = []
    if run.proposal is not None:
        out.append(Version(ROOT, run.id, proposal=_bare(run.proposal), reviews=list(run.reviews),
                           meta_review=run.meta_review, created_at=run.created_at))
    for c in run.candidates:
        if not c.merged_into and c.id != ROOT:
            out.append(Version(c.id, run.id, proposal=_bare(c.proposal), reviews=list(c.reviews),
                               meta_review=c.meta_review, created_at=run.created_at))
    return out


def _bare(p: Proposal) -> Proposal:
    """The five answers without the drafts they came from (a version is its text)."""
    return Proposal(**p.answers(), missing=list(p.missing), author_id=p.author_id)


class Tree:
    """The nodes of one run, by id, in the order they were made (roots first)."""

    def __init__(self, nodes: list[Version]):
        self.nodes: dict[str, Version] = {}
        for n in nodes:
            self.nodes.setdefault(n.id, n)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, vid: str) -> bool:
        return vid in self.nodes

    def get(self, vid: str) -> Version | None:
        return self.nodes.get(vid)

    def children(self, vid: str) -> list[Version]:
        return [n for n in self.nodes.values() if n.parent == vid]

    def path(self, vid: str) -> list[Version]:
        """From the root down to `vid` (a parent that is missing ends the walk)."""
        out: list[Version] = []
        seen: set[str] = set()
        node = self.nodes.get(vid)
        while node is not None and node.id not in seen:
            seen.add(node.id)
            out.append(node)
            node = self.nodes.get(node.parent)
        return out[::-1]

    def depth(self, vid: str) -> int:
        return max(0, len(self.path(vid)) - 1)

    def ordered(self) -> list[Version]:
        """Depth-first, each node before its children, siblings oldest first; a node whose
        parent is unknown counts as a root, so nothing stored is ever hidden."""
        out: list[Version] = []

        def walk(n: Version) -> None:
            out.append(n)
            for c in self.children(n.id):
                if c.id not in {o.id for o in out}:
                    walk(c)

        for n in self.nodes.values():
            if not n.parent or n.parent not in self.nodes:
                walk(n)
        return out

    def diff(self, vid: str) -> list[QuestionDiff]:
        """What `vid` changed from its parent, answer by answer (none for a root)."""
        node = self.nodes.get(vid)
        parent = self.nodes.get(node.parent) if node else None
        if node is None or parent is None:
            return []
        return proposal_diff(parent.proposal, node.proposal)


def changed_from(parent: Version, proposal: Proposal) -> list[str]:
    return changed_questions(parent.proposal, proposal)


def with_answer(p: Proposal, key: str, text: str) -> Proposal:
    """`p` with one answer replaced, as written (no longer missing)."""
    answers = p.answers() | {key: text}
    return Proposal(**answers, missing=[m for m in p.missing if m != key and m in QUESTION_KEYS])
