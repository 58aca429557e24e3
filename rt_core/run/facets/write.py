"""A five-question proposal written from one pairing, each answer keeping the papers'
sentences it came from.

Why templates and not the model: the plan is the pairing (DESIGN.md, section 10), and
the papers' own sentences already say the problem, the method, the data and the gaps in
words that make sense. A template joins them; a 270M base model asked to join them
invents (README, "Ideas from facets"). What each answer says is only what a sentence it
cites states, or the plan itself (this method, that problem), never a result.

- Q1 says the bridge to the purpose's field (the kind of data both work on, kinds.py) or
  that there is none, and asks one question: the method, what its own field uses it for, and
  what it would do for the problem, in the problem paper's words (problem.py);
- Q2 is the purpose's own motivation, quoted from its paper;
- Q3 says what the mechanism was made for and tested on, against the other side's data;
- Q4 quotes the gaps the papers state, or says what the problem's paper does without the
  method (plan.py);
- Q5 applies the mechanism to the other side's data with a measure and a baseline (plan.py),
  and to a further field's data when it tests the same question on the same kind of data.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ... import fiveq
from ...text import STOP, clip
from . import bridges, grammar, kinds, plan, units
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
    return grammar.said(f, {"clause": "to find out {p}", "verb": "to {verb}", "noun": "for work on {p}",
                            "other": f"for a problem of {f.field}"})


# A mechanism phrase that opens on one of these verbs names what the method does, not the
# method ("predict neural responses in the human language network"): said as "a method to ...".
_DOES = re.compile(r"^(?:predict|estimate|model|map|measure|compute|learn|classify|generate|detect|"
                   r"infer|simulate|rank|score|explain|approximate|forecast)\b", re.IGNORECASE)


def method_name(f: Facet, titles: dict[str, str] | None = None) -> str:
    """The mechanism as a noun phrase a sentence can carry ("apply X to ..."). A mechanism
    that is only a sentence's opening ("Distributed training usually splits work only along
    the batch") names no method: it is called by its paper's title instead (blind reading v7
    read "Can Distributed training usually splits work ..., a method from ..." as broken)."""
    title = (titles or {}).get(f.paper_id, "")
    if f.form == "sentence" and title:
        return f"the method of “{clip(title, 80)}”"
    if _DOES.match(f.phrase):
        return f"a method to {f.phrase}"
    return grammar.with_article(f.phrase) if f.form in ("noun", "found") else f.phrase


def made_for(p: Pairing, titles: dict[str, str] | None = None) -> str:
    """What the mechanism was made for on its own side ("to assess ...", "for work on ..."),
    or "" when its paper states nothing apart from the method itself. A topic is named by
    the method paper's title where it can be ("for work on forecasting the spatial
    transmission of influenza in the United States", not "influenza spreads")."""
    own, mech = p.method_purpose, p.mechanism.phrase.lower()
    if own is None or own.phrase.lower() in mech or mech in own.phrase.lower():
        return ""
    named = titled(own, titles or {}, 10) if grammar.form(own) == "noun" else ""
    return f"for work on {named}" if named else aim(own)


def _target(p: Pairing, b: str, titles: dict[str, str]) -> tuple[str, Facet | None]:
    """What Q1 asks the method to be used for, in the problem paper's words: its own
    question when its purpose is one (a clause, a verb phrase); for a topic, the claim the
    paper tests ("whether community structure affects crime ...") or the analysis it runs
    ("to estimate the local labour-market effects of robots"), else the field's work on it (named
    by the paper's title where it can be); with the facet whose sentence it was read from."""
    if grammar.form(p.purpose) in ("noun", "sentence") and not grammar.inverted(p.purpose.phrase):
        told = plan.told(p)
        claimed = told.claim()
        if claimed is not None:
            return f"in {b} to find out whether {claimed[0]}", claimed[1]
        aim = told.aim()
        if aim is not None:
            return f"in {b} to {aim.clause}", aim.facet
        named = titled(p.purpose, titles)
        if named and grammar.form(p.purpose) == "noun":  # the authors' own name for their topic
            return f"in {grammar.possessive(b)} work on {named}", None
    return grammar.asked(p.purpose, b), None


