"""Offline proposals whose five answers form one plan (issue 49, the blind reading v5): Q5
names a measure and a baseline taken from the problem paper's own sentences even when no
paper states either, Q4 without a stated gap says what the problem paper does, Q1 asks in
the problem paper's words, and a second test runs only on the shared kind of data."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rt_core.run.facets import kinds, problem, rubric
from rt_core.run.facets.extract import Facet
from rt_core.run.facets.kept import by_field, facets_of
from rt_core.run.facets.pair import Pairing, pairings
from rt_core.run.facets.write import write
from rt_core.types import Ground, Paper, Proposal


def _f(kind, phrase, sentence, pid, field, form="noun"):
    return Facet(kind, phrase, sentence, pid, field, form)


MECH = _f("mechanism", "metapopulation model", "The authors build a metapopulation model that links many US "
          "states through commuting flows.", "m1", "health", "found")
OWN = _f("purpose", "influenza spreads", "Influenza spreads between locations through human movement.", "m1",
         "health")
PURP = _f("purpose", "social-disorganisation theory", "Social-disorganisation theory holds that community "
          "structure affects crime through local social ties and control, but the intervening mechanisms had "
          "rarely been measured.", "c1", "crime")
DATA = _f("evaluation", "survey data from hundreds of British localities", "Using survey data from hundreds of "
          "British localities, the authors measure local friendship networks, control of teenage peer groups "
          "and organisational participation.", "c1", "crime")
TITLES = {"c1": "Community Structure and Crime: Testing Social-Disorganization Theory", "m1": "Flu"}
SHARED = kinds.Fit(True, ("networks",), method_kinds=("networks",), side_kinds=("networks",))


def _bare() -> Pairing:
    """A plausible pairing whose papers name no measure, no method to compare with and no gap."""
    return Pairing(MECH, PURP, OWN, None, DATA, None, (), fit=SHARED)


def _proposal(p: Pairing) -> Proposal:
    w = write(p, str.title, TITLES)
    return Proposal(**dict(w.answers), grounds={k: [Ground(f.paper_id, f.kind, f.sentence, f.field) for f in fs]
                                                for k, fs in w.grounds})


def test_without_a_stated_measure_baseline_or_gap_q5_still_plans_and_q4_says_what_the_problem_paper_does():
    a = dict(write(_bare(), str.title, TITLES).answers)
    # The measure: the outcome the problem's own sentence names, never a result.
    assert "The measure is how well it accounts for crime" in a["q5"]
    # The baseline: the problem paper's own analysis, found by its title, in its words.
    assert ("The baseline is the approach of the Crime paper (Community Structure and Crime: Testing "
            "Social-Disorganization Theory), in which the authors measure local friendship networks") in a["q5"]
    assert "with and without a metapopulation model" in a["q5"]
    for empty in ("name no measure", "no baseline is named", "what to measure comes first"):
        assert empty not in a["q5"]
    # Q4: what the problem paper does, and that no chosen paper brings the method to it.
    assert "the authors measure local friendship networks" in a["q4"]
    assert "None of the chosen papers brings a metapopulation model to this problem" in a["q4"]
    for claim in ("no one", "first", "never been"):
        assert claim not in a["q4"].lower()
    # Q1 asks the claim the problem's paper tests, not "help the study of".
    assert "be used in Crime to find out whether community structure affects crime" in a["q1"]
    assert "help the study of" not in a["q1"] and a["q1"].endswith("?")


def test_the_rubric_says_exactly_that_q5_names_a_measure_and_q4_no_stated_gap():
    r = rubric.check(_proposal(_bare()), "r-x", "health", ["health", "crime"], str.title, ("A far paper", 0.2),
                     SHARED)
    held = {c.key: c.holds for c in r.checks}
    assert held["measure"] is True and held["gap"] is False
    said = next(c.said for c in r.checks if c.key == "measure")
    assert "how well it accounts for crime" in said


def test_the_problem_papers_named_method_is_the_baseline():
    own_method = _f("mechanism", "multilevel models", "The authors fit multilevel models to the surveys.", "c1",
                    "crime")
    a = dict(write(dataclasses.replace(_bare(), target_method=own_method), str.title, TITLES).answers)
    assert ("The baseline is multilevel models, the method the Crime paper (Community Structure and Crime: "
            "Testing Social-Disorganization Theory) uses") in a["q5"]


def test_a_long_shot_compares_nothing_and_the_rubric_finds_no_measure():
    far = kinds.Fit(False, (), "", ("images",), ("text",))
    p = dataclasses.replace(_bare(), fit=far)
    a = dict(write(p, str.title, TITLES).answers)
    assert "cannot be applied" in a["q5"] and "The baseline is" not in a["q5"] and "The measure is" not in a["q5"]
    r = rubric.check(_proposal(p), "r-x", "health", ["health", "crime"], str.title, None, far)
    assert {c.key: c.holds for c in r.checks}["measure"] is False


IMAGES = _f("evaluation", "image tasks", "Human studies on text and image tasks show the explanations help.",
            "n1", "nlp")
TIES = _f("evaluation", "social network data of friendship ties", "On the social network data of friendship "
          "ties in schools the model reaches a lower error.", "s1", "sociology")


def test_a_general_tool_gets_no_second_test_and_q5_says_which_field_it_leaves_out():
    generic = kinds.Fit(True, (), "any data", (), ("places",))
    p = dataclasses.replace(_bare(), fit=generic, also=(IMAGES,))
    w = write(p, str.title, TITLES)
    a = dict(w.answers)
    assert "second test" not in a["q1"] and "second test" not in a["q5"]
    assert "The data of Nlp (image tasks) serves other questions than this one, so the proposal leaves it" in a["q5"]
    assert IMAGES not in dict(w.grounds)["q1"] + dict(w.grounds)["q5"]  # so the fields check says Nlp is unused


def test_data_of_the_shared_kind_is_still_a_second_test_of_the_same_question():
    p = dataclasses.replace(_bare(), also=(TIES, IMAGES))
    a = dict(write(p, str.title, TITLES).answers)
    assert "second test on social network data of friendship ties from Sociology" in a["q1"]
    assert "As a second test of the same question, apply it to social network data" in a["q5"]
    assert "image tasks" not in a["q1"] and "The data of Nlp (image tasks)" in a["q5"]


def test_a_revision_round_reads_no_gap_from_q4s_sentences_about_the_problem_paper():
    from rt_core.run.revision.facets import pairing_of

    p = _bare()
    back = pairing_of(_proposal(p), [MECH, PURP, OWN, DATA])
    assert back is not None and back.gaps == () and back.target_eval == DATA


def test_what_a_problem_paper_does_is_read_in_its_own_words():
    effect = _f("evaluation", "x", "Using settler mortality as an instrument, they find large effects of "
                "institutions on income per capita, with little role for geography.", "e1", "econ")
    assert problem.outcome(effect) == ("accounts for", "income per capita")
    aim = _f("purpose", "industrial robots", "Using industry-level data on the adoption of industrial robots, the "
             "authors estimate the local labour-market effects of robots between 1990 and 2007.", "e2", "econ")
    assert problem.outcome(aim) == ("estimates", "the local labour-market effects of robots between 1990 and 2007")
    follows = problem.doing(_f("purpose", "x", "Using Danish register data, this study follows school outcomes "
                                                "and offending up to age twenty.", "d1", "crime"))
    assert follows is not None and not follows.plural and follows.clause.startswith("follows school outcomes")
    # A finding is no analysis to compare with; a result word is no claim.
    assert problem.doing(_f("purpose", "x", "The authors show that the model wins.", "z", "f")) is None
    assert problem.claim(_f("purpose", "x", "A lower bound holds for all spaces.", "z", "f")) == ""


PAPERS = {p["id"]: p for p in json.loads((Path(__file__).resolve().parents[1] / "assets" / "community"
                                          / "papers.json").read_text("utf-8"))}


def test_on_the_bundled_papers_a_criminology_question_gets_crime_as_measure_and_its_paper_as_baseline():
    ids = ["doi:10.1073/pnas.1708856115", "doi:10.1086/229068"]
    papers = [Paper(i, PAPERS[i]["title"], abstract=PAPERS[i]["abstract"], fields=PAPERS[i]["fields"]) for i in ids]
    texts = {p.id: f"{p.title}. {p.abstract}" for p in papers}
    plans = pairings(by_field(papers, facets_of(papers)), None, texts=texts)
    best = next(p for p in plans.ranked if p.purpose.paper_id == ids[1])
    a = dict(write(best, str.title, {p.id: p.title for p in papers}).answers)
    assert "The measure is how well it accounts for crime" in a["q5"]
    assert "The baseline is the approach of the Criminology paper (Community Structure and Crime" in a["q5"]
    assert "find out whether community structure affects crime" in a["q1"]


def test_a_second_test_runs_on_the_kind_of_data_the_main_test_runs_on():
    """The method shares networks and time series with the problem's side, but the main test's
    data is a weekly series: the friendship ties (networks) test another question."""
    fit = kinds.Fit(True, ("networks", "series"), method_kinds=("networks", "series"),
                    side_kinds=("networks", "series"))
    weekly = _f("evaluation", "weekly counts of reported offences", "Using weekly counts of reported offences, "
                "the authors measure how crime rises after a shooting.", "c1", "crime")
    daily = _f("evaluation", "daily police records of crime", "On daily police records of crime the model "
               "forecasts where crime rises.", "h2", "policing")
    ties = _f("evaluation", "network data of ties among offenders", "On network data of ties among offenders "
              "the model predicts crime.", "s2", "sociology")
    p = dataclasses.replace(_bare(), fit=fit, target_eval=weekly, also=(ties, daily))
    a = dict(write(p, str.title, TITLES).answers)
    assert "second test on daily police records of crime from Policing" in a["q1"]
    assert "offenders" not in a["q1"] and "The data of Sociology (network data of ties among offenders)" in a["q5"]


def test_a_second_test_serves_the_same_question():
    """Data of the shared kind about something else (friendship in schools, for a question on
    crime) is no second test of the question."""
    pupils = _f("evaluation", "friendship network data of pupils", "On the friendship network data of pupils "
                "in schools the model reaches a lower error.", "s3", "sociology")
    a = dict(write(dataclasses.replace(_bare(), also=(pupils,)), str.title, TITLES).answers)
    assert "second test" not in a["q5"] and "The data of Sociology (friendship network data of pupils)" in a["q5"]


def test_an_estimate_is_judged_against_the_estimate_the_problem_paper_reports():
    robots = _f("purpose", "industrial robots", "Using industry-level data on the adoption of industrial robots, "
                "the authors estimate the local labour-market effects of robots between 1990 and 2007.", "e2", "econ")
    data = dataclasses.replace(robots, kind="evaluation", phrase="industry-level data on the adoption of robots")
    boost = _f("mechanism", "XGBoost", "XGBoost is a scalable tree boosting system.", "x1", "systems", "name")
    p = Pairing(boost, robots, None, None, data, None, (), fit=kinds.Fit(True, (), "any data", (), ("places",)))
    a = dict(write(p, str.title, {"e2": "Robots and Jobs: Evidence from US Labor Markets"}).answers)
    assert "be used in Econ to estimate the local labour-market effects of robots between 1990 and 2007?" in a["q1"]
    assert ("The measure is the agreement between its estimate of the local labour-market effects of robots "
            "between 1990 and 2007 and the one the Econ paper (Robots and Jobs: Evidence from US Labor Markets) "
            "reports") in a["q5"]


def test_a_topic_is_named_by_its_papers_title_where_the_phrase_says_less():
    harms = _f("purpose", "indirect harms", "The growth of imprisonment in the United States has prompted a large "
               "literature on the indirect harms of punishment.", "c2", "crime")
    p = Pairing(MECH, harms, OWN, None, None, None, (), fit=SHARED)
    titles = {"c2": "Collateral Consequences of Punishment: A Critical Review and Path Forward",
              "m1": "Forecasting the spatial transmission of influenza in the United States"}
    q1 = dict(write(p, str.title, titles).answers)["q1"]
    assert "be used in Crime's work on collateral consequences of punishment?" in q1
    assert "which Health uses for work on forecasting the spatial transmission of influenza in the United States" in q1
    # Without titles, the phrases of the sentences (with the "of ..." that follows the topic).
    bare = dict(write(p, str.title, {}).answers)["q1"]
    assert "Crime's work on indirect harms of punishment" in bare and "influenza spreads" in bare


def test_a_shared_unit_question_measures_the_outcome_the_problem_paper_names_against_its_approach():
    robots = _f("purpose", "robots and jobs", "The authors estimate the effects of robots on employment across US "
                "commuting zones.", "e3", "econ")
    disorder = _f("purpose", "disorder causes crime", "The broken-windows view says visible disorder causes crime.",
                  "c4", "crime")
    surveys = _f("evaluation", "resident surveys", "The authors measure physical and social disorder directly by "
                 "videotaping Chicago street segments, and combine this with resident surveys.", "c4", "crime")
    p = Pairing(robots, disorder, robots, None, surveys, None, (), fit=kinds.Fit(False, units=("places",)))
    a = dict(write(p, str.title, {"c4": "Systematic Social Observation of Public Spaces"}).answers)
    assert "find out whether" not in a["q1"] and "go with differences in" in a["q1"]  # still the unit question
    assert ("The measure is the share of the differences in crime across the same neighbourhoods and cities that "
            "it accounts for") in a["q5"]
    assert "The baseline is the approach of the Crime paper (Systematic Social Observation" in a["q5"]
    assert "the authors measure physical and social disorder directly" in a["q4"]


def test_the_measure_a_review_quotes_leaves_out_the_papers_titles_in_brackets():
    """A review quotes Q5's measure; cut with a paper's long title inside it, it ended mid-bracket
    ("... the Criminology paper (Collateral Consequences of Punishment: A ...")."""
    from rt_core.run.facets.rubric import measure_in
    q5 = ("We will use X on Y. The measure is its agreement with what the Criminology paper (Collateral "
          "Consequences of Punishment: A Critical Review and Path Forward) reports. The baseline is Z.")
    said = measure_in(q5)
    assert said == "its agreement with what the Criminology paper reports"
    assert "(" not in said and ")" not in said


def _bundled_best(ids: list[str]) -> tuple[Pairing, dict[str, str], list[Paper]]:
    papers = [Paper(i, PAPERS[i]["title"], abstract=PAPERS[i]["abstract"], fields=PAPERS[i]["fields"]) for i in ids]
    texts = {p.id: f"{p.title}. {p.abstract}" for p in papers}
    plans = pairings(by_field(papers, facets_of(papers)), None, texts=texts)
    best = next(p for p in plans.ranked if p.mechanism.paper_id == ids[0] and p.purpose.paper_id == ids[1])
    return best, dict(write(best, str.title, {p.id: p.title for p in papers}).answers), papers


def test_a_system_for_deep_learning_is_asked_to_make_the_other_sides_network_cheaper_at_its_accuracy():
    """TVM with the knee X-ray paper: Q1 says what each abstract says and asks for the same
    network cheaper, never for TVM to answer the pain question; Q5's measure is a systems
    measure at the paper's accuracy against the network as its paper runs it; the kind
    check names both abstracts' words. Planted: write.py without the bridges branch (Q1 fell
    back to "be used ... to find out" and Q5 to the data's agreement; the asserts fail)."""
    best, a, _ = _bundled_best(["arxiv:1802.04799", "doi:10.1038/s41591-020-01192-7"])
    assert best.fit.generic == "deep networks"
    assert "abstract says its method is made for “Deep Learning”" in a["q1"]
    assert "runs a neural network (its abstract names “deep network”)" in a["q1"]
    assert "faster or cheaper to train or run, at the accuracy it reports?" in a["q1"]
    assert "The measure is its" in a["q5"] and "at the accuracy the Public_Health paper" in a["q5"]
    assert "as its paper runs it" in a["q5"] and "layers, sizes" in a["q3"]
    said = rubric._kind_words(best.fit)
    assert "“Deep Learning”" in said[0] and "“deep network”" in said[1]


