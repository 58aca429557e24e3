"""Q1's bridge, Q3 and Q5 for the bridges that rest on what a method is for rather than on a
kind of data both sides share (kinds.fit: "deep networks", "models to train", "computations",
"papers"), and for an attention method on the other side's transformer.

Why apart from write.py: these pairings ask a different question from a method run on the
other side's data. A system for deep learning (TVM, FlexFlow) is not applied to a weather
field or a knee X-ray; it is applied to the other side's neural network, and the question
is whether that network gets cheaper or faster at the accuracy its paper reports. A reader
of research papers (ResearchAgent) is given the problem's own paper, and what it drafts is
judged by that field's researchers and against what the paper states. An optimiser
fits the other side's model (sooner, to the fit its paper reports), and a tool for parallel
workflows runs its computation (sooner, with the same results). Each sentence names
what the two abstracts say (kinds.Fit.said), so a researcher can check that the bridge is
no pun (issue 49).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import grammar, kinds, plan
from .extract import Facet
from .pair import Pairing

# What a systems paper measures its method by: read from its own sentences when named.
COST = re.compile(r"\b(speed-?ups?|latency|throughput|memory|runtime|training\s+time|"
                  r"inference\s+time|faster|cheaper)\b", re.IGNORECASE)
_COST_NAME = {"faster": "speed-up", "cheaper": "cost", "speed-ups": "speed-up", "speedup": "speed-up",
              "speedups": "speed-up"}


_ARTICLE = re.compile(r"(?:a|an|the|its|their)\b", re.IGNORECASE)
# The bridges of a method's purpose: it works on the other side's model, computation or
# paper, not on its data (kinds.Fit.generic).
PURPOSE_BRIDGES = ("deep networks", "models to train", "computations", "problems to solve", "papers")


@dataclass(frozen=True)
class Runs:
    """What a method that runs on the other side's model is, and what that side does, in the
    words every part says it (Q1's opening, the review's kind and data checks, the Run page's
    hint): one place, so no part names a bridge another does not."""
    noun: str  # what of the other side it works on: "network", "model", "computation", "problem"
    unnamed: str  # that, when the problem's paper names no method of its own
    method_is: str  # what the method is, read from the words that name it
    side_does: str  # what the problem's paper does, read from its abstract
    own: str  # what Q5 works on, with "{}" for the problem's field


RUNS = {"deep networks": Runs("network", "the neural network", "made for deep learning", "runs a neural network",
                              "the network the {} paper runs"),
        "transformers": Runs("network", "the transformer", "a method on attention", "runs a transformer",
                             "the network the {} paper runs"),
        "models to train": Runs("model", "the model", "an optimiser of models", "fits a model",
                                "the model the {} paper fits"),
        "computations": Runs("computation", "the analysis", "a tool that runs computations in parallel",
                             "runs a computation of its own", "the computation the {} paper runs"),
        "problems to solve": Runs("problem", "the optimisation problem", "a solver of optimisation problems",
                                  "solves an optimisation problem", "the optimisation problem the {} paper solves")}


def runs_for(fit) -> Runs | None:
    """The record of a fit whose method runs on the other side's model, else None."""
    if fit is None:
        return None
    key = fit.generic if fit.generic in RUNS else "transformers" if "transformers" in fit.shared else ""
    return RUNS.get(key)


def side_does(fit) -> str:
    """What the problem's paper does, for a fit of RUNS: a perspective argues for networks and
    runs none (Fit.argued); a side that names only data analyses it (kinds.computes)."""
    if fit.generic == "deep networks" and fit.argued:
        return "argues for neural networks"
    if fit.generic == "computations" and not kinds.computes(fit.said[1]):
        return "analyses data of its own"
    return RUNS[fit.generic].side_does


def own_of(fit, field: str) -> str:
    """What Q5 works on, as the data check says it ("the model the Criminology paper fits")."""
    if fit.generic == "papers":
        return f"the {field} paper itself"
    if fit.generic == "deep networks" and fit.argued:
        return f"the networks the {field} paper argues for"
    return runs_for(fit).own.format(field)


def runs_on(fit) -> str:
    """What of the other side the method works on: "network", "model", "computation",
    "problem", "paper", or "" (it runs on the side's data)."""
    if fit is not None and fit.generic == "papers":
        return "paper"
    runs = runs_for(fit)
    return runs.noun if runs else ""


