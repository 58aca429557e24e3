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


def question(p: Pairing, name: Callable[[str], str]) -> str:
    mech, purp = p.mechanism.phrase, p.purpose.phrase
    a, b = name(p.mechanism.field), name(p.purpose.field)
    if p.purpose.form == "clause":
        return f"{_lead('q1')} {mech}, a method from {a}, help find out {purp} in {b}?"
    if p.purpose.form == "verb":
        return f"{_lead('q1')} {mech}, a method from {a}, help {purp} in {b}?"
    if p.purpose.form == "sentence":
        return f"{_lead('q1')} {mech}, a method from {a}, be carried over to {b}, where {purp}?"
    return f"{_lead('q1')} {mech}, a method from {a}, be used to study {purp} in {b}?"


def write(p: Pairing, name: Callable[[str], str], titles: dict[str, str]) -> Written:
    """The five answers of one pairing, in the stem leads of fiveq.py."""
    a, b = name(p.mechanism.field), name(p.purpose.field)
    mech = p.mechanism.phrase
    q1 = question(p, name)
    q2 = (f"{_lead('q2')} the problem is one {b} has set itself: {_quote(p.purpose, titles)} "
          f"The pairing asks whether a method from {a} can serve it.")
    own = p.method_purpose
    same = own is not None and (own.phrase.lower() in mech.lower() or mech.lower() in own.phrase.lower())
    made_for = aim(own) if own is not None and not same else f"for problems of {a}"
    q3_grounds = [p.mechanism] + ([p.method_purpose] if p.method_purpose else [])
    if p.method_eval is not None and p.target_eval is not None:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made_for} and tested on "
              f"{p.method_eval.phrase}, while {b} works with {p.target_eval.phrase}; "
              f"what the method assumes about its inputs may not hold there.")
        q3_grounds += [p.method_eval, p.target_eval]
    else:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made_for}, not for {b}: "
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
    now = (f", comparing it with {p.target_method.phrase}"
           if p.target_method and p.target_method.form == "name" else "")
    if p.target_eval is not None:
        judged = f" and measure {measure}" if measure else " and compare the results"
        q5 = f"{_lead('q5')} apply {mech} to {p.target_eval.phrase} from {b}{judged}{now}."
        q5_grounds = [p.mechanism, p.target_eval] + ([p.target_method] if p.target_method else [])
    else:
        q5 = (f"{_lead('q5')} apply {mech} to {p.purpose.phrase} in {b}{now}; no data or measure "
              f"for it was found in the {b} papers' abstracts, so choosing them comes first.")
        q5_grounds = [p.mechanism, p.purpose] + ([p.target_method] if p.target_method else [])
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
