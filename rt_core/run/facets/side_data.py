"""Which data of the other side a pairing's Q5 runs on, and which further fields can give a
second test: read from each paper's facets and the bridge between the two sides (kinds.py).

Why apart from pair.py: choosing and scoring pairings is one concern, and which data a
chosen pairing then names is another, with its own rules that blind readers shaped (a
literature review bridged by its text must not send the method to the side's survey data;
a method that runs on the side's own model takes that paper's data, not a neighbour's).
"""
from __future__ import annotations

from . import kinds
from .extract import Facet, PaperFacets


def usable(f: Facet | None) -> bool:
    """An evaluation a proposal can name: data of more than one word ("survey" alone says
    nothing of what was surveyed)."""
    return f is not None and len(f.phrase.split()) >= 2


def bridged_eval(mech: Facet, purpose: Facet, target_eval: Facet | None, side: list[PaperFacets],
                 bridge: kinds.Fit, text: dict[str, str]) -> Facet | None:
    """A pairing's method and purpose, the data it had chosen, and the purpose's side: the
    purpose's side's data Q5 runs the method on: when the bridge is a shared kind of
    data, an evaluation of a paper whose data the method reads as that kind (the purpose's
    own paper first), or none: a literature review bridged by its text must not send the
    method to the side's survey data (kinds.fit reads a paper's literature, records or
    gridded fields as text, tables or images, which its kinds alone do not say). When the
    method runs on the problem paper's model, that paper's own data or none (a blind reader:
    Q5 fitted one paper's model "on" another paper's survey). Else the side's first usable
    evaluation."""
    if bridge.shared:
        ordered = sorted(side, key=lambda pf: pf.paper_id != purpose.paper_id)
        for pf in ordered:
            ev = pf.of("evaluation")
            if usable(ev) and set(bridge.shared) & set(
                    kinds.fit(text[mech.paper_id], mech.phrase, text[pf.paper_id]).shared):
                return ev
        return None
    if bridge.generic in kinds.ON_MODEL:  # the problem paper's own model runs on its own data
        own = next((pf.of("evaluation") for pf in side if pf.paper_id == purpose.paper_id), None)
        return own if usable(own) else None
    return target_eval


def further_data(mech: Facet, purpose: Facet, by_field: dict[str, list[PaperFacets]],
                 text: dict[str, str]) -> tuple[tuple[Facet, ...], tuple[str, ...]]:
    """For a pairing's method and purpose, per further field (neither the method's nor the
    problem's): the usable data of its first paper that works on a kind of data the method
    shares, or any data for a general tool (a second test of the same method, which a case
    study with more fields names in Q1 and Q5), and the further fields none of whose papers
    has data the method could run on (Q5 says why they are left out)."""
    also, unfit = [], []
    mech_text = text[mech.paper_id]
    for fc, found in by_field.items():
        if fc in (mech.field, purpose.field):
            continue
        fits = [(pf, kinds.fit(mech_text, mech.phrase, text[pf.paper_id])) for pf in found]
        shared = next((pf.of("evaluation") for pf, f in fits
                       if (f.shared or f.generic == "any data") and usable(pf.of("evaluation"))), None)
        if shared is not None:
            also.append(shared)
        elif not any(f.plausible for _, f in fits):
            unfit.append(fc)
    return tuple(also), tuple(unfit)