def _asking(p: Pairing, a: str, titles: dict[str, str]) -> str:
    """The question's opening: the method and what its own field uses it for ("Can a
    metapopulation model, which Public Health uses for work on influenza spreads,")."""
    mech, made = method_name(p.mechanism, titles), made_for(p, titles)
    return f"Can {mech}, which {a} uses {made}," if made else f"Can {mech}, a method from {a},"


def fields_used(p: Pairing, name: Callable[[str], str]) -> list[str]:
    """The names of the fields a proposal of this pairing takes something from, in order:
    the method's, the problem's, then any further field whose data Q5 names."""
    return list(dict.fromkeys([name(p.mechanism.field), name(p.purpose.field),
                               *(name(f.field) for f in plan.second_tests(p))]))


def question(p: Pairing, name: Callable[[str], str], titles: dict[str, str] | None = None) -> str:
    """Q1 as a researcher would ask it: where the method comes from, the bridge to the other
    field when one is known (the kind of data both work on, or a general tool), and the
    question; when the method works on no kind of data the other side states, Q1 says so
    rather than pretend a bridge."""
    a, b = name(p.mechanism.field), name(p.purpose.field)
    target = _target(p, b, titles or {})[0]
    also = [f"{f.phrase} from {name(f.field)}" for f in plan.second_tests(p)]
    second = f", with a second test on {' and '.join(also)}" if also else ""
    fit = p.fit
    if p.bridge == "unit":
        return _unit_question(p, a, b, titles or {})
    ask = f"{_asking(p, a, titles or {})} be used {target}{second}?"
    if fit is None:
        return ask
    if fit.shared and fit.as_images and fit.shared[0] == "images":
        # Not "both fields work with gridded fields": only the problem's side does (v10).
        return (f"The method works on images, and the {b} paper's {kinds.name('fields')} are images to "
                f"a vision model. {ask}")
    if fit.shared:
        return f"Both fields work with {fit.bridge()}. {ask}"
    if fit.generic in bridges.PURPOSE_BRIDGES:  # bridges of the method's purpose (bridges.py)
        # The opening already says what the method is made for, in its abstract's words: no
        # second, extracted aim ("for work on learning frameworks depend").
        asking = (_asking(p, a, titles or {}) if fit.generic == "papers"
                  else f"Can {method_name(p.mechanism, titles)}, a method from {a},")
        return f"{bridges.opening(p, a, b)} {bridges.ask(p, b, asking, target, made_for(p, titles))}"
    if fit.generic == "any data":
        return f"A general-purpose method can run on the data the {b} paper of this problem has. {ask}"
    if fit.plausible:  # a method of theory for a problem of theory (kinds.fit)
        return f"Both fields work with {kinds.name('theory')}. {ask}"
    needs = kinds.joined(kinds.name(k) for k in fit.method_kinds[:2])
    needs = f" ({needs})" if needs else ""
    return (f"This is a long shot: the problem's paper names no data of the kind the method below works "
            f"on{needs}. {_asking(p, a, titles or {})} be used {target}?")


def _data_said(p: Pairing, b: str) -> str:
    """The data Q5 applies the method to: the problem side's data in its paper's words, and
    when those words do not name the kind the method reads, that kind by its name first
    ("images from NLP / LLMs (its paper's data: yes/no questions)"): a knee
    X-ray network applied "to yes/no questions" read as a network that reads text."""
    phrase = p.target_eval.phrase
    kind = p.fit.shared[0] if p.fit is not None and p.fit.shared else ""
    if kind == "images" and p.fit.as_images:
        kind = "fields"
    if kind not in kinds.KINDS or kinds.KINDS[kind][1].search(phrase):
        return f"{phrase} from {b}"
    return f"{kinds.name(kind)} from {b} (its paper's data: {phrase})"


