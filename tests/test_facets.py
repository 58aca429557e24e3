"""Facets from the papers, proposals written from pairings of them, and reviews by rubric:
what a base model's run says is what the papers state, and what a review says holds."""
from __future__ import annotations

import dataclasses

import pytest

from rt_core.config import LOCAL_EMBEDDER
from rt_core.models.embed import Embedder
from rt_core.run.facets import extract as X
from rt_core.run.facets import rubric
from rt_core.run.facets.kept import by_field, facets_of
from rt_core.run.facets.pair import pairings
from rt_core.run.facets.write import write
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import stem_facets
from rt_core.types import Ground, Paper, Proposal, RunConfig, RunRequest
from tests.facet_measure import measure, precision, recall

# -- finding facets -----------------------------------------------------------------------------


def test_facets_are_found_precisely_on_the_labelled_papers():
    """Cue words, evaluation and gap patterns and sentence position, the kept method:
    measured on 20 hand-labelled abstracts (95% of the facets it names are right, 95% of the
    labelled ones found), on 11 labelled after the first rules were fixed (88%, 85%) and on
    22 drawn at random and labelled before the evaluation and gap patterns (87%, 84%)."""
    tuned, held, drawn = measure(), measure(part="held_out"), measure(part="held_out_2")
    assert precision(tuned) >= 0.9 and recall(tuned) >= 0.9, tuned
    assert precision(held) >= 0.8 and recall(held) >= 0.8, held
    assert precision(drawn) >= 0.8 and recall(drawn) >= 0.8, drawn


def test_the_kept_method_names_facets_more_precisely_than_the_other_cheap_ones():
    """Why no MiniLM in choosing sentences: adding it found more facets, fewer of them right;
    position alone or cue words alone are less precise, or find no data and no gap."""
    kept = measure()
    e = Embedder(LOCAL_EMBEDDER)
    for other in (measure(embedder=e), measure(use_cues=False), measure(use_position=False)):
        assert precision(kept) > precision(other)
    position_only = measure(use_cues=False)
    assert position_only["gap"]["made"] == 0 and recall(kept) > recall(position_only)


def test_a_paper_without_an_abstract_has_no_facets_and_says_why():
    found = X.extract(Paper("p-empty", "An empty record", abstract=""))
    assert found.facets == () and "has no abstract" in found.note and "An empty record" in found.note


def test_every_facet_is_a_sentence_of_its_paper_and_its_phrase_comes_from_it_or_the_title():
    import json
    from pathlib import Path

    papers = json.loads((Path(__file__).resolve().parents[1] / "assets/community/papers.json").read_text())
    for d in papers[:40]:
        p = Paper.from_dict(d)
        for f in X.extract(p).facets:
            assert f.sentence in " ".join(p.abstract.split()), (p.id, f)
            name = X.name_of(p.title)
            if f.form == "none":  # an evaluation naming no data: the sentence alone
                assert f.kind == "evaluation" and f.phrase == ""
            elif f.form != "name":
                assert f.phrase.split()[0].lower().strip("(,") in (f.sentence + " " + p.title).lower(), f
            else:
                assert f.phrase.startswith(name)


def test_facets_are_found_once_and_kept_in_the_store(store):
    paper = Paper("p-1", "A method", abstract="We propose a graph network for crystals. "
                  "On formation energy data it reaches low error.", fields=["materials"])
    store.corpus.upsert_papers([paper])
    first = facets_of([paper], store)
    assert store.facets.get(["p-1"], X.VERSION)["p-1"] == first["p-1"].to_dict()
    # Kept: a second read does not find them again (a planted change in the store shows).
    doc = dict(first["p-1"].to_dict(), note="kept")
    store.facets.put(X.VERSION, {"p-1": doc})
    assert facets_of([paper], store)["p-1"].note == "kept"
    assert store.facets.get(["p-1"], "another-version") == {}


# -- pairings and proposals ---------------------------------------------------------------------

def _paper(pid, field, abstract, title="A study"):
    return Paper(pid, title, abstract=abstract, fields=[field])