def test_a_reader_of_the_literature_drafts_for_the_problem_papers_question_judged_by_its_field():
    """ResearchAgent with the RADseq paper: Q1 asks it to draft research ideas for that
    paper's question (not to find out whether the markers resolve species), Q5 gives it the
    paper and has researchers of that field judge the drafts. Planted: write.py without the
    bridges branch (the asserts fail)."""
    best, a, _ = _bundled_best(["arxiv:2404.07738", "doi:10.1093/sysbio/syt032"])
    assert best.fit.generic == "papers"
    assert "works on “Scientific Literature”" in a["q1"] and "is itself such a paper" in a["q1"]
    assert "the Biology paper's question, to find out whether" in a["q1"]
    assert "be used" not in a["q1"]
    assert "as its starting paper" in a["q5"] and "how researchers of Biology rate what it drafts" in a["q5"]
    assert "is itself such a paper" in rubric._kind_words(best.fit)[1]


def test_the_review_of_a_bridge_of_the_methods_purpose_names_the_paper_or_network_q5_runs_on():
    """Not a clipped piece of Q5 ("that paper's own account can be seen."), which a review
    read as data. Planted: rubric.check without the bridges' data (the assert fails)."""
    cases = ((["arxiv:2404.07738", "doi:10.1093/sysbio/syt032"], "the Biology paper itself"),
             (["arxiv:1802.04799", "doi:10.1038/s41591-020-01192-7"], "the network the Public_Health paper runs"))
    for ids, said in cases:
        best, _, papers = _bundled_best(ids)
        r = rubric.check(_proposal(best), "r-x", best.purpose.field, [p.fields[0] for p in papers], str.title,
                         None, best.fit)
        data = next(c for c in r.checks if c.key == "data")
        assert data.holds and said in data.said, data