def _no_data_set(p: Pairing, b: str) -> str:
    """Why Q5 chooses its data first: no paper names a data set the method can take. Where
    the bridge is a kind of data the side's text names, that kind is said with its words:
    "the Gaia papers name no data" was false of a release of parallaxes and proper motions (v12)."""
    said = dict(p.fit.side_words) if p.fit is not None else {}
    kind = next((k for k in (p.fit.shared if p.fit is not None else ()) if said.get(k)), "")
    if not kind:
        return f"the {b} papers' abstracts name no data for it, so choosing the data comes first"
    # The kind as the side names it: its fields (read as images), its catalogue or records (read as tables).
    tabled = next((k for k in p.fit.side_kinds if k in kinds.TABLED), "") if kind == "tables" else ""
    what = kinds.name("fields" if kind == "images" and p.fit.as_images else tabled or kind)
    return (f"the {b} paper names {what} (“{said[kind]}”) but no data set of them for it, so choosing one "
            f"comes first")


def _kind_words(ks: tuple[str, ...]) -> str:
    return kinds.joined(kinds.name(k) for k in ks[:2]) or "no kind of data its abstract names"


def write(p: Pairing, name: Callable[[str], str], titles: dict[str, str]) -> Written:
    """The five answers of one pairing, in the stem leads of fiveq.py."""
    a, b = name(p.mechanism.field), name(p.purpose.field)
    if p.bridge == "unit":
        return _write_unit(p, a, b, titles)
    mech = method_name(p.mechanism, titles)
    q1 = question(p, name, titles)
    asked_from = tuple(f for f in (_target(p, b, titles)[1],) if f is not None and f != p.purpose)
    serves = bridges.why_cheaper(p, a, b) if bridges.on_model(p.fit) else f"whether a method from {a} can serve it"
    q2 = f"{_lead('q2')} the problem is one {b} has set itself: {_quote(p.purpose, titles)} The pairing asks {serves}."
    made = made_for(p, titles) or f"for problems of {a}"
    q3_grounds = [p.mechanism] + ([p.method_purpose] if p.method_purpose else [])
    if p.fit is not None and not p.fit.plausible:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made} and works on "
              f"{_kind_words(p.fit.method_kinds)}, while the {b} paper of the problem works on "
              f"{_kind_words(p.fit.side_kinds)}: it has nothing to run on in {b} until data of "
              f"its kind is found there.")
        q3_grounds += [f for f in (p.method_eval, p.target_eval) if f is not None]
    elif p.fit is not None and p.fit.generic in bridges.PURPOSE_BRIDGES:
        q3, more = bridges.hard(p, _lead("q3"), mech, a, b, made)
        q3_grounds += more
    elif p.method_eval is not None and p.target_eval is not None:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made}. There it was "
              f"tested on {p.method_eval.phrase}, while {b} works with {p.target_eval.phrase}, "
              f"so what the method assumes about its inputs may not hold.")
        q3_grounds += [p.method_eval, p.target_eval]
    else:
        q3 = (f"{_lead('q3')} the method, {mech}, was developed in {a} {made}, not for {b}: "
              f"what it assumes about its inputs has to be checked against the data of {b} "
              f"before it can be trusted.")
    told = plan.told(p)
    if p.gaps:
        q4 = f"{_lead('q4')} the papers name what is still missing: " + " ".join(
            _quote(g, titles) for g in p.gaps)
        q4_grounds = tuple(p.gaps)
    else:
        q4 = f"{_lead('q4')} {plan.already(p, b, titles, mech)}"
        q4_grounds = told.facets
    base = p.target_method
    baseline = plan.baseline(p, b, titles, mech)
    kept = plan.second_tests(p)
    second = "".join(f" As a second test of the same question, apply it to {f.phrase} from {name(f.field)}, "
                     f"data of the same kind." for f in kept) + plan.left_out(p, name)
    if not p.plausible:
        q5 = (f"{_lead('q5')} look first for data in {b} of the kind {mech} works on "
              f"({_kind_words(p.fit.method_kinds)}); the {b} paper of the problem names none, and until it is "
              f"found the method cannot be applied, measured or set beside that paper's own approach.{second}")
        q5_grounds = [p.mechanism, p.purpose] + ([base] if base else [])
    elif p.fit is not None and (p.fit.generic == "papers" or bridges.on_model(p.fit)):
        q5 = bridges.approach(p, _lead("q5"), mech, b, titles)
        # The literature reader takes the problem's paper, not its data: no evaluation to cite.
        data = p.target_eval if bridges.on_model(p.fit) else None
        q5_grounds = [p.mechanism, p.purpose] + [f for f in (base, data, p.method_eval) if f]
    elif p.target_eval is not None:
        judged = plan.measure(p, b, titles, measure_of(p.target_eval))
        q5 = (f"{_lead('q5')} apply {mech} to {_data_said(p, b)}. {plan.MEASURE_IS} {judged}. "
              f"{baseline}{second}")
        q5_grounds = [p.mechanism, p.target_eval] + ([base] if base else []) + list(kept) + list(told.facets)
    else:
        q5 = (f"{_lead('q5')} use {mech} {grammar.applied_to(p.purpose)} in {b}; {_no_data_set(p, b)}. "
              f"{plan.MEASURE_IS} {plan.measure(p, b, titles, '')}. {baseline}{second}")
        q5_grounds = [p.mechanism, p.purpose] + ([base] if base else []) + list(kept) + list(told.facets)
    answers = {"q1": q1, "q2": q2, "q3": q3, "q4": q4, "q5": q5}
    # The problem's facet before the method's own purpose: readers of the grounds take the
    # first purpose in Q1's as the problem (rubric.sides, revision's pairing_of).
    q1_grounds = (p.mechanism, p.purpose, *([p.method_purpose] if made_for(p, titles) else []), *asked_from,
                  *kept)
    grounds = {"q1": q1_grounds, "q2": (p.purpose,), "q3": tuple(q3_grounds),
               "q4": q4_grounds, "q5": tuple(dict.fromkeys(q5_grounds))}
    return Written(tuple((k, _tidy(v)) for k, v in answers.items()),
                   tuple((k, tuple(dict.fromkeys(v))) for k, v in grounds.items()), p)