HOOD = [
    _paper("m1", "materials", "Predicting crystal properties is slow with simulations. We propose a "
           "crystal graph network that learns from atoms and bonds. On density functional theory data "
           "it reaches low error on formation energy.", "CGNet: crystal graph networks"),
    _paper("m2", "materials", "Stable materials are hard to find. We introduce a diffusion model for "
           "crystal generation. Generated structures are more often stable on the benchmark."),
    _paper("c1", "criminology", "The authors test whether gun violence spreads between people like an "
           "infectious disease. Using a co-offending network built from arrest records, they fit an "
           "epidemic model. On Chicago arrest records the model predicted victims with higher accuracy."),
    _paper("c2", "criminology", "Crime concentrates in few places. However, little is known about why "
           "hot spots persist. We use survey data from city neighbourhoods to measure collective efficacy."),
]


def _pairs():
    found = facets_of(HOOD)
    return pairings(by_field(HOOD, found), Embedder(LOCAL_EMBEDDER))


def test_each_candidate_takes_a_different_pairing_and_directions_alternate():
    plans = _pairs()
    picks = [plans.pick(i) for i in range(4)]
    assert len({(p.mechanism.paper_id, p.purpose.paper_id) for p in picks}) == 4
    assert picks[0].fields != picks[1].fields  # which field lends the method alternates
    assert all(p.mechanism.field != p.purpose.field for p in picks)


def test_a_written_proposal_keeps_the_sentences_it_came_from():
    plans = _pairs()
    titles = {p.id: p.title for p in HOOD}
    w = write(plans.pick(0), lambda f: f.title(), titles)
    abstracts = " ".join(p.abstract for p in HOOD)
    answers = dict(w.answers)
    assert answers["q1"].endswith("?") and answers["q1"].count("?") == 1
    for key, facets in w.grounds:
        for f in facets:
            assert f.sentence in abstracts
        if key in ("q2", "q4"):  # quoted answers quote their sentences word for word
            assert all(f.sentence in answers[key] for f in facets)
    # Q1 joins one field's mechanism with the other's purpose, naming both fields.
    p = plans.pick(0)
    assert p.mechanism.phrase in answers["q1"] and p.mechanism.field.title() in answers["q1"]
    assert p.purpose.field.title() in answers["q1"]


def test_papers_that_share_no_usable_facet_give_no_pairing_and_one_note():
    lone = [_paper("a", "materials", "We propose a graph network."), Paper("b", "Untitled", fields=["nlp"])]
    plans = pairings(by_field(lone, facets_of(lone)), None, name=lambda f: f.upper())
    assert not plans and "NLP" in plans.note


# -- reviews by rubric ---------------------------------------------------------------------------

def _planted() -> Proposal:
    """A proposal lacking a measure, a gap and any facet of the third field (economics); it
    has data of the other side in Q5 and says in Q3 why the carry-over is hard."""
    mech = Ground("m1", "mechanism", "We propose a crystal graph network.", "materials")
    purp = Ground("c1", "purpose", "The authors test whether gun violence spreads.", "criminology")
    data = Ground("c1", "evaluation", "On Chicago arrest records the model predicted victims.", "criminology")
    return Proposal(
        q1="How can a crystal graph network, a method from Materials, help find out whether gun "
           "violence spreads in Criminology?",
        q2="This matters because criminology asks it.",
        q3="It is hard because the method was made for crystals, not for Criminology.",
        q4="Earlier work has not solved it because no one joined them.",
        q5="We will apply a crystal graph network to Chicago arrest records from Criminology.",
        grounds={"q1": [mech, purp], "q2": [purp], "q3": [mech], "q4": [], "q5": [mech, data]})


def test_a_planted_proposal_gets_exactly_its_three_faults_said_and_nothing_else():
    hood = ["materials", "criminology", "economics"]
    r = rubric.check(_planted(), "r-x", "materials", hood, str.title, ("A far paper", 0.2))
    failed = {c.key for c in r.checks if not c.holds}
    assert failed == {"fields", "measure", "gap"}
    good, bad = rubric.sections(r, "Materials")
    lines = [line for line in bad.splitlines() if line.strip()]
    assert len(lines) == 3
    assert "Economics" in bad and "measure" in bad.lower() and "gap" in bad.lower()
    assert "Economics" not in good and "gap" not in good.lower() and "measure" not in good.lower()
    assert r.score == round(1 + 8 * 3 / 6) and "3 of 6 checks hold" in r.basis