def test_a_mechanism_that_is_only_a_sentences_opening_is_called_by_its_papers_title():
    """Blind reading v7: "Can Distributed training usually splits work only along the batch, a
    method from ..." read as broken; the paper's title names what the method is about."""
    opening = _f("mechanism", "Distributed training usually splits work only along the batch",
                 "Distributed training usually splits work only along the batch (data parallelism).", "m1",
                 "health", "sentence")
    titles = {**TITLES, "m1": "Beyond Data and Model Parallelism for Deep Neural Networks"}
    a = dict(write(dataclasses.replace(_bare(), mechanism=opening), str.title, titles).answers)
    said = " ".join(a.values())
    assert "Distributed training usually splits" not in said
    assert "the method of “Beyond Data and Model Parallelism for Deep Neural Networks”" in a["q1"]


def test_q4_quotes_only_the_problem_papers_own_gap_and_never_q2s_sentence_again():
    """Blind reading v8: the method paper's "gap" (a finding about its own field) was quoted as
    what the other field's problem misses, and a Q4 repeated Q2's quote."""
    from rt_core.run.facets.extract import PaperFacets

    mech_gap = _f("gap", "knee pain disparities", "Standard grading misses much of the pain disparity.", "m1",
                  "health")
    own_gap = _f("gap", "mechanisms rarely measured", "The intervening mechanisms had rarely been measured.",
                 "c1", "crime")
    method_side = PaperFacets("m1", (MECH, OWN, mech_gap))
    problem_side = PaperFacets("c1", (PURP, DATA, own_gap))
    plans = pairings({"health": [method_side], "crime": [problem_side]}, texts={
        "m1": "A metapopulation model of commuting flows between places. " + mech_gap.sentence,
        "c1": PURP.sentence + " " + DATA.sentence})
    chosen = next(p for p in plans.ranked if p.mechanism.paper_id == "m1")
    assert chosen.gaps == (own_gap,)
    # The problem's gap stated in the very sentence Q2 quotes is not quoted twice.
    same = PaperFacets("c1", (PURP, DATA, dataclasses.replace(own_gap, sentence=PURP.sentence)))
    again = pairings({"health": [method_side], "crime": [same]}, texts={"m1": "x", "c1": PURP.sentence})
    assert all(not p.gaps for p in again.ranked)


