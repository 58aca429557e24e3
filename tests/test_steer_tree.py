"""The version tree of steered ideas: parents, order, paths and diffs, and the nodes kept
in the store (migration m018) on both engines."""
from __future__ import annotations

import pytest

from rt_core.run.steer import table
from rt_core.run.steer.tree import COMMUNITY, EDIT, REVISION, ROOT, YOU, Tree, Version, roots
from rt_core.store import Store
from rt_core.types import Candidate, MetaReview, Proposal, Review, Run, RunConfig

BASE = Proposal(q1="How can A help B?", q2="It matters.", q3="It is hard.", q4="Nobody tried.",
                q5="We will test A on B.", drafts=[Proposal(q1="a draft")])


def node(vid: str, parent: str, author=YOU, kind=EDIT, score=None, **answers) -> Version:
    p = Proposal(**(BASE.answers() | answers))
    meta = MetaReview(score=score) if score is not None else None
    return Version(vid, "run1", parent, author, kind, list(answers), proposal=p, meta_review=meta)


def test_the_tree_orders_paths_and_diffs_its_versions():
    run = Run("run1", RunConfig(), status="done", proposal=BASE, reviews=[Review("r1", score=6)],
              meta_review=MetaReview(score=6.0),
              candidates=[Candidate("c1", Proposal(q1="Other")), Candidate("c2", merged_into="c1")])
    t = Tree([*roots(run),
              node("a", ROOT, q1="How can A help C?", score=7.0),
              node("b", "c1", q5="We will test A on C."),
              node("a.r1", "a", COMMUNITY, REVISION, q1="How can A help C?", q3="Harder.", score=7.5),
              node("lost", "gone", q2="Orphaned.")])
    assert [n.id for n in t.nodes.values()][:2] == [ROOT, "c1"]  # merged c2 is no version
    assert t.get(ROOT).proposal.drafts == []  # a version is its text
    assert [n.id for n in t.ordered()] == [ROOT, "a", "a.r1", "c1", "b", "lost"]
    assert [n.id for n in t.path("a.r1")] == [ROOT, "a", "a.r1"] and t.depth("a.r1") == 2
    assert [c.id for c in t.children(ROOT)] == ["a"]
    assert [d.question for d in t.diff("a")] == ["q1"]
    assert t.diff("a")[0].text == "How can A help [-B?-] {+C?+}"
    assert [d.question for d in t.diff("a.r1")] == ["q3"]  # against its parent, not the root
    assert t.diff(ROOT) == [] and t.get("a.r1").score == 7.5


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_versions_are_kept_once_and_come_back_whole(store: Store):
    store.runs.save(Run("run1", RunConfig(), status="done", created_at="2026-01-01", proposal=BASE,
                        reviews=[Review("r1", "good", "thin", 6)], meta_review=MetaReview(score=6.0)))
    first = node("a", ROOT, q1="How can A help C?", score=7.0)
    first.reviews, first.kept, first.created_at = [Review("r1", "better", "still thin", 7)], ["q1"], "2026-01-02"
    assert table.save(store, first)
    again = node("a", ROOT, q1="Something else")
    again.created_at = "2026-01-03"
    assert not table.save(store, again)  # the first of one id stays
    child = node("a.r1", "a", COMMUNITY, REVISION, q1="How can A help C?", q2="More.", score=7.5)
    child.created_at = "2026-01-04"
    table.save(store, child)
    got = table.versions_of(store, "run1")
    assert [n.id for n in got] == [ROOT, "a", "a.r1"]
    assert got[1] == first and got[1].reviews[0].score == 7 and got[2].parent == "a"
    assert got[0].answers() == BASE.answers()
    store.runs.delete("run1")
    assert table.stored(store, "run1") == []  # the versions go with their run