def on_model(fit) -> bool:
    """Whether the method runs on the other side's model rather than its data: a system for
    deep learning on its network, an attention method on its transformer ("transformers"
    shared), an optimiser on the model it fits, a parallel tool on the computation it runs.
    Each is judged by its own cost at that model's accuracy or results (a blind reader: an
    attention speed-up "measures only agreement, not speed or memory", reading v8; Parsl asked
    to "predict dynamics", reading v9)."""
    return runs_on(fit) in ("network", "model", "computation", "problem")  # kinds.ON_MODEL, or a transformer


def why_cheaper(p: Pairing, a: str, b: str) -> str:
    """Q2's reason for a method that runs on the other side's model: what a cheaper model or
    computation would let that field do (a blind reader of v9's one readable proposal: "Q2
    and Q4 do not motivate the speed-up"). Said as what it would allow, never as a result."""
    gain = {"models to train": "a model fitted sooner or more reliably would let {b} fit more variants of it, "
                               "or fit it to more data",
            "computations": "a computation that finishes sooner would let {b} run more of it, more runs or "
                            "more data, for the same question",
            "problems to solve": "a problem solved sooner would let {b} solve more of them, or larger ones, "
                                 "for the same question"}.get(
        p.fit.generic, "a network that trains or runs in less time and memory would let {b} try more "
                       "models, or larger ones, for the same question")
    return f"whether a method from {a} can make that work cheaper: {gain.format(b=b)}"


def cost_measure(p: Pairing) -> str:
    """The method's own kind of measure: an optimiser's is the work to reach the fit, a
    parallel tool's the wall time; a system's the word its paper measures by (its
    evaluation's sentence first, then the method's and its purpose's), else training and
    inference time and memory."""
    if p.fit.generic == "models to train":
        return "the iterations and time it needs to reach the fit"
    if p.fit.generic == "computations":
        return "wall time, with results that match those"
    if p.fit.generic == "problems to solve":
        return "the time it needs to reach a feasible solution as good as the one"
    for f in (p.method_eval, p.mechanism, p.method_purpose):
        m = COST.search(f.sentence) if f is not None else None
        if m:
            word = m.group(1).lower()
            return f"its {_COST_NAME.get(word, word)} at the accuracy"
    return "its training and inference time and memory at the accuracy"


def model_of(p: Pairing) -> str:
    """The other side's model as its paper names it: its method, else what the method works on."""
    m = p.target_method
    if p.fit.generic == "models to train":  # the paper's method may be its data ("a co-offending network")
        return "the model"
    if p.fit.generic == "problems to solve":
        return "the optimisation problem"
    if m is None:
        return (runs_for(p.fit) or RUNS["deep networks"]).unnamed
    return f"the {m.phrase}" if m.form in ("noun", "found") and not _ARTICLE.match(m.phrase) else m.phrase


def opening(p: Pairing, a: str, b: str) -> str:
    """Q1's first sentence: what each abstract says, in its own words."""
    mine, theirs = p.fit.said
    if p.fit.generic in RUNS:
        said = (f"The {a} paper's abstract says its method is made for “{mine}”" if p.fit.generic == "deep networks"
                else f"The {a} paper's method is {RUNS[p.fit.generic].method_is} (its name says “{mine}”)")
        return f"{said}, and the {b} paper of this problem {side_does(p.fit)} (its abstract names “{theirs}”)."
    return (f"The {a} paper's abstract says its method works on “{mine}”, and the {b} paper of this "
            f"problem is itself such a paper.")


def ask(p: Pairing, b: str, asking: str, target: str, made: str) -> str:
    """Q1's question: the method does what it was made for, for the problem's paper. Never
    "be used to find out whether ...": a compiler, an optimiser, a workflow system or an idea
    drafter finds out nothing about the problem itself, so that would be a pun; the problem
    is named as the paper's own."""
    aim = target[len(f"in {b} "):] if target.startswith(f"in {b} ") else target.removeprefix("in ")
    accuracy = "the same accuracy" if p.fit.argued else "the accuracy it reports"
    wants = {"deep networks": "make {} of that paper faster or cheaper to train or run, at " + accuracy + "?",
             "models to train": "fit {} that paper fits faster or more reliably, reaching the fit it reports?",
             "problems to solve": "solve {} of that paper faster, with its constraints met and a solution as good?",
             "computations": "run the parts of that paper's computation that need nothing from each other "
                             "(separate runs, ablations or forecasts of {}) as parallel tasks, so they finish "
                             "sooner with the same results?"}
    if p.fit.generic == "computations" and not kinds.computes(p.fit.said[1]):
        # The opening quoted its data already; "it" would be no model here.
        work = f"in {grammar.possessive(b)} work on "
        then = (f"That paper studies {target[len(work):]}." if target.startswith(work)
                else f"That paper uses the analysis {target[len(f'in {b} '):]}." if target.startswith(f"in {b} to ")
                else f"That paper works {target}.")
        return f"{asking} run that paper's analysis of its data as parallel tasks, so it finishes sooner with the " \
               f"same results? {then}"
    if p.fit.generic in wants:
        return f"{asking} {wants[p.fit.generic].format(model_of(p))} That paper uses it {target}."
    does = f"{made[3:]} for" if made.startswith("to ") else "be applied to"
    named = f"the {b} paper's question, {aim}" if aim.startswith("to ") else aim
    return f"{asking} {does} {named}, starting from that paper and the literature it draws on?"


