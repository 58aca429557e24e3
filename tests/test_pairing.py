"""Plausible pairings (issue 49): a method of one field is paired with a problem of another
only when it can run on what that side works on, Q1 says the bridge (or that there is none),
and the rubric's "kind" check reports it. Measured on pairings of the bundled papers labelled
by hand (tests/fixtures/pairing_labels.json; its "rule" says how they were labelled)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from rt_core import community
from rt_core.config import LOCAL_EMBEDDER
from rt_core.models.embed import Embedder
from rt_core.run.facets import kinds, rubric
from rt_core.run.facets.extract import Facet
from rt_core.run.facets.kept import by_field, facets_of
from rt_core.run.facets.pair import pairings
from rt_core.run.facets.write import write
from rt_core.types import Paper
from tests.test_facets import _paper, _planted
from tests.test_novelty import shipped  # noqa: F401  (the shipped community in a store of its own)

LABELS = json.loads((Path(__file__).parent / "fixtures" / "pairing_labels.json").read_text("utf-8"))
PAPERS = {p["id"]: p for p in json.loads((Path(__file__).resolve().parents[1] / "assets" / "community"
                                          / "papers.json").read_text("utf-8"))}


def _text(pid: str) -> str:
    return f"{PAPERS[pid]['title']}. {PAPERS[pid]['abstract']}"


def auc(scores: list[float], labels: list[bool]) -> float:
    """The chance that a plausible pairing scores above an implausible one (ties count half)."""
    pos = [s for s, ok in zip(scores, labels, strict=True) if ok]
    neg = [s for s, ok in zip(scores, labels, strict=True) if not ok]
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def kind_scores(part: str) -> tuple[list[float], list[bool]]:
    rows = LABELS[part]
    fits = [kinds.fit(_text(r["mechanism_paper"]), r["mechanism"]["phrase"], _text(r["purpose_paper"]))
            for r in rows]
    return [f.value for f in fits], [r["plausible"] for r in rows]


def cosine_scores(part: str) -> list[float]:
    """What the ranking scored before (its largest part): MiniLM cosine of the method's
    sentence and the problem's."""
    rows = LABELS[part]
    emb = Embedder(LOCAL_EMBEDDER)
    a = np.asarray(emb.encode([r["mechanism"]["sentence"] for r in rows]))
    b = np.asarray(emb.encode([r["purpose"]["sentence"] for r in rows]))
    return [float(x @ y) for x, y in zip(a, b, strict=True)]


def test_the_labelled_set_is_large_and_mixed():
    for part, least in (("tuned", 40), ("held_out", 30)):
        rows = LABELS[part]
        assert len(rows) >= least and 5 <= sum(r["plausible"] for r in rows) < len(rows)
    assert "plausible" in LABELS["rule"]


@pytest.mark.parametrize("part,floor", [("tuned", 0.95), ("held_out", 0.8)])
def test_the_kind_of_data_separates_plausible_pairings_better_than_the_sentence_cosine(part, floor):
    scores, labels = kind_scores(part)
    by_kind, by_cosine = auc(scores, labels), auc(cosine_scores(part), labels)
    assert by_kind >= floor and by_kind > by_cosine + 0.1, (by_kind, by_cosine)


HOODS = ("nlp-criminology", "systems-biology", "math-criminology", "publichealth-nlp",
         "neuroscience-materials")


def _hood_pairings(store, preset_id: str):
    pre = community.preset(preset_id)
    papers = store.corpus.get_papers(pre["paper_ids"])
    chosen = {p.fields[0] for p in papers if p.fields}
    own = [p for r in pre["researcher_ids"] for p in store.corpus.publications(r)[:5]
           if p.fields and p.fields[0] in chosen]
    pool = list({p.id: p for p in [*papers, *own]}.values())
    texts = {p.id: f"{p.title}. {p.abstract or ''}" for p in pool}
    return pairings(by_field(pool, facets_of(pool)), Embedder(LOCAL_EMBEDDER), limit=1000, texts=texts,
                    paper_fields={p.id: tuple(p.fields) for p in pool})


def test_two_papers_that_share_a_field_are_never_paired(shipped):  # noqa: F811
    """systems-biology: its LLM-training paper is filed under NLP and systems; paired with a
    systems method (TVM) it joined no two fields and left biology out. Planted: `_apart`
    always true (the TVM pairing came back on top)."""
    fields = {p.id: p.fields for p in shipped.corpus.get_papers(list(PAPERS))}
    for hood in ("systems-biology", "systems-criminology-biology"):
        plans = _hood_pairings(shipped, hood)
        assert plans.ranked
        for p in plans.ranked:
            a, b = fields[p.mechanism.paper_id], fields[p.purpose.paper_id]
            assert a[0] not in b and b[0] not in a, (hood, p.mechanism.phrase, p.purpose.phrase)
        assert plans.ranked[0].purpose.field == "biology", (hood, plans.ranked[0].purpose.phrase)


