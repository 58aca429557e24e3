"""The parts of a proposal that make it a plan: what Q5 measures, what it compares with,
which further field's data is a second test of the same question, and what Q4 says the
problem's paper already does when no paper states a gap.

Why: a blind reader judged "a plan without a measure and a comparison is not a plan": Q5
said "the papers name no measure, so what to measure comes first" and "no baseline is
named" even where the problem's paper is itself the obvious baseline, Q4 said only that
no gap is stated, and a "second test" on a third field's images had nothing to do with an
economics question (issue 49). Everything said here is the plan itself (this method on
that data, against that paper's analysis) or words of the papers' own sentences
(problem.py), never a result.
"""
from __future__ import annotations

from collections.abc import Callable

from ...text import clip, words
from . import grammar, kinds
from .extract import Facet
from .pair import Pairing
from .problem import Problem, doing, outcome

# The words that introduce Q5's measure: the rubric reads the measure after them.
MEASURE_IS = "The measure is"


def who(f: Facet, b: str, titles: dict[str, str]) -> str:
    """A paper of the problem's side as a reader can find it: "the Criminology paper
    (Community Structure and Crime: ...)"."""
    title = titles.get(f.paper_id, "")
    return f"the {b} paper ({clip(title, 70)})" if title else f"the {b} paper of the problem"


def told(p: Pairing) -> Problem:
    return Problem.of(p.purpose, p.target_method, p.target_eval)


def second_tests(p: Pairing) -> tuple[Facet, ...]:
    """Further fields' data Q5 tests the method on as well: only data of a kind the method
    and the problem's side share, named in the data's own sentence as in the main test's, and
    about what the question is about (a word of its topic or outcome), so the second test runs
    the same question on the same kind of data; one at most. A general tool ("any data") fits any data,
    which makes no second test of this question (a blind reader: "image tasks ... have
    nothing to do with the economics question")."""
    if p.fit is None or not p.fit.shared:
        return ()
    # The kind the main test runs on: named by its data's sentence, else the shared kinds.
    main = set(p.fit.shared) & kinds.kinds_of(p.target_eval.sentence) if p.target_eval is not None else set()
    # The same question: the further data's sentence names something the question names
    # (its topic or outcome), not only data of the same kind ("crime" in both, say).
    asked = words(" ".join([p.purpose.phrase, told(p).outcome()[1], *(c[0] for c in [told(p).claim()] if c)]))
    return tuple(f for f in p.also if (main or set(p.fit.shared)) & kinds.kinds_of(f.sentence)
                 and asked & words(f.sentence))[:1]


def left_out(p: Pairing, name: Callable[[str], str]) -> str:
    """Q5's sentence on the further fields the proposal does not use, and why ("" if none)."""
    kept = second_tests(p)
    other = [f for f in p.also if f not in kept]
    fields = _and([name(f.field) for f in other])
    said = (f" The data of {fields} ({'; '.join(f.phrase for f in other)}) serves other questions than this one, "
            f"so the proposal leaves {'it' if len(other) == 1 else 'them'} out.") if other else ""
    if p.unfit:
        said += (f" The {_and([name(f) for f in p.unfit])} papers state no data this method "
                 f"could run on, so the proposal leaves them out.")
    return said


def _and(names: list[str]) -> str:
    return "" if not names else names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# What an analysis of these verbs yields, which the paper reports and the method's can be set beside.
_RESULTS = {"estimates": "estimate", "maps": "map", "models": "model", "measures": "measurement"}


def outcome_of(p: Pairing) -> tuple[str, str]:
    """The outcome the problem's paper names, else the one the sentence of Q5's data names."""
    verb, what = told(p).outcome()
    return (verb, what) if what or p.target_eval is None else outcome(p.target_eval)


def measure(p: Pairing, b: str, titles: dict[str, str], stated: str) -> str:
    """What the outcome is judged by, as a phrase after "The measure is": the measure the
    data's sentence names (`stated`); else how well the method does what the problem's
    paper does (estimates, predicts, accounts for the outcome its sentence names); else its
    agreement with what the data's paper reports from that data."""
    if stated:
        return f"its {stated}, the measure the {b} paper reports on that data"
    verb, what = outcome_of(p)
    if verb in _RESULTS:  # an estimate, a map or a model is judged against the paper's own
        return f"the agreement between its {_RESULTS[verb]} of {what} and the one {who(p.purpose, b, titles)} reports"
    if what:
        there = " on that data" if p.target_eval is not None and len(what.split()) <= 4 else ""
        return f"how well it {verb} {what}{there}"
    if p.target_eval is not None:
        return f"its agreement with what {who(p.target_eval, b, titles)} reports from that data"
    return f"its agreement with what {who(p.purpose, b, titles)} reports"


def _analysis(p: Pairing, b: str, titles: dict[str, str]) -> str:
    """The analysis of the problem's paper in its own words ("the Criminology paper (...),
    in which the authors measure ..."), or of the paper whose data Q5 takes; "" if none."""
    for f in (told(p).doing(), doing(p.target_eval)):
        if f is not None:
            joined = "in which the authors" if f.plural else "which"
            return f"{who(f.facet, b, titles)}, {joined} {f.clause}"
    return ""


def baseline(p: Pairing, b: str, titles: dict[str, str], mech: str) -> str:
    """Q5's comparison: the problem paper's own method when it names one, else its own
    analysis as its sentence states it, so the same question is answered with and without
    the carried method."""
    same = f"so the same question is answered with and without {mech}"
    if p.target_method is not None:
        named = p.target_method.phrase
        named = grammar.with_article(named) if p.target_method.form in ("noun", "found") else named
        return (f"The baseline is {named}, the method {who(p.purpose, b, titles)} uses, "
                f"{same}.")
    done = _analysis(p, b, titles)
    if done:
        return f"The baseline is the approach of {done}, {same}."
    return f"The baseline is the account {who(p.purpose, b, titles)} gives of the problem, {same}."


def already(p: Pairing, b: str, titles: dict[str, str], mech: str) -> str:
    """Q4 when no chosen paper states a gap: what the problem's paper does (its analysis, its
    method or its data, in its words) and that none of the chosen papers brings this method
    to it; never "no one", never "first": only the chosen papers are known."""
    d, own = told(p).doing(), who(p.purpose, b, titles)
    data = p.target_eval if p.target_eval is not None and p.target_eval.paper_id == p.purpose.paper_id else None
    if d is not None:
        did = f"in {own} the authors {d.clause}" if d.plural else f"{own} {d.clause}"
        if data is not None and data.phrase not in d.clause and data.sentence == d.facet.sentence:
            did += f", with {data.phrase}"
    elif p.target_method is not None:
        did = f"{own} uses {p.target_method.phrase}"
    elif data is not None:
        did = f"{own} works with {data.phrase}"
    else:
        # Not "names no method": the rules may miss one the abstract does name (a blind
        # reader, v9: the paper's title says it is a natural experiment).
        did = f"{own} states the problem as Q2 quotes it"
    return (f"the chosen papers work on it without {mech}: {did}. None of the chosen papers "
            f"brings {mech} to this problem, and none states a gap that it would fill.")
