"""Pairings: a mechanism of one chosen field for a purpose of another, ranked by how
plausible the pairing is.

A 270M base model cannot say which combination of two fields makes sense, so the plan of
a proposal is chosen here, from what the papers state, with measured signals only:

- `fit`: how close the mechanism's sentence is to the purpose's sentence (the run's
  embedder, MiniLM by default): a method described in words near the problem's;
- `data`: how much the data the two sides evaluate on share words (a method tested on
  images meets a problem measured on images more easily than one measured on surveys);
- `ready`: whether the purpose's side states data and a measure (Q5 needs them) and a gap
  (Q4 quotes it), so the proposal can be written from what the papers say;
- `method`: whether the mechanism's phrase names a method (a name from the title or a noun
  phrase), not data and not a sentence's opening that no shorter phrase could be cut from;
- `kind`: whether the method can run on what the purpose's side works on (kinds.py: the
  kinds of data each paper states, or a general tool). Plausible pairings rank before all
  implausible ones: on 126 pairings labelled by hand the score without it ranked them with
  AUC 0.79, and the kind alone separates them with AUC 0.96 (0.66 -> 0.85 on 40 held out;
  tests/test_pairing.py). An implausible pairing is used only when no plausible one is
  left, and its proposal and reviews say so.

When no method bridge exists, two fields whose papers study the same units (units.py:
neighbourhoods, workers, countries, patients ...) are paired the other way (`_unit_plans`):
one paper's purpose as the exposure, another's as the outcome, measured on the outcome side's
data. Ranked: method bridges, then shared-unit questions, then the long shots
(`Pairing.bridge`).

Each candidate of a brainstorm takes a different pairing (`distinct`): no two share both
papers, and the direction (which field lends the method) alternates where it can.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...text import words, wordset
from . import kinds, units
from .extract import Facet, PaperFacets
from .side_data import bridged_eval, further_data, usable

FIT_WEIGHT = 1.0
DATA_WEIGHT = 0.5
READY_WEIGHT = 0.15
METHOD_WEIGHT = 0.3
KIND_WEIGHT = 0.5
# A pairing of the neighbourhood's larger fields before one that takes a field only one
# paper brings (a case study of systems and biology pairs those two first).
REACH_WEIGHT = 0.3
# What a mechanism is called when it names data rather than a method ("Danish register data").
DATA_HEADS = wordset("""data dataset datasets survey surveys records observations catalogue
sample samples release photometry astrometry""")
OPENERS = wordset("""against versus unlike beyond despite toward towards via per of in on at by
from with for to into over under between across through and or but than""")
# What names a survey, an instrument, a data set or a benchmark, and the cues that a
# sentence presents a method ("we propose X", "using X", "X, a model for ...").
INSTRUMENT = re.compile(r"\b(?:survey|surveys|observatory|telescope|telescopes|camera|instrument|"
                        r"mission|dataset|datasets|data set|benchmark|benchmarks|catalogue|catalog|"
                        r"corpus|environment|testbed|leaderboard|samples|evaluation)\b", re.IGNORECASE)
# "we introduce HaluEval, a large-scale benchmark": presented, but as data to test on.
DATA_CUE = re.compile(r"\b(?:a|an)\s+(?:[\w-]+\s+){0,3}(?:benchmark|dataset|data set|survey|catalogue|"
                      r"catalog|corpus|testbed|leaderboard)s?\b", re.IGNORECASE)
METHOD_CUE = re.compile(r"\b(?:we|the authors|this paper|this work)\s+(?:propose|introduce|present|"
                        r"develop|train|fit|design)\w*|\busing\b|\b(?:a|an|new)\s+(?:\w+\s+){0,3}"
                        r"(?:method|model|framework|algorithm|estimator|network|architecture)\s+"
                        r"(?:for|that|which|to)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Pairing:
    """The plan of one proposal: a mechanism (field A) for a purpose (field B), with the
    facets the other answers are written from."""
    mechanism: Facet
    purpose: Facet
    method_purpose: Facet | None = None  # what the mechanism was made for, on its own side
    method_eval: Facet | None = None  # what the mechanism was tested on, on its own side
    target_eval: Facet | None = None  # the data and measure of the purpose's side (for Q5)
    target_method: Facet | None = None  # how the purpose's side works on it now
    gaps: tuple[Facet, ...] = ()  # the gap the problem's paper states (problem_gaps)
    score: float = 0.0
    parts: tuple[tuple[str, float], ...] = ()  # the score's parts, by name
    fit: kinds.Fit | None = None  # can the method run on the purpose's side's data, and why
    also: tuple[Facet, ...] = ()  # data of a further field the method also fits (Q5's second test)
    unfit: tuple[str, ...] = ()  # further fields none of whose papers has data the method fits

    @property
    def plausible(self) -> bool:
        return self.fit is None or self.fit.plausible

    @property
    def bridge(self) -> str:
        """"method", "unit" or "none" (kinds.Fit.bridge_used); "method" without a fit."""
        return self.fit.bridge_used if self.fit is not None else "method"

    @property
    def fields(self) -> tuple[str, str]:
        return self.mechanism.field, self.purpose.field


@dataclass(frozen=True)
class Pairings:
    """Every plausible pairing of a neighbourhood, best first, and why there are none
    when there are none (one sentence the run shows)."""
    ranked: tuple[Pairing, ...] = ()
    note: str = ""

    def __bool__(self) -> bool:
        return bool(self.ranked)

    def pick(self, index: int) -> Pairing:
        """The pairing of candidate `index`: distinct ones first, then round again."""
        return self.ranked[index % len(self.ranked)]

    def with_fit(self, p: Pairing) -> Pairing:
        """`p` with the fit (and further field's data) of the ranked pairing of the same two
        papers: a pairing read back from a proposal's grounds keeps what its Q1 said."""
        same = next((r for r in self.ranked if (r.mechanism.paper_id, r.purpose.paper_id)
                     == (p.mechanism.paper_id, p.purpose.paper_id)), None)
        if same is None or p.fit is not None:
            return p
        return Pairing(**{**p.__dict__, "fit": same.fit, "also": p.also or same.also,
                          "unfit": p.unfit or same.unfit})


def _data_overlap(a: Facet | None, b: Facet | None) -> float:
    if a is None or b is None:
        return 0.0
    wa, wb = words(a.sentence), words(b.sentence)
    return len(wa & wb) / max(1, min(len(wa), len(wb)))


def _first(found: list[PaperFacets], kind: str, prefer: str = "") -> Facet | None:
    """The facet of this kind from the preferred paper, else from any paper of the side."""
    own = [pf.of(kind) for pf in found if pf.paper_id == prefer]
    rest = [pf.of(kind) for pf in found if pf.paper_id != prefer]
    return next((f for f in own + rest if f is not None), None)


def _first_usable(found: list[PaperFacets], prefer: str) -> Facet | None:
    """The side's evaluation with usable data, the purpose's own paper first."""
    ordered = sorted(found, key=lambda pf: pf.paper_id != prefer)
    evals = [pf.of("evaluation") for pf in ordered]
    return next((f for f in evals if usable(f)), None)


def _texts(by_field: dict[str, list[PaperFacets]], texts: dict[str, str] | None) -> dict[str, str]:
    """Each paper's text for its kinds of data: its title and abstract when given, else the
    sentences its facets came from."""
    out = {}
    for found in by_field.values():
        for pf in found:
            out[pf.paper_id] = (texts or {}).get(pf.paper_id) or " ".join(f.sentence for f in pf.facets)
    return out


def pairings(by_field: dict[str, list[PaperFacets]], embedder=None, limit: int = 24,
             name=lambda f: f, texts: dict[str, str] | None = None,
             paper_fields: dict[str, tuple[str, ...]] | None = None) -> Pairings:
    """Every mechanism of one field with every purpose of another, scored and ranked
    (`name`: a field's name, for the note said when there is none; `texts`: each paper's
    title and abstract by id, for the kinds of data it works on; `paper_fields`: every field
    of each paper, so two papers that share one are never paired)."""
    apart = _apart(paper_fields)
    fields = [f for f, found in by_field.items() if any(pf.facets for pf in found)]
    if len(fields) < 2:
        return Pairings(note=_why_none(by_field, name))
    plans = []
    for fa in fields:
        for fb in fields:
            if fa == fb:
                continue
            for mech_pf in by_field[fa]:
                mech = mech_pf.of("mechanism")
                if mech is None:
                    continue
                for purp_pf in by_field[fb]:
                    purp = purp_pf.of("purpose")
                    if purp is None or not apart(mech_pf.paper_id, purp_pf.paper_id):
                        continue
                    target_eval = _first_usable(by_field[fb], purp_pf.paper_id)
                    gaps = problem_gaps(purp_pf, purp)
                    own_eval = mech_pf.of("evaluation")
                    target_method = purp_pf.of("mechanism")
                    plans.append(Pairing(
                        mech, purp, mech_pf.of("purpose"), own_eval if usable(own_eval) else None,
                        target_eval, target_method if target_method and methodness(target_method) > 0
                        else None, gaps))
    text = _texts(by_field, texts)
    size = {f: len(found) for f, found in by_field.items()}
    if not plans:  # no method to carry across; two problems on the same units still pair
        unit = _unit_plans(by_field, fields, text, embedder, size, apart)
        unit.sort(key=lambda p: (-p.score, p.mechanism.paper_id, p.purpose.paper_id))
        return Pairings(tuple(distinct(unit)[:limit])) if unit else Pairings(note=(
            "The chosen papers state no method in one field and no problem in another, and no "
            "two of them study the same units, so no two fields' facets could be paired."))
    fit = _fits(plans, embedder)
    seen_also: dict[tuple[str, str, str], tuple[tuple[Facet, ...], tuple[str, ...]]] = {}
    scored = []
    for plan, f in zip(plans, fit, strict=True):
        data = _data_overlap(plan.method_eval, plan.target_eval)
        ready = (usable(plan.target_eval)) + (bool(plan.gaps)) + (usable(plan.method_eval))
        method = methodness(plan.mechanism)
        mech_pid = plan.mechanism.paper_id
        bridge = kinds.fit(text[mech_pid], plan.mechanism.phrase, text[plan.purpose.paper_id])
        key = (mech_pid, plan.mechanism.field, plan.purpose.field)
        if key not in seen_also:
            seen_also[key] = further_data(plan.mechanism, plan.purpose, by_field, text)
        also, unfit = seen_also[key]
        reach = min(size[plan.mechanism.field], size[plan.purpose.field]) / max(size.values())
        total = (FIT_WEIGHT * f + DATA_WEIGHT * data + READY_WEIGHT * ready + METHOD_WEIGHT * method
                 + KIND_WEIGHT * bridge.value + KIND_WEIGHT * 0.2 * bool(also) + REACH_WEIGHT * reach)
        target = bridged_eval(plan.mechanism, plan.purpose, plan.target_eval, by_field[plan.purpose.field], bridge,
                              text)
        scored.append(Pairing(**{**plan.__dict__, "score": round(total, 4), "fit": bridge, "also": also,
                                 "unfit": unfit,
                                 "target_eval": target,
                                 "parts": (("fit", round(f, 4)), ("data", round(data, 4)),
                                           ("ready", float(ready)), ("method", method),
                                           ("kind", bridge.value), ("also", float(bool(also))),
                                           ("reach", round(reach, 4)))}))
    # A mechanism that names no method (data, or a sentence's opening) is a last resort.
    methods = [p for p in scored if dict(p.parts)["method"] > 0]
    scored = (methods or scored) + _unit_plans(by_field, fields, text, embedder, size, apart)
    scored.sort(key=lambda p: (-p.score, p.mechanism.paper_id, p.purpose.paper_id))
    # Plausible pairings first, then questions on units both sides study, then the long
    # shots, each group made distinct on its own: a later group is taken only when the
    # earlier ones have all been used.
    groups = {g: [p for p in scored if p.bridge == g] for g in ("method", "unit", "none")}
    return Pairings(tuple(sum((distinct(g) for g in groups.values()), [])[:limit]))


def _apart(paper_fields: dict[str, tuple[str, ...]] | None):
    """Whether neither paper's own (first) field is among the other's fields: a paper filed
    under NLP and systems is a systems paper too, and pairing it with a systems method joins
    no two fields (the systems-biology case study paired TVM with LLM training and left
    biology out). Two papers that only share a secondary field (neuroscience and materials
    papers both also filed under NLP) still join their own two fields."""
    if not paper_fields:
        return lambda a, b: True

    def apart(a: str, b: str) -> bool:
        fa, fb = paper_fields.get(a, ()), paper_fields.get(b, ())
        return not (fa and fa[0] in fb) and not (fb and fb[0] in fa)
    return apart


def _unit_plans(by_field: dict[str, list[PaperFacets]], fields: list[str], text: dict[str, str],
                embedder, size: dict[str, int], apart=lambda a, b: True) -> list[Pairing]:
    """Shared-unit questions: the purpose of a paper of one field (the exposure) with the
    purpose of a paper of another (the outcome) when both papers study the same units
    (units.py). No method is carried across, so the exposure stands where a mechanism
    stands and no mechanism is needed; scored by how close the two purposes' sentences are,
    whether the outcome's side has data and a gap, and the fields' reach."""
    plans = []
    for fa in fields:
        for fb in fields:
            if fa == fb:
                continue
            for pa in by_field[fa]:
                own = pa.of("purpose")
                for pb in by_field[fb]:
                    purp = pb.of("purpose")
                    if not apart(pa.paper_id, pb.paper_id):
                        continue
                    shared = units.shared(text[pa.paper_id], text[pb.paper_id]) if own and purp else ()
                    if not shared:
                        continue
                    method = pb.of("mechanism")
                    own_eval = pa.of("evaluation")
                    fit = kinds.fit(text[pa.paper_id], own.phrase, text[pb.paper_id])
                    plans.append(Pairing(
                        own, purp, own, own_eval if usable(own_eval) else None,
                        _first_usable(by_field[fb], pb.paper_id),
                        method if method and methodness(method) > 0 else None,
                        problem_gaps(pb, purp),
                        fit=kinds.Fit(False, units=shared, method_kinds=fit.method_kinds,
                                      side_kinds=fit.side_kinds)))
    out = []
    for plan, f in zip(plans, _fits(plans, embedder), strict=True):
        ready = usable(plan.target_eval) + bool(plan.gaps) + usable(plan.method_eval)
        reach = min(size[plan.mechanism.field], size[plan.purpose.field]) / max(size.values())
        total = FIT_WEIGHT * f + READY_WEIGHT * ready + REACH_WEIGHT * reach
        out.append(Pairing(**{**plan.__dict__, "score": round(total, 4),
                              "parts": (("fit", round(f, 4)), ("ready", float(ready)),
                                        ("reach", round(reach, 4)))}))
    return out


def problem_gaps(found: PaperFacets, purpose: Facet) -> tuple[Facet, ...]:
    """The gap Q4 quotes: the problem paper's own, unless it is the sentence Q2 quotes already.
    Not the method paper's: a blind reader found its "gap" (a finding on knee-pain disparities,
    GPT-4 completing fewer goals) quoted as what the other field's problem still misses."""
    gap = found.of("gap")
    return (gap,) if gap is not None and gap.sentence != purpose.sentence else ()


def methodness(f: Facet) -> float:
    """1.5 for a method's name from its title, 1 for the object of "we propose/use ...",
    0.2 for a noun phrase merely ending in a method word, -3 for data, a sentence's opening,
    or what a sentence without a method's cue calls a survey, an instrument, a data set or a
    benchmark ("LSST" of "... describes the telescope, camera, ... survey strategy"): those
    belong to evaluation."""
    named = f.phrase.split("(")[0].split()
    if f.form == "sentence" or any(w.lower() in DATA_HEADS for w in named[:5]):
        return -3.0
    if named and named[0].lower() in OPENERS:  # "against the much more precise ...": a clause's tail
        return -3.0
    said = f"{f.phrase} {f.sentence}"
    if INSTRUMENT.search(said) and not METHOD_CUE.search(f.sentence) or DATA_CUE.search(f.sentence):
        return -3.0
    return {"name": 1.5, "found": 0.2}.get(f.form, 1.0)


def _fits(plans: list[Pairing], embedder) -> list[float]:
    """Cosine of each mechanism's sentence with its purpose's sentence (0 without an embedder)."""
    if embedder is None:
        return [0.0] * len(plans)
    texts = list(dict.fromkeys(t for p in plans for t in (p.mechanism.sentence, p.purpose.sentence)))
    vecs = np.asarray(embedder.encode(texts))
    at = {t: vecs[i] for i, t in enumerate(texts)}
    return [float(at[p.mechanism.sentence] @ at[p.purpose.sentence]) for p in plans]


def distinct(ranked: list[Pairing]) -> list[Pairing]:
    """The ranking reordered so that consecutive picks differ: a pairing whose mechanism
    paper or purpose paper was already used, or whose direction repeats the last one,
    waits for a round where nothing fresh is left."""
    left = list(ranked)
    out: list[Pairing] = []
    used: set[str] = set()
    while left:
        last = out[-1].fields if out else None
        pick = next((p for p in left if p.mechanism.paper_id not in used
                     and p.purpose.paper_id not in used and p.fields != last), None)
        pick = pick or next((p for p in left if p.mechanism.paper_id not in used
                             or p.purpose.paper_id not in used), None) or left[0]
        if pick.mechanism.paper_id in used and pick.purpose.paper_id in used:
            used.clear()
        out.append(pick)
        used |= {pick.mechanism.paper_id, pick.purpose.paper_id}
        left.remove(pick)
    return out


def _why_none(by_field: dict[str, list[PaperFacets]], name) -> str:
    with_facets = [f for f, found in by_field.items() if any(pf.facets for pf in found)]
    if not by_field or len(by_field) < 2:
        return "The chosen papers come from one field, so there is no second field to pair with."
    empty = [f for f in by_field if f not in with_facets]
    return (f"The papers of {', '.join(name(f) for f in empty)} state no facet that could be found (no abstract, "
            "or none of its sentences names a problem or a method), so no two fields could be paired.")