def test_where_a_plausible_pairing_exists_the_top_picks_are_plausible(shipped):  # noqa: F811
    """Before this signal, 3 of these 5 case studies' top picks were labelled implausible
    (MagicPIG for soil bacteria, Adam for movers and stayers, knee X-rays for medical QA)."""
    label = {(r["mechanism_paper"], r["purpose_paper"]): r["plausible"]
             for r in LABELS["tuned"] + LABELS["held_out"]}
    for hood in HOODS:
        plans = _hood_pairings(shipped, hood)
        known = [label.get((p.mechanism.paper_id, p.purpose.paper_id)) for p in plans.ranked]
        assert any(known), hood  # the hood has a labelled plausible pairing
        assert known[0] is not False, (hood, plans.ranked[0].mechanism.phrase, plans.ranked[0].purpose.phrase)
        assert plans.ranked[0].plausible


# -- what a proposal and its reviews say of the bridge ------------------------------------------

HOOD3 = [
    _paper("c1", "criminology", "The authors test whether gun violence spreads between people like an "
           "infectious disease. Using a co-offending network built from arrest records, they fit an "
           "epidemic model. On Chicago arrest records the model predicted victims with higher accuracy.",
           "Contagion: gun violence in co-offending networks"),
    _paper("h1", "public_health", "How infections spread between cities is poorly understood. We use "
           "commuting flows between cities as a social network. On weekly case counts from surveillance "
           "data the forecasts reach lower error."),
    _paper("a1", "astronomy", "The aim is to map the dark matter of the Milky Way. We fit a "
           "kinematic model to stellar velocities. On Gaia astrometry data of proper motions the model "
           "reaches a low error."),
]


def _plans3():
    texts = {p.id: f"{p.title}. {p.abstract}" for p in HOOD3}
    return pairings(by_field(HOOD3, facets_of(HOOD3)), Embedder(LOCAL_EMBEDDER), texts=texts)


def test_a_network_method_goes_to_the_side_with_networks_and_q1_says_the_bridge():
    plans = _plans3()
    best = plans.pick(0)
    assert best.plausible and best.fit.shared == ("networks",)
    assert {best.mechanism.field, best.purpose.field} == {"criminology", "public_health"}
    q1 = dict(write(best, str.title, {}).answers)["q1"]
    assert "networks of people or places" in q1 and q1.endswith("?")
    # The implausible pairings (astronomy's kinematic model, any method for dark matter) rank last.
    assert all(not p.plausible for p in plans.ranked if "astronomy" in p.fields)
    assert [p.plausible for p in plans.ranked] == sorted((p.plausible for p in plans.ranked), reverse=True)


def _fit(plausible: bool) -> kinds.Fit:
    return kinds.Fit(True, ("text",)) if plausible else kinds.Fit(False, (), "", ("images",), ("text",))


def test_an_implausible_pairing_is_called_a_long_shot_and_its_review_says_why():
    mech = Facet("mechanism", "deep network on knee X-rays", "We train a deep network on knee X-rays.",
                 "p1", "public_health", "noun")
    purp = Facet("purpose", "human-like response biases", "Do language models show human-like response "
                 "biases?", "p2", "nlp", "noun")
    from rt_core.run.facets.pair import Pairing

    p = Pairing(mech, purp, fit=_fit(False))
    a = dict(write(p, str.title, {}).answers)
    assert "names no data of the kind the method below works on (images)." in a["q1"] and "long shot" in a["q1"]
    assert "images" in a["q3"] and "text" in a["q3"]
    assert "look first for data in Nlp of the kind" in a["q5"] and "apply deep" not in a["q5"]
    good = dict(write(dataclasses.replace(p, fit=_fit(True)), str.title, {}).answers)
    assert "Both fields work with text" in good["q1"] and "long shot" not in good["q1"]


