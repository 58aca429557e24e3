"""A five-question proposal written from one pairing, each answer keeping the papers'
sentences it came from.

Why templates and not the model: the plan is the pairing (DESIGN.md, section 10), and
the papers' own sentences already say the problem, the method, the data and the gaps in
words that make sense. A template joins them; a 270M base model asked to join them
invents (README, "Ideas from facets"). What each answer says is only what a sentence it
cites states, or the plan itself (this method, that problem), never a result.

- Q1 pairs the mechanism with the purpose, in a form that fits the purpose's phrase;
- Q2 is the purpose's own motivation, quoted from its paper;
- Q3 says what the mechanism was made for and tested on, against the other side's data;
- Q4 quotes the gaps the papers state (or says that none is stated);
- Q5 applies the mechanism to the other side's data and measure.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ... import fiveq
from ...text import clip
from .extract import Facet
from .pair import Pairing

MEASURES = re.compile(r"\b(accuracy|error|errors|F1|precision|recall|score|scores|rate|cost|"
                      r"costs|regret|perplexity|likelihood|quality|validity|diversity|bound|"
                      r"share|fraction|risk|agreement|correlation)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Written:
    """The five answers and, per answer, the facets it was written from."""
    answers: tuple[tuple[str, str], ...]
    grounds: tuple[tuple[str, tuple[Facet, ...]], ...]
    pairing: Pairing

    def answer(self, key: str) -> str:
        return dict(self.answers)[key]


def _lead(key: str) -> str:
    return fiveq.BY_KEY[key].stem_lead


def _quote(f: Facet, titles: dict[str, str]) -> str:
    title = titles.get(f.paper_id, "")
    where = f" ({clip(title, 70)})" if title else ""
    return f"“{f.sentence.rstrip()}”{where}"


def measure_of(f: Facet | None) -> str:
    """The measure a sentence names ("accuracy", "error" ...), or ""."""
    m = MEASURES.search(f.sentence) if f is not None else None
    return m.group(1).lower() if m else ""


def aim(f: Facet) -> str:
    """What a method was made for, after "was made": "to find out whether ...", "to assess
    ...", "for work on stellar velocity distributions"."""
    if f.form == "clause":
        return f"to find out {f.phrase}"
    if f.form == "verb":
        return f"to {f.phrase}"
    if f.form == "noun":
        return f"for work on {f.phrase}"
    return f"for a problem of {f.field}"


def made_for(p: Pairing) -> str:
    """What the mechanism was made for on its own side ("to assess ...", "for work on ..."),
    or "" when its paper states nothing apart from the method itself."""
    own, mech = p.method_purpose, p.mechanism.phrase.lower()
    if own is None or own.phrase.lower() in mech or mech in own.phrase.lower():
        return ""
    return aim(own)


def question(p: Pairing, name: Callable[[str], str]) -> str:
    """Q1 as a question a reader can answer yes or no to: the method (its field, and what it
    was made for when its paper says), and the other field's problem."""
    mech, purp = p.mechanism.phrase, p.purpose.phrase
    a, b = name(p.mechanism.field), name(p.purpose.field)
    does = made_for(p)
    method = f"{mech}, a method from {a} developed {does}," if does else f"{mech}, a method from {a},"
    if p.purpose.form == "clause":
        return f"{_lead('q1')} {method} help find out {purp} in {b}?"
    if p.purpose.form == "verb":
        return f"{_lead('q1')} {method} help {purp} in {b}?"
    if p.purpose.form == "sentence":
        return f"{_lead('q1')} {method} help with a problem {b} states: {purp}?"
    return f"{_lead('q1')} {method} help the study of {purp} in {b}?"


def write(p: Pairing, name: Callable[[str], str], titles: dict[str, str]) -> Written:
    """The five answers of one pairing, in the stem leads of fiveq.py."""
    a, b = name(p.mechanism.field), name(p.purpose.field)
    mech = p.mechanism.phrase
    q1 = question(p, name)
    q2 = (f"{_lead('q2')} the problem is one {b} has set itself: {_quote(p.purpose, titles)} "
          f"The pairing asks whether a method from {a} can serve it.")
    made = made_for(p) or f"for problems of {a}"
    q3_grounds = [p.mechanism] + ([p.method_purpose] if p.method_purpose else [])
    if p.method_eval is not None and p.target_eval is not None:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made}. There it was "
              f"tested on {p.method_eval.phrase}, while {b} works with {p.target_eval.phrase}, "
              f"so what the method assumes about its inputs may not hold.")
        q3_grounds += [p.method_eval, p.target_eval]
    else:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made}, not for {b}: "
              f"what it assumes about its inputs has to be checked against the data of {b} "
              f"before it can be trusted.")
    if p.gaps:
        q4 = f"{_lead('q4')} the papers name what is still missing: " + " ".join(
            _quote(g, titles) for g in p.gaps)
    else:
        q4 = (f"{_lead('q4')} none of the chosen papers states a gap that this pairing fills; "
              f"the case for it rests on joining {a}'s method with {b}'s problem, which "
              f"neither paper does.")
    measure = measure_of(p.target_eval)
    base = p.target_method
    baseline = (f"The baseline is {base.phrase}, the method the {b} paper uses."
                if base is not None else f"The {b} papers state no method to compare with, so no "
                f"baseline is named.")
    if p.target_eval is not None:
        judged = (f", measure its {measure} there as the {b} paper does" if measure else
                  f"; the {b} papers name no measure for it, so what to measure comes first")
        q5 = f"{_lead('q5')} apply {mech} to {p.target_eval.phrase} from {b}{judged}. {baseline}"
        q5_grounds = [p.mechanism, p.target_eval] + ([base] if base else [])
    else:
        q5 = (f"{_lead('q5')} apply {mech} to {p.purpose.phrase} in {b}; the {b} papers' "
              f"abstracts name no data or measure for it, so choosing them comes first. {baseline}")
        q5_grounds = [p.mechanism, p.purpose] + ([base] if base else [])
    answers = {"q1": q1, "q2": q2, "q3": q3, "q4": q4, "q5": q5}
    grounds = {"q1": (p.mechanism, p.purpose), "q2": (p.purpose,), "q3": tuple(q3_grounds),
               "q4": tuple(p.gaps), "q5": tuple(q5_grounds)}
    return Written(tuple((k, _tidy(v)) for k, v in answers.items()),
                   tuple((k, v) for k, v in grounds.items()), p)


def _tidy(text: str) -> str:
    """One space between words, no space before punctuation, one full stop at the end."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:.?!])", r"\1", text)
    return re.sub(r"([.?!”)])\.$", r"\1", text if text[-1:] in ".?!”)" else text + ".")