def hard(p: Pairing, lead: str, mech: str, a: str, b: str, made: str) -> tuple[str, list[Facet]]:
    """Q3: what differs between the two models or computations, or between the two literatures."""
    tested = p.method_eval.phrase if p.method_eval is not None else ""
    grounds = [f for f in (p.method_eval, p.target_method) if f is not None]
    model = model_of(p)
    if p.fit.generic == "deep networks":
        shown = f" and shown on {tested}" if tested else ""
        return (f"{lead} {mech} was developed in {a} for “{p.fit.said[0]}”{shown}, while the {b} paper's model is "
                f"{model}: its layers, sizes and the accuracy it must keep differ from the networks "
                f"the method was tuned for, so the gain may not carry over, or may cost accuracy."), grounds
    shown = f" and shown on {tested}" if tested else ""
    if p.fit.generic == "models to train":
        return (f"{lead} {mech} was developed in {a} {made}{shown}, while the model the {b} paper fits has "
                f"an objective, a size and data of its own, which differ from the problems the method was "
                f"tuned on, so it may reach that fit no sooner there, or reach a worse one."), grounds
    if p.fit.generic == "problems to solve":
        return (f"{lead} {mech} was developed in {a} {made}{shown}, while the problem the {b} paper solves has "
                f"variables, constraints and a size of its own, so a solver tuned on other problems may be no "
                f"faster there, or miss its optimum."), grounds
    if p.fit.generic == "computations":
        return (f"{lead} {mech} was developed in {a} {made}{shown}, while the {b} paper's computation, "
                f"{model}, was written to run as its authors run it: a single training or fitting run is "
                f"tightly coupled, and only separate runs gain from parallel tasks, so the gain depends on "
                f"how many such runs that paper makes."), grounds
    shown = f" and judged on {tested}" if tested else ""
    return (f"{lead} {mech} was developed in {a} {made}{shown}, while the {b} paper's question needs "
            f"that field's knowledge: what the method drafts from its papers can only be judged by "
            f"researchers of {b}, who know what the papers leave unsaid."), grounds


def approach(p: Pairing, lead: str, mech: str, b: str, titles: dict[str, str]) -> str:
    """Q5: the method on the other side's model, computation or paper, with its measure and baseline."""
    own = plan.who(p.purpose, b, titles)
    if on_model(p.fit):
        model, data = model_of(p), p.target_eval.phrase if p.target_eval is not None else ""
        how = {"models to train": (f"fit {model} of {own} with {mech}", ", on the data that paper fits it to, ",
                                   "fitted as its paper fits it", "model"),
               "problems to solve": (f"solve {model} of {own} with {mech}", ", on that paper's ",
                                     "solved as its paper solves it", "problem"),
               "computations": (f"run the separate runs of {model} of {own} as parallel tasks with {mech}",
                                ", on that paper's ",
                                "run as its paper runs it", "computation")}
        does, on, base, what = how.get(p.fit.generic, (f"apply {mech} to {model} of {own}",
                                                       ", trained and run as that paper does on ",
                                                       "as its paper runs it", "model"))
        data = f"{on}{data}" if data else ""
        reports = "the network reaches without it" if p.fit.argued else f"{own} reports"
        return (f"{lead} {does}{data}. {plan.MEASURE_IS} {cost_measure(p)} {reports}. The baseline is "
                f"{model} {base}, so the same {what} is compared with and without {mech}.")
    return (f"{lead} give {mech} {own} as its starting paper. {plan.MEASURE_IS} how researchers of {b} "
            f"rate what it drafts for this question (clear, new and valid), and whether the drafts agree "
            f"with what that paper states. The baseline is the question as {own} states it, so what "
            f"{mech} adds to that paper's own account can be seen.")