def test_a_planted_proposal_gets_exactly_its_faults_said_with_the_kind_check():
    """The rubric test of test_facets.py, with the new check: an implausible fit adds exactly
    one fault, said once, and a plausible fit adds a strength."""
    hood = ["materials", "criminology", "economics"]
    bad = rubric.check(_planted(), "r-x", "materials", hood, str.title, ("A far paper", 0.2), _fit(False))
    assert {c.key for c in bad.checks if not c.holds} == {"fields", "measure", "gap", "kind"}
    good_s, bad_s = rubric.sections(bad, "Materials")
    assert len([x for x in bad_s.splitlines() if x.strip()]) == 4
    assert "images" in bad_s and "images" not in good_s
    ok = rubric.check(_planted(), "r-x", "materials", hood, str.title, ("A far paper", 0.2), _fit(True))
    assert {c.key for c in ok.checks if not c.holds} == {"fields", "measure", "gap"}
    assert "text" in rubric.sections(ok, "Materials")[0]
    assert ok.score == round(1 + 8 * 4 / 7)


def test_a_third_field_with_data_of_the_same_kind_is_a_second_test_named_in_q1_and_q5():
    # About infections, as the question is: data of the same kind on another subject is no
    # second test of this question (tests/test_facet_plan.py).
    extra = _paper("s1", "sociology", "Why friendships form is unclear. We survey pupils. On the social "
                   "network data of friendship ties in schools the model predicts infections with a lower error.")
    hood = [*HOOD3, extra]
    texts = {p.id: f"{p.title}. {p.abstract}" for p in hood}
    plans = pairings(by_field(hood, facets_of(hood)), Embedder(LOCAL_EMBEDDER), texts=texts)
    best = next(p for p in plans.ranked if p.also)
    a = dict(write(best, str.title, {}).answers)
    third = best.also[0].field.title()
    assert third in a["q1"] and third in a["q5"] and best.also[0].phrase in a["q5"]
    w = write(best, str.title, {})
    assert best.also[0] in dict(w.grounds)["q5"]  # kept as a ground, so the fields check counts it


def test_no_new_review_sentence_claims_a_result_or_a_fact_about_the_world():
    said = " ".join(s for k, v in rubric.SAY.items() if k[0] == "kind" for s in v)
    for claim in ("first", "novel", "will show", "results show", "proven", "works well"):
        assert claim not in said.lower()


def test_without_texts_the_facets_sentences_give_the_kinds():
    """A caller that passes no titles and abstracts still gets a fit (from the sentences)."""
    plans = pairings(by_field(HOOD3, facets_of(HOOD3)), None)
    assert all(p.fit is not None for p in plans.ranked)
    assert isinstance(HOOD3[0], Paper)


def test_a_revision_round_answers_a_failed_kind_check_with_a_plausible_pairing():
    from rt_core.run.revision import facets as revise_facets
    from rt_core.types import Ground, Proposal, Review

    plans = _plans3()
    worst = plans.ranked[-1]
    assert not worst.plausible
    w = write(worst, str.title, {})
    before = Proposal(**dict(w.answers), grounds={k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs]
                                                   for k, fs in w.grounds})
    failed = Review("r-x", "", "", 5, rubric={**{k: True for k in rubric.KEYS}, "kind": False})
    found = [f for pf in facets_of(HOOD3).values() for f in pf.facets]
    fields = ["criminology", "public_health", "astronomy"]
    after, changes = revise_facets.revised(before, [failed], plans, fields, str.title, {}, found)
    assert after.q1 != before.q1 and "long shot" not in after.q1
    assert rubric.fit_of(after, plans).plausible
    assert any("works on nothing the problem" in c.answers for c in changes if c.question == "q1")


def test_a_further_field_the_method_cannot_serve_is_named_as_left_out_in_q5():
    plans = _plans3()
    best = plans.pick(0)
    assert best.unfit == ("astronomy",) and not best.also
    q5 = dict(write(best, str.title, {}).answers)["q5"]
    assert "The Astronomy papers state no data this method could run on" in q5


def test_a_missing_field_is_not_bought_with_an_implausible_pairing():
    """HOOD3's astronomy has nothing a network method can run on: a review that finds the
    astronomy facets unused leaves the plausible proposal as it is."""
    from rt_core.run.revision import facets as revise_facets
    from rt_core.types import Ground, Proposal, Review

    plans = _plans3()
    w = write(plans.pick(0), str.title, {})
    before = Proposal(**dict(w.answers), grounds={k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs]
                                                   for k, fs in w.grounds})
    failed = Review("r-x", "", "", 5, rubric={**{k: True for k in rubric.KEYS}, "fields": False})
    found = [f for pf in facets_of(HOOD3).values() for f in pf.facets]
    after, _ = revise_facets.revised(before, [failed], plans, ["criminology", "public_health", "astronomy"],
                                     str.title, {}, found)
    assert rubric.fit_of(after, plans).plausible


# -- issue 49, blind reading v5: false bridges and new ones -------------------------------------

