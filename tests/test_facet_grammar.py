"""The grammar of facet phrases in the proposal templates (issue 49): a phrase is said by its
form (a verb phrase, a clause, a noun phrase), read from the phrase and its sentence, so
none of the broken joins a blind reading found comes back."""
from __future__ import annotations

import pytest

from rt_core.run.facets import grammar
from rt_core.run.facets.extract import Facet
from rt_core.run.facets.pair import Pairing
from rt_core.run.facets.write import write


def _f(kind, phrase, sentence, form="noun", pid="p1", field="f1"):
    return Facet(kind, phrase, sentence, pid, field, form)


# Phrases of the current outputs, the sentence each was cut from, and what was said.
BROKEN = [
    (_f("purpose", "select patients", "Health systems use commercial algorithms to select patients "
        "for extra care management."), "the study of select patients"),
    (_f("purpose", "answer factual questions", "A training-free way to answer factual questions with "
        "a large language model."), "the study of answer factual questions"),
    (_f("purpose", "gaia data release", "Gaia data release 3 gives positions of stars."),
     "the study of gaia data release"),
    (_f("purpose", "why are some countries much richer than others", "We ask why are some countries "
        "much richer than others.", "clause"), "to why are some countries"),
    (_f("purpose", "asks yes/no questions", "BoolQ asks yes/no questions about a passage.", "verb"),
     "to asks yes/no questions"),
]


@pytest.mark.parametrize("purpose,broken", BROKEN)
def test_a_purpose_is_said_by_its_form_in_q1_and_q5(purpose, broken):
    mech = _f("mechanism", "evolutionary game theory", "We use evolutionary game theory.", pid="m1",
              field="f2")
    a = dict(write(Pairing(mech, purpose), str.title, {}).answers)
    for key in ("q1", "q5"):
        assert broken not in a[key], (key, a[key])
        assert " help asks" not in a[key] and " to asks" not in a[key]


def test_each_form_reads_as_english():
    sel, ans, gaia, why, asks = (b[0] for b in BROKEN)
    assert grammar.form(sel) == "verb" and grammar.asked(sel, "Health") == "in Health to select patients"
    assert grammar.applied_to(ans) == "to answer factual questions"
    assert grammar.asked(gaia, "Astronomy") == "in Astronomy's work on the gaia data release"
    assert grammar.asked(why, "Economics").startswith("in Economics to answer the question why are")
    assert grammar.asked(gaia, "Economics") == "in Economics' work on the gaia data release"
    assert grammar.applied_to(asks) == "to ask yes/no questions"
    # A noun phrase whose first word merely could be a verb stays a noun phrase.
    data = _f("purpose", "survey data of residents", "The survey data of residents is sparse.")
    assert grammar.form(data) == "noun"
    # A list's "and" joins nouns: "dark matter" is no verb phrase (the LSST case study's Q1
    # asked "to dark matter"); a verb after "and" shows its ending.
    dark = _f("purpose", "dark matter", "Four themes, dark energy and dark matter, drive the design.")
    assert grammar.form(dark) == "noun" and "to dark matter" not in grammar.asked(dark, "Astronomy")
    picks = _f("purpose", "selects patients", "The system scores records and selects patients for care.")
    assert grammar.form(picks) == "verb"


def test_a_method_and_its_own_aim_are_said_by_their_forms():
    mech = _f("mechanism", "broader framework", "Within a broader framework we bound entropy.", "found",
              "m1", "maths")
    own = _f("purpose", "survey Fisher information", "We survey Fisher information and its uses.",
             pid="m1", field="maths")
    purp = _f("purpose", "ventral-stream responses", "Ventral-stream responses are hard to predict.",
              pid="n1", field="neuro")
    q1 = dict(write(Pairing(mech, purp, own), str.title, {}).answers)["q1"]
    assert "studies survey Fisher information" not in q1
    assert "a broader framework, which Maths uses to survey Fisher information" in q1
    knee = _f("mechanism", "deep network on knee X-rays", "We train a deep network on knee X-rays.")
    assert grammar.with_article(knee.phrase) == "a deep network on knee X-rays"
    assert grammar.with_article("industrial robots") == "industrial robots"
    assert grammar.with_article("ClimaX (a foundation model)") == "ClimaX (a foundation model)"
    assert grammar.base_verb("studies movers") == "study movers"


def test_a_cut_relative_clause_leaves_no_participle_at_a_noun_phrases_end():
    trained = _f("purpose", "word embeddings trained", "We study word embeddings trained on abstracts.")
    assert grammar.asked(trained, "Materials") == "in Materials' work on word embeddings"
    assert grammar.noun_part("supervised networks") == "supervised networks"