# A title that opens on these, or has a verb of being or doing, is a sentence or a question,
# no name of a topic ("Attention Is All You Need", "How does the brain solve ...?").
_NOT_TOPIC = re.compile(r"^(?:how|why|what|when|where|which|who|do|does|can|is|are|should|towards?|"
                        r"using|on|a|an)\b|\b(?:is|are|was|were|do|does|can|need|needs)\b|\?", re.IGNORECASE)


def titled(f: Facet, titles: dict[str, str], most: int = 8) -> str:
    """What a paper studies by its title's head, when short and a name of a topic (the
    authors' own name for it, "robots and jobs"), else ""."""
    head = titles.get(f.paper_id, "").split(":")[0].strip().rstrip(".")
    ws = head.split()
    if not 2 <= len(ws) <= most or _NOT_TOPIC.search(head):
        return ""
    # A word keeps its capital where it is a name: written so inside the paper's sentence too,
    # or anywhere but first in a title written in sentence case ("... in the United States").
    names = set(re.findall(r"(?<=\S\s)[A-Z][\w-]*", f.sentence))
    later = [w for w in ws[1:] if w.lower() not in STOP]
    if later and sum(w[:1].isupper() for w in later) * 2 < len(later):
        names |= set(ws[1:])
    return " ".join(w if w[1:2].isupper() or w[1:].lower() != w[1:] or w in names else w.lower() for w in ws)


def unit_topic(f: Facet, titles: dict[str, str]) -> str:
    """What a paper studies, for a shared-unit question: its title's head (`titled`), else
    its purpose by its form."""
    return titled(f, titles) or grammar.topic(f)