def test_the_pairings_labelled_for_the_false_bridges_and_random_pairs_are_told_apart():
    """'new': pairings a blind reader found to be puns (periodic images, boosting for any
    data, DFT against theorems, knee X-rays against projective space) and the bridges
    added for them (a literature read as text, another field's transformer); 'random':
    pairs drawn at random, all implausible. The old rule scored 'new' at AUC 0.5 and made
    a false bridge of one random pair (XGBoost for a text benchmark). Planted: the old
    kinds.py (both asserts fail)."""
    scores, labels = kind_scores("new")
    assert len(labels) >= 10 and auc(scores, labels) >= 0.95, auc(scores, labels)
    rows = LABELS["random"]
    assert len(rows) >= 10 and not any(r["plausible"] for r in rows)
    false = [r["note"] for r in rows if kinds.fit(_text(r["mechanism_paper"]), r["mechanism"]["phrase"],
                                                  _text(r["purpose_paper"])).plausible]
    assert false == []


def test_a_text_bridge_to_a_review_never_sends_the_method_to_the_sides_survey_data():
    """Criminology's review has a literature (text) but no data; its survey paper has data
    a text method cannot read. Q5 then names no data rather than the survey's. Planted:
    `side_data.bridged_eval` falling back to the side's first usable evaluation."""
    hood = [
        _paper("n1", "nlp", "To study when language models produce false content, we introduce a "
               "benchmark of hallucinated text. On question answering data the models reach low accuracy.",
               "HaluCheck: a benchmark of hallucinated text"),
        _paper("c1", "criminology", "The growth of imprisonment has prompted a large literature on the "
               "indirect harms of punishment. This review summarises what is known about them."),
        _paper("c2", "criminology", "Why does violence persist in some neighbourhoods? Using Chicago survey "
               "data of residents, we measure legal cynicism. On the survey data the model explains more "
               "variance."),
    ]
    texts = {p.id: f"{p.title}. {p.abstract}" for p in hood}
    plans = pairings(by_field(hood, facets_of(hood)), None, texts=texts)
    text = [p for p in plans.ranked if p.plausible and p.fit.shared == ("text",)]
    assert text and all(p.purpose.paper_id == "c1" for p in text)
    assert all(p.target_eval is None or p.target_eval.paper_id != "c2" for p in text)


def _researcher_pairings(store, researchers: list[str]):
    """The pairings a run of these researchers makes from their own papers."""
    pool = [p for r in researchers for p in store.corpus.publications(r)[:5] if p.fields]
    pool = list({p.id: p for p in pool}.values())
    texts = {p.id: f"{p.title}. {p.abstract or ''}" for p in pool}
    return pairings(by_field(pool, facets_of(pool)), Embedder(LOCAL_EMBEDDER), limit=1000, texts=texts,
                    paper_fields={p.id: tuple(p.fields) for p in pool})


def test_a_tabular_learner_goes_to_the_side_with_tables_and_never_claims_any_kind(shipped):  # noqa: F811
    """XGBoost with a public-health neighbourhood: the risk-score algorithm's paper, not the
    knee X-rays; no pairing calls it a general tool. Planted: boosting back in ANY_DATA
    (the knee-X-ray pairing came back as "any data")."""
    plans = _researcher_pairings(shipped, ["r-obermeyer-ziad", "r-chen-tianqi"])
    best = plans.pick(0)
    assert best.plausible and best.fit.shared == ("tables",)
    assert "Dissecting racial bias" in PAPERS[best.purpose.paper_id]["title"]
    assert not any(p.fit.generic == "any data" for p in plans.ranked if p.fit is not None)
    assert "tables of records and variables" in dict(write(best, str.title, {}).answers)["q1"]


def test_the_pairings_labelled_for_the_two_bridges_of_a_methods_purpose_are_told_apart():
    """'bridges' (bridges7): systems for deep learning on another field's network, readers of
    the scientific literature on another field's paper, and the puns beside them (speculative
    decoding for a crystal network, a pipeline that only checks novelty against the
    literature), labelled before they were measured. Before the two rules AUC 0.49 with 7
    plausible pairings missed; the one miss left is The AI Scientist for a literature review,
    which the older text bridge (kinds6) takes as text. Planted: both rules removed (AUC 0.49)."""
    scores, labels = kind_scores("bridges")
    assert len(labels) >= 10 and sum(labels) >= 5 and auc(scores, labels) >= 0.85, auc(scores, labels)
    rows = LABELS["bridges"]
    missed = [r["note"] for r, s in zip(rows, scores, strict=True) if r["plausible"] and not s]
    assert not missed, missed
