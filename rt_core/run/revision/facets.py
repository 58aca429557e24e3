"""A revision round on the facets path: the rubric's failed checks answered from the
neighbourhood's facets, by template, keeping the grounds.

Why not the stems: a proposal written from facets (run/facets/write.py) is reviewed by a
rubric that can be computed (run/facets/rubric.py), so what is wrong with it is known
exactly, and what could fix it is in the papers: another paper's stated gap, another
evaluation's data and measure on the purpose's side, the next pairing. Rewriting it by
stems threw the grounds away, and the round's reviews fell back to free generation.

Each failed check picks its replacement (`improve`), the proposal is written again from
the changed pairing (so every answer still keeps the sentences it came from), and each
answer that changed says which check it answers and what was taken (`Change`, source
"check"). When no replacement is at hand, nothing changes and the round says so
(rounds.py: CHANGED_NOTHING). No model call.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from ... import fiveq
from ...types import Change, Ground, MetaReview, Proposal, Review
from ..facets import rubric
from ..facets.extract import Facet
from ..facets.kept import facets_of
from ..facets.pair import Pairing, Pairings, usable
from ..facets.write import measure_of, write
from ..styles.context import StageContext
from ..styles.stem_material import grounding_of

# The order the checks are answered in: a new pairing first (it changes everything), then
# what is replaced within the pairing.
ORDER = ("kind", "prior", "fields", "data", "measure", "gap", "hard")


def _key(f: Facet | Ground) -> tuple[str, str, str]:
    return (f.paper_id, f.kind if isinstance(f, Facet) else f.facet, f.sentence)


def pool(plans: Pairings, found: Iterable[Facet] = ()) -> list[Facet]:
    """Every facet the neighbourhood's pairings hold, in ranking order, then the rest the
    neighbourhood's papers state (`found`: a gap of a paper no pairing quotes), once each."""
    out: dict[tuple[str, str, str], Facet] = {}
    for p in plans.ranked:
        for f in (p.mechanism, p.purpose, p.method_purpose, p.method_eval, p.target_eval,
                  p.target_method, *p.gaps):
            if f is not None:
                out.setdefault(_key(f), f)
    for f in found:
        out.setdefault(_key(f), f)
    return list(out.values())


def pairing_of(proposal: Proposal, facets: Iterable[Facet]) -> Pairing | None:
    """The pairing a proposal was written from, read back from its grounds (None when its
    method or problem is not among the neighbourhood's facets)."""
    at = {_key(f): f for f in facets}

    def one(key: str, kind: str, where: Callable[[Facet], bool] = lambda f: True) -> Facet | None:
        found = [at.get(_key(g)) for g in proposal.grounds.get(key) or [] if g.facet == kind]
        return next((f for f in found if f is not None and where(f)), None)

    mech, purp = one("q1", "mechanism"), one("q1", "purpose")
    if mech is None or purp is None:
        return None
    # Q4 also keeps the problem paper's sentences it says what that paper does from: only gaps are gaps.
    gaps = tuple(f for f in (at.get(_key(g)) for g in proposal.grounds.get("q4") or [] if g.facet == "gap")
                 if f is not None)
    return Pairing(mech, purp, one("q3", "purpose", lambda f: f.field == mech.field),
                   one("q3", "evaluation", lambda f: f.field == mech.field),
                   one("q5", "evaluation", lambda f: f.field == purp.field),
                   one("q5", "mechanism", lambda f: f.field == purp.field and f is not mech), gaps)


def _fresh(now: Pairing, plans: Pairings, fields: list[str], used: set[str]) -> Pairing | None:
    """The next pairing of the ranking that is not this one (its method or problem from
    another paper): a plausible one first, one that takes in a field this proposal leaves
    out first among those."""
    others = [p for p in plans.ranked if (p.mechanism.paper_id, p.purpose.paper_id)
              != (now.mechanism.paper_id, now.purpose.paper_id)]
    others.sort(key=lambda p: not p.plausible)  # a plausible pairing before any other
    missing = [f for f in fields if f not in used]
    return next((p for p in others if set(p.fields) & set(missing)), None) or \
        next(iter(others), None)