def test_an_attention_method_on_the_other_sides_transformer_is_measured_by_its_own_cost():
    """Blind reading v8: MagicPIG on ClimaX's transformer "measures only agreement, not speed or
    memory". The method runs on the model, so Q5 measures its cost at that model's accuracy."""
    mech = _f("mechanism", "MagicPIG", "MagicPIG samples attention with LSH and cuts decoding memory.", "m1",
              "nlp", "name")
    model = _f("mechanism", "ClimaX", "The authors propose ClimaX, a transformer for weather and climate.", "c1",
               "climate", "name")
    fit = kinds.Fit(True, ("transformers",), method_kinds=("transformers",), side_kinds=("transformers",))
    a = dict(write(Pairing(mech, PURP, None, None, DATA, model, (), fit=fit), str.title, TITLES).answers)
    assert "The measure is its memory at the accuracy" in a["q5"]
    assert "agreement" not in a["q5"]
    assert "The baseline is ClimaX as its paper runs it" in a["q5"]


def test_q4_claims_nothing_of_a_problem_paper_whose_method_the_rules_did_not_find():
    """Blind reading v9: Q4 said the problem paper "names no method" of a paper whose title
    says it is a natural experiment; the rules had only missed it. Q4 now says only that the
    paper states the problem as Q2 quotes it. Planted: the old sentence (the test fails)."""
    a = dict(write(Pairing(MECH, PURP, OWN, None, None, None, (), fit=SHARED), str.title, TITLES).answers)
    assert "states the problem as Q2 quotes it" in a["q4"] and "names no method" not in a["q4"]
