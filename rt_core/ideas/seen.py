"""Seen before: an idea whose meaning repeats one the same person already had in an earlier
run says so, and names that earlier idea.

Each idea is embedded once (its problem, Q1, and its method, Q5: what makes two ideas the
same idea, as the candidates' merge and the map read them) with the bundled MiniLM. An idea
is *seen before* when an idea of an **earlier run of the same person** lies at cosine
`THRESHOLD` or more: on a shared server the runs of the same browser (the runs without one,
started from the command line, are the operator's), on a personal server every run, since
one person uses it (`per_owner`, decided by the deployment where the bank is read); it names the closest such
idea, and joins that idea's group, so the bank can show one idea per group. Ideas of the
same run are never compared: a run's candidates are already merged (run/candidates) and
its revision rounds are meant to be close to what they revise.

`THRESHOLD` = 0.70 was chosen on the planted set in tests/fixtures/idea_pairs.json (12
paraphrased pairs, one idea said twice in other words, and 12 pairs of distinct ideas, most
on the same topic): with MiniLM the paraphrases scored 0.83 to 0.94 and the distinct pairs
0.13 to 0.57, and 0.70 sits in the middle of that gap (tests/test_ideas_seen.py fails if a
pair falls on the wrong side). The brainstorm's merge uses 0.80 within one run; across runs,
where a person rephrases an idea days apart, the wider margin on the paraphrase side costs
nothing on this set.

The vectors and `seen_before` are computed when the bank is read (`index`), not while a
run goes: a run then never waits for the embedder, and the answer does not depend on when
it is computed, since only ideas of earlier runs count.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..config import LOCAL_EMBEDDER
from ..store import Store

THRESHOLD = 0.70
TEXT_LIMIT = 700  # characters embedded: the embedder's window is short


def idea_text(answers: dict) -> str:
    """What an idea means here: its problem and its method."""
    text = " ".join(t.strip() for t in (answers.get("q1", ""), answers.get("q5", "")) if t and t.strip())
    return text[:TEXT_LIMIT]


def index(store: Store, embed: Callable[[list[str]], np.ndarray], model: str = LOCAL_EMBEDDER,
          threshold: float = THRESHOLD, batch: int = 1024, per_owner: bool = True) -> int:
    """Embed the ideas that have no vector yet, oldest first, and record for each whether
    an idea of an earlier run of the same owner repeats it. Returns how many were embedded."""
    done = 0
    while not store.ideas.all_embedded(model):
        pending = store.ideas.pending(model, limit=batch)
        if not pending:
            break
        vectors = np.asarray(embed([idea_text(p["answers"]) or p["id"] for p in pending]), dtype=np.float32)
        store.ideas.put_vectors(model, {p["id"]: v for p, v in zip(pending, vectors, strict=True)})
        _mark(store, model, pending, threshold, per_owner)
        done += len(pending)
    return done


def _mark(store: Store, model: str, pending: list[dict], threshold: float, per_owner: bool) -> None:
    ids, m = store.ideas.matrix(model)
    if not ids:
        return
    facts = {r["id"]: r for r in store.ideas.select()}  # run, creation and group of every idea
    owners = store.ideas.run_owners()
    run_of = np.array([facts.get(i, {}).get("run_id", "") for i in ids])
    owner_of = np.array([owners.get(r, "") if per_owner else "" for r in run_of])
    # first written first: runs made in one second share created_at, so seq decides before it
    order = sorted(range(len(ids)), key=lambda k: (facts.get(ids[k], {}).get("seq", 0),
                                                    facts.get(ids[k], {}).get("created_at", ""), run_of[k]))
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    row = {iid: n for n, iid in enumerate(ids)}
    mine = [row[p["id"]] for p in pending if p["id"] in row]
    sims = m[mine] @ m.T  # each pending idea against every idea, in one product
    with store.transaction():
        _record(store, ids, facts, mine, sims, rank, run_of, owner_of, threshold)


def _record(store: Store, ids: list[str], facts: dict, mine: list[int], sims: np.ndarray, rank: np.ndarray,
            run_of: np.ndarray, owner_of: np.ndarray, threshold: float) -> None:
    groups: dict[str, str] = {}
    for k, n in enumerate(mine):  # oldest first: an earlier idea's group is known when a later one asks
        # an earlier run's idea (a run's ideas share its time, so "earlier" is by run), same owner
        earlier = (rank < rank[n]) & (run_of != run_of[n]) & (owner_of == owner_of[n])
        s = np.where(earlier, sims[k], -1.0)
        best = int(np.argmax(s))
        iid = ids[n]
        if s[best] >= threshold:
            first = ids[best]
            group = groups.get(first) or facts.get(first, {}).get("group_id") or first
            store.ideas.set_seen(iid, first, round(float(s[best]), 4), group)
            groups[iid] = group
        else:
            store.ideas.set_seen(iid, None, None, iid)
            groups[iid] = iid