def improve(proposal: Proposal, failed: dict[str, int], plans: Pairings, fields: list[str],
            found: Iterable[Facet] = ()) -> tuple[Pairing | None, dict[str, str]]:
    """The pairing that answers the failed checks (`failed`: check -> reviewers who found
    it failed) and, per check answered, what was taken in words; (None, {}) when nothing
    in the neighbourhood answers any of them."""
    facets = [f for f in pool(plans, found) if not fields or f.field in fields]
    now = pairing_of(proposal, facets)
    if now is None:
        return None, {}
    now = plans.with_fit(now)  # what Q1 said of the bridge, kept
    done: dict[str, str] = {}
    used = {g.field for gs in proposal.grounds.values() for g in gs}
    if "prior" in failed or "fields" in failed or "kind" in failed:
        nxt = _fresh(now, plans, fields, used)
        # Never trade a plausible pairing (or answer a failed "kind") for an implausible one.
        if nxt is not None and (nxt.plausible or not (now.plausible or "kind" in failed)):
            now = nxt
            for key in ("prior", "fields", "kind"):
                if key in failed:
                    done[key] = (f"the next pairing: {nxt.mechanism.phrase} ({nxt.mechanism.field}) "
                                 f"for {nxt.purpose.phrase} ({nxt.purpose.field})")
    side = now.purpose.field
    evals = [f for f in facets if f.kind == "evaluation" and f.field == side and usable(f)]
    if ("data" in failed or "measure" in failed) and not (
            usable(now.target_eval) and ("measure" not in failed or measure_of(now.target_eval))):
        wanted = [f for f in evals if measure_of(f)] if "measure" in failed else evals
        pick = next(iter(wanted or evals), None)
        if pick is not None and pick != now.target_eval:
            now = dataclasses.replace(now, target_eval=pick)
            for key in ("data", "measure"):
                if key in failed and (key == "data" or measure_of(pick)):
                    done[key] = f"another evaluation of {side}: “{pick.sentence}”"
    if "gap" in failed and not now.gaps:
        gaps = [f for f in facets if f.kind == "gap"]
        ranked = sorted(gaps, key=lambda f: (f.field != side, f.field != now.mechanism.field))
        if ranked:
            now = dataclasses.replace(now, gaps=(ranked[0],))
            done["gap"] = f"the gap another paper states: “{ranked[0].sentence}”"
    if "hard" in failed and now.method_eval is None:
        own = [f for f in facets if f.kind == "evaluation" and f.field == now.mechanism.field and usable(f)]
        if own:
            now = dataclasses.replace(now, method_eval=own[0])
            done["hard"] = f"what the method was tested on: “{own[0].sentence}”"
    return (now, done) if done else (None, {})


def failed_checks(reviews: list[Review]) -> dict[str, int]:
    """Check -> how many reviewers found it failed, in `ORDER`."""
    counts = {k: sum(1 for r in reviews if r.rubric.get(k) is False) for k in ORDER}
    return {k: n for k, n in counts.items() if n}


# Which answers a check's replacement rewrites (a new pairing rewrites them all).
ANSWERS = {"kind": fiveq.QUESTION_KEYS, "prior": fiveq.QUESTION_KEYS, "fields": fiveq.QUESTION_KEYS,
           "data": ("q3", "q5"), "measure": ("q5",), "gap": ("q4",), "hard": ("q3",)}


def revised(proposal: Proposal, reviews: list[Review], plans: Pairings, fields: list[str],
            name: Callable[[str], str], titles: dict[str, str],
            found: Iterable[Facet] = ()) -> tuple[Proposal, list[Change]]:
    """The proposal with the failed checks answered, and what changed and why; the same
    proposal and no change when nothing could be improved."""
    failed = failed_checks(reviews)
    n = len(reviews)
    better, done = improve(proposal, failed, plans, fields, found)
    if better is None:
        return proposal, []
    w = write(better, name, titles)
    grounds = {k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs] for k, fs in w.grounds}
    new = Proposal(**dict(w.answers), grounds=grounds, author_id=proposal.author_id)
    changes = []
    for q in fiveq.QUESTION_KEYS:
        if getattr(new, q) == getattr(proposal, q):
            continue
        why = [k for k in done if q in ANSWERS[k]]
        said = "; ".join(f"{rubric.SUMMARY[(k, False)]} ({failed[k]} of {n} reviewers): now "
                         f"{done[k]}" for k in why) or "Rewritten with the pairing the other answers took."
        changes.append(Change(q, said, "check"))
    return (new, changes) if changes else (proposal, [])


async def revise(ctx: StageContext, proposal: Proposal, reviews: list[Review],
                 meta: MetaReview | None, prior_titles: list[str]) -> tuple[Proposal, list[Change]]:
    """revision/stem.py's signature: the facets path's round (no model call)."""
    g = grounding_of(ctx, [])
    plans = g.pairings
    papers = list({p.id: p for p in [*g.papers, *g.facet_pool]}.values())
    found = [f for pf in facets_of(papers, g.store, g.embedder).values() for f in pf.facets]
    titles = {p.id: p.title for p in papers}
    return revised(proposal, reviews, plans, list(g.fields), g.name, titles, found)
