"""The map of the bank (rt_core/ideas/bankmap.py): the axes are fitted once and kept, so
ideas added later are placed without moving the ideas already on the map; a refit may move
them; a visitor's map holds their own ideas; the neighbourhood's papers join the map."""
from __future__ import annotations

import re
import zlib

import numpy as np

from rt_core.access import Viewer
from rt_core.ideas import bankmap
from rt_core.ideas.bank import Bank
from tests.test_ideas_bank import _brainstorm


def words(texts: list[str]) -> np.ndarray:
    """Bags of words in 32 buckets, unit length: a stand-in embedder that knows no model."""
    out = np.full((len(texts), 32), 1e-3, dtype=np.float32)
    for i, t in enumerate(texts):
        for w in re.findall(r"[a-z]+", t.lower()):
            out[i, zlib.crc32(w.encode()) % 32] += 1.0
    return out / np.linalg.norm(out, axis=1, keepdims=True)

VISITOR = Viewer(shared=True, owner_hash="h-me")


def _where(m: bankmap.BankMap) -> dict[str, tuple[float, float]]:
    return {p.id: (p.x, p.y) for p in m.points}


def test_new_ideas_do_not_move_the_old_ones(community):
    community.runs.create(_brainstorm("one", "2026-01-01T00:00:00+00:00"), owner_hash="h-me")
    bank = Bank(community, words, model="words")
    before = bankmap.build(bank, Viewer(), papers=False)
    assert len(before.ideas) == 3 and before.fitted_on == 3
    run = _brainstorm("two", "2026-02-01T00:00:00+00:00")
    for c in run.candidates:  # other words, so the axes a refit would find differ
        c.proposal.q1, c.proposal.q5 = "Do crime networks predict court sentencing?", "Mine court records."
    community.runs.create(run, owner_hash="h-other")
    after = bankmap.build(bank, Viewer(), papers=False)
    assert len(after.ideas) == 6 and after.fitted_on == 3
    assert {k: after_xy for k, after_xy in _where(after).items() if k in _where(before)} == _where(before)
    refitted = bankmap.build(bank, Viewer(), papers=False, refit=True)
    assert refitted.fitted_on == 6
    assert not np.allclose([refitted_xy for k, refitted_xy in sorted(_where(refitted).items()) if k.startswith("one")],
                           [xy for _, xy in sorted(_where(before).items())])
    # a visitor's map: their own run's ideas; coloured by run or by field pair
    mine = bankmap.build(bank, VISITOR, colour_by=bankmap.BY_RUN, papers=False)
    assert {p.run_id for p in mine.ideas} == {"one"} and {p.colour for p in mine.ideas} == {"one"}
    assert {p.colour for p in after.ideas} == {"astronomy", "nlp"}


def test_the_axes_keep_the_spread_and_fix_their_signs():
    rng = np.random.default_rng(3)
    m = rng.normal(size=(20, 2)) * [4.0, 1.0] @ np.linalg.qr(rng.normal(size=(8, 2)))[0].T
    mean, axes, explained = bankmap.fit(m)
    assert explained > 0.999 and np.allclose(np.linalg.norm(axes, axis=1), 1.0)
    _, flipped, _ = bankmap.fit(m[::-1])
    assert np.allclose(axes, flipped)