def test_a_measure_word_in_the_baseline_sentence_is_no_measure():
    """Blind reading (2026-12-06): Q5 said the papers name no measure, then "The baseline is
    likelihood framework", and every reviewer wrote "There is a measure ...: likelihood"."""
    p = dataclasses.replace(_planted(), q5=(
        "We will apply a crystal graph network to Chicago arrest records from Criminology; the "
        "Criminology papers name no measure for it, so what to measure comes first. The baseline "
        "is likelihood framework, the method the Criminology paper uses."))
    r = rubric.check(p, "r-x", "materials", ["materials", "criminology"], str.title, ("A far paper", 0.2))
    assert {c.key: c.holds for c in r.checks}["measure"] is False
    measured = dataclasses.replace(p, q5=p.q5.replace("the Criminology papers name no measure for "
                                                      "it, so what to measure comes first",
                                                      "measure its error rate there"))
    r = rubric.check(measured, "r-x", "materials", ["materials", "criminology"], str.title, ("A far paper", 0.2))
    assert {c.key: c.holds for c in r.checks}["measure"] is True


def test_no_review_sentence_claims_a_result_a_first_or_a_fact_about_the_world():
    said = " ".join(s for s in rubric.SAY.values() for s in s) + " ".join(rubric.SUMMARY.values())
    for claim in ("first", "novel", "will show", "results show", "powerful", "high quality", "%"):
        assert claim not in said.lower()


def test_the_meta_review_counts_reviewers_per_check():
    hood = ["materials", "criminology"]
    close = rubric.check(_planted(), "r-a", "materials", hood, str.title, ("A close paper", 0.9))
    far = [rubric.check(_planted(), rid, "criminology", hood, str.title, ("A far paper", 0.3))
           for rid in ("r-b", "r-c")]
    found = {r.reviewer_id: {c.key: c.holds for c in r.checks} for r in [close, *far]}
    good, bad = rubric.agreement(found)
    assert "No paper the reviewers compared reaches cosine 0.75 with Q1 (2 of 3 reviewers)." in good
    assert "Q1 is close to a paper a reviewer compared it with (1 of 3 reviewers)." in bad
    assert "Q5 names no measure (3 of 3 reviewers)." in bad


# -- a base model's run ------------------------------------------------------------------------

def _stem_request(**cfg) -> RunRequest:
    base = {"model": "scripted/base", "prompt_style": "stem", "researcher_ids": ["r-ada", "r-nia"],
            "paper_ids": ["p-gaia", "p-spectra", "p-llm", "p-agents"], "num_reviewers": 2}
    return RunRequest(RunConfig(**{**base, **cfg}), max_retries=0)


def test_a_base_model_run_writes_from_facets_and_reviews_by_rubric(community, scripted):
    run_ = Simulation(_stem_request(), community).run_sync()
    assert run_.status == "done", run_.errors
    p = run_.proposal
    abstracts = " ".join(" ".join(x.abstract.split()) for x in community.corpus.search_papers("", limit=100))
    assert p.grounds and all(g.sentence in abstracts for gs in p.grounds.values() for g in gs)
    assert {g.field for g in p.grounds["q1"]} == {"astronomy", "nlp"}
    assert run_.reviews and all(r.rubric and r.basis.startswith(f"Score {r.score} from the rubric")
                                for r in run_.reviews)
    assert "reviewers)" in run_.meta_review.strengths + run_.meta_review.weaknesses
    # The papers a proposal was written from are cited in its provenance.
    cited = {s.id for s in run_.provenance.answers["q1"] if s.cited}
    assert {g.paper_id for g in p.grounds["q1"]} <= cited


