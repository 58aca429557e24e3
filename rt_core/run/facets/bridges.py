"""Q1's bridge, Q3 and Q5 for the two bridges that rest on what a method is for rather than
on a kind of data both sides share (kinds.fit: "deep networks", "papers").

Why apart from write.py: these pairings ask a different question from a method run on the
other side's data. A system for deep learning (TVM, FlexFlow) is not applied to a weather
field or a knee X-ray; it is applied to the other side's neural network, and the question
is whether that network gets cheaper or faster at the accuracy its paper reports. A reader
of research papers (ResearchAgent) is given the problem's own paper, and what it drafts is
judged by that field's researchers and against what the paper states. Each sentence names
what the two abstracts say (kinds.Fit.said), so a researcher can check that the bridge is
no pun (issue 49).
"""
from __future__ import annotations

import re

from . import plan
from .extract import Facet
from .pair import Pairing

# What a systems paper measures its method by: read from its own sentences when named.
COST = re.compile(r"\b(speed-?ups?|latency|throughput|memory|runtime|training\s+time|"
                  r"inference\s+time|faster|cheaper)\b", re.IGNORECASE)
_COST_NAME = {"faster": "speed-up", "cheaper": "cost", "speed-ups": "speed-up", "speedup": "speed-up",
              "speedups": "speed-up"}


_ARTICLE = re.compile(r"(?:a|an|the|its|their)\b", re.IGNORECASE)


def on_model(fit) -> bool:
    """Whether the method runs on the other side's model rather than its data: a system for
    deep learning on its network, or an attention method on its transformer ("transformers"
    shared). Either is judged by its own cost at that model's accuracy (a blind reader: an
    attention speed-up "measures only agreement, not speed or memory", reading v8)."""
    return fit is not None and (fit.generic == "deep networks" or "transformers" in fit.shared)


def cost_measure(p: Pairing) -> str:
    """The method paper's own kind of measure (its evaluation's sentence first, then the
    method's and its purpose's), else training and inference time and memory."""
    for f in (p.method_eval, p.mechanism, p.method_purpose):
        m = COST.search(f.sentence) if f is not None else None
        if m:
            word = m.group(1).lower()
            return _COST_NAME.get(word, word)
    return "training and inference time and memory"


def model_of(p: Pairing) -> str:
    """The other side's network as its paper names it: its method, else "the neural network"."""
    m = p.target_method
    if m is None:
        return "the neural network"
    return f"the {m.phrase}" if m.form in ("noun", "found") and not _ARTICLE.match(m.phrase) else m.phrase


def opening(p: Pairing, a: str, b: str) -> str:
    """Q1's first sentence: what each abstract says, in its own words."""
    mine, theirs = p.fit.said
    if p.fit.generic == "deep networks":
        return (f"The {a} paper's abstract says its method is made for “{mine}”, and the {b} paper of "
                f"this problem runs a neural network (its abstract names “{theirs}”).")
    return (f"The {a} paper's abstract says its method works on “{mine}”, and the {b} paper of this "
            f"problem is itself such a paper.")


def ask(p: Pairing, b: str, asking: str, target: str, made: str) -> str:
    """Q1's question: the method does what it was made for, for the problem's paper. Never
    "be used to find out whether ...": a compiler or an idea drafter finds out nothing about
    the problem itself, so that would be a pun; the problem is named as the paper's own."""
    aim = target[len(f"in {b} "):] if target.startswith(f"in {b} ") else target.removeprefix("in ")
    if p.fit.generic == "deep networks":
        return (f"{asking} make {model_of(p)} of that paper faster or cheaper to train or run, at the "
                f"accuracy it reports? That paper uses it {target}.")
    does = f"{made[3:]} for" if made.startswith("to ") else "be applied to"
    named = f"the {b} paper's question, {aim}" if aim.startswith("to ") else aim
    return f"{asking} {does} {named}, starting from that paper and the literature it draws on?"


def hard(p: Pairing, lead: str, mech: str, a: str, b: str, made: str) -> tuple[str, list[Facet]]:
    """Q3: what differs between the two models, or between the two literatures."""
    tested = p.method_eval.phrase if p.method_eval is not None else ""
    grounds = [f for f in (p.method_eval, p.target_method) if f is not None]
    if p.fit.generic == "deep networks":
        shown = f" and shown on {tested}" if tested else ""
        return (f"{lead} {mech} was developed in {a} for “{p.fit.said[0]}”{shown}, while the {b} paper's model is "
                f"{model_of(p)}: its layers, sizes and the accuracy it must keep differ from the networks "
                f"the method was tuned for, so the gain may not carry over, or may cost accuracy."), grounds
    shown = f" and judged on {tested}" if tested else ""
    return (f"{lead} {mech} was developed in {a} {made}{shown}, while the {b} paper's question needs "
            f"that field's knowledge: what the method drafts from its papers can only be judged by "
            f"researchers of {b}, who know what the papers leave unsaid."), grounds


def approach(p: Pairing, lead: str, mech: str, b: str, titles: dict[str, str]) -> str:
    """Q5: the method on the other side's network (or its paper), with its measure and baseline."""
    own = plan.who(p.purpose, b, titles)
    if on_model(p.fit):
        data = f", trained and run as that paper does on {p.target_eval.phrase}" if p.target_eval is not None else ""
        model = model_of(p)
        return (f"{lead} apply {mech} to {model} of {own}{data}. {plan.MEASURE_IS} its "
                f"{cost_measure(p)} at the accuracy {own} reports. The baseline is {model} as its paper "
                f"runs it, so the same model is compared with and without {mech}.")
    return (f"{lead} give {mech} {own} as its starting paper. {plan.MEASURE_IS} how researchers of {b} "
            f"rate what it drafts for this question (clear, new and valid), and whether the drafts agree "
            f"with what that paper states. The baseline is the question as {own} states it, so what "
            f"{mech} adds to that paper's own account can be seen.")