def _unit_question(p: Pairing, a: str, b: str, titles: dict[str, str]) -> str:
    """Q1 of a shared-unit pairing: what each field studies, the units both study, and
    whether the first field's topic bears on the second's (no method is carried across)."""
    us = units.said(p.fit.units)
    first, second = unit_topic(p.method_purpose, titles), unit_topic(p.purpose, titles)
    # Asked as an association, not a cause: which of two topics drives the other is not
    # something the two papers' facets can say (a blind read found crime "causing" robots).
    return (f"{a} studies {first} and {b} studies {second}, both on {us}. Across the same {us}, "
            f"do differences in {first} go with differences in {second}?")


def _write_unit(p: Pairing, a: str, b: str, titles: dict[str, str]) -> Written:
    """The five answers of a shared-unit pairing: one field's topic as an exposure, the
    other's as the outcome, measured with the outcome side's data on the units both study.
    What is said is only what the four facets state, and that the link is untested."""
    us = units.said(p.fit.units)
    own, purp = p.method_purpose, p.purpose
    q1 = _unit_question(p, a, b, titles)
    q2 = (f"{_lead('q2')} the problem is one {b} has set itself: {_quote(purp, titles)} The question "
          f"asks whether what {a} studies, on the same {us}, is part of the answer.")
    unnamed = "data its paper does not name"
    a_data = f"{a} with {p.method_eval.phrase if p.method_eval is not None else unnamed}"
    b_data = f"{b} with {p.target_eval.phrase if p.target_eval is not None else unnamed}"
    q3 = (f"{_lead('q3')} the two fields observe {us} with different data and for different ends "
          f"({a_data}; {b_data}), so the two measures must first be matched on the same {us}, and a "
          f"link between them may come from something that drives both.")
    q3_grounds = [own] + [f for f in (p.method_eval, p.target_eval) if f is not None]
    told, carried = plan.told(p), f"a measure of {unit_topic(own, titles)}"
    if p.gaps:
        q4 = f"{_lead('q4')} the papers name what is still missing: " + " ".join(_quote(g, titles) for g in p.gaps)
    else:
        q4 = f"{_lead('q4')} {plan.already(p, b, titles, carried)}"
    base = p.target_method
    baseline = plan.baseline(p, b, titles, carried)
    exposure = f"a measure of {unit_topic(own, titles)} as the {a} paper describes it"
    measure, (_, outcome) = measure_of(p.target_eval), plan.outcome_of(p)
    judged = (f"what the {b} paper measures there ({measure})" if measure
              else outcome or f"the outcome the {b} paper studies")
    share = f"{plan.MEASURE_IS} the share of the differences in {judged} across the same {us} that it accounts for."
    if p.target_eval is not None:
        q5 = (f"{_lead('q5')} take {p.target_eval.phrase} from {b}, add for the same {us} {exposure}, "
              f"and test whether it accounts for differences in {judged}. {share} {baseline}")
        q5_grounds = [own, p.target_eval] + ([base] if base else []) + list(told.facets)
    else:
        q5 = (f"{_lead('q5')} find data in {b} on {us} for {unit_topic(purp, titles)}, add {exposure}, and "
              f"test whether it accounts for differences there; the {b} papers' abstracts name no data "
              f"for it, so choosing it comes first. {share} {baseline}")
        q5_grounds = [own, purp] + ([base] if base else []) + list(told.facets)
    answers = {"q1": q1, "q2": q2, "q3": q3, "q4": q4, "q5": q5}
    # The problem's facet first (readers of the grounds take the first purpose as the
    # problem, rubric.sides); no mechanism is a ground, for Q1 carries none across.
    grounds = {"q1": (purp, own), "q2": (purp,), "q3": tuple(q3_grounds),
               "q4": tuple(p.gaps) or told.facets, "q5": tuple(q5_grounds)}
    return Written(tuple((k, _tidy(v)) for k, v in answers.items()),
                   tuple((k, tuple(dict.fromkeys(v))) for k, v in grounds.items()), p)


def _tidy(text: str) -> str:
    """One space between words, no space before punctuation, one full stop at the end."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:.?!])", r"\1", text)
    return re.sub(r"([.?!”)])\.$", r"\1", text if text[-1:] in ".?!”)" else text + ".")