def test_a_neighbourhood_without_usable_facets_says_so_once_and_still_finishes(community, scripted):
    scripted.responder = lambda messages, params: " 6" if "score" in messages[-1]["content"][-80:].lower() \
        else " and compare both with careful measurements."
    community.corpus.upsert_papers([Paper("p-bare", "A record without an abstract", fields=["criminology"])])
    run_ = Simulation(_stem_request(paper_ids=["p-gaia", "p-bare"], researcher_ids=["r-ada"]),
                      community).run_sync()
    assert run_.status == "done", run_.errors
    said = [n for n in run_.notes if "no abstract" in n]
    assert len(said) == 1 and "A record without an abstract" in said[0]
    assert run_.proposal is not None and not run_.proposal.grounds  # written by stems instead


@pytest.mark.parametrize("index", [0, 1, 2])
def test_candidates_of_a_brainstorm_are_written_from_different_pairings(index):
    g = type("G", (), {})()  # the parts of a Grounding `planned` reads
    plans = _pairs()
    g.embedder, g.store, g.papers, g.pairings, g.name, g.facet_pool = object(), None, HOOD, plans, str.title, []
    ctx = type("C", (), {"client": type("K", (), {"notes": []})()})()
    mine = stem_facets.planned(ctx, g, index=index)
    other = stem_facets.planned(ctx, g, index=index + 1)
    assert mine.q1 != other.q1


# -- wording (issue 49, second pass) -------------------------------------------------------------

def test_a_survey_or_instrument_is_no_method_and_a_stated_method_is():
    from rt_core.run.facets.extract import Facet
    from rt_core.run.facets.pair import methodness

    lsst = Facet("mechanism", "LSST", "The overview describes the telescope, camera, data management "
                 "system and survey strategy.", "p", "astronomy", "name")
    net = Facet("mechanism", "CGNet", "We propose a crystal graph network that learns from atoms.",
                "p", "materials", "name")
    against = Facet("mechanism", "against the much more precise Gaia astrometry", "Using it against "
                    "the much more precise Gaia astrometry.", "p", "astronomy", "found")
    bench = Facet("mechanism", "HaluEval", "We introduce HaluEval, a large-scale benchmark of "
                  "generated and annotated hallucinated samples.", "p", "nlp", "name")
    assert methodness(lsst) < 0 and methodness(against) < 0 and methodness(bench) < 0
    halu = Facet("mechanism", "HaluEval", "Hallucinated samples are created by a sample-then-filter "
                 "procedure and then checked by people.", "p", "nlp", "name")
    assert methodness(halu) < 0 and methodness(net) > 0
    assert X._strip_article("choose a network architecture") == "network architecture"


def test_a_clause_stops_before_a_second_clause_so_no_phrase_ends_broken():
    s = ("The authors test how well its units predict recordings in areas V4 and IT and how closely "
         "the model matches behaviour.")
    phrase, form = X.cut_phrase("purpose", s)
    assert form == "clause" and phrase.startswith("how well its units predict recordings in areas V4")
    assert "closely" not in phrase and not phrase.endswith(" and")


def test_q1_reads_as_a_question_and_q5_names_data_measure_and_baseline_unless_a_long_shot():
    plans = _pairs()
    titles = {p.id: p.title for p in HOOD}
    for i in range(4):
        p = plans.pick(i)
        a = dict(write(p, lambda f: f.title(), titles).answers)
        assert a["q1"].endswith("?") and " be used " in a["q1"] and " and how" not in a["q1"]
        assert "help the study of" not in a["q1"]
        # Both fields named, the method's first (where it comes from), then the problem's.
        mech_at, purp_at = (a["q1"].find(f.title()) for f in p.fields)
        assert 0 <= mech_at < purp_at
        if not p.plausible:  # no data of the method's kind on the other side: Q5 says so, and compares nothing
            assert "look first for data" in a["q5"] and "The baseline is" not in a["q5"]
            continue
        # A plausible plan always names a measure and a baseline (issue 49, plan6).
        assert "The measure is" in a["q5"] and "The baseline is" in a["q5"]
        if p.target_method is not None:
            assert p.target_method.phrase in a["q5"].split("The baseline is", 1)[1]
        if p.target_eval is not None:
            assert p.target_eval.phrase in a["q5"]
