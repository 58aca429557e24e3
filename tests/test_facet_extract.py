"""Issue 49's second extraction pass: evaluation and gap found by patterns, measured on
abstracts labelled before the rules changed; facets recomputed when the rules change; and
bad input (papers without an abstract) said in one sentence, on the run and the command line."""
from __future__ import annotations

import json

import pytest

from rt_core.__main__ import main
from rt_core.models import registry
from rt_core.run.facets import extract as X
from rt_core.run.facets.kept import facets_of, one_note
from rt_core.text import sentences
from rt_core.types import Paper
from tests.facet_measure import measure


def _sum(*results: dict) -> dict[str, dict]:
    return {k: {n: sum(r[k][n] for r in results) for n in ("made", "right", "labelled", "found")}
            for k in X.KINDS}


def test_evaluation_and_gap_are_found_precisely_on_the_papers_labelled_after_the_rules():
    """Both held-out parts (33 abstracts): before this pass 13 of the 20 evaluations named
    were right (13 of 24 labelled found) and 1 of 4 gaps (1 of 13); the patterns name 21 of
    25 evaluations right (21 of 24 found) and 8 of 9 gaps (8 of 13)."""
    held = _sum(measure(part="held_out"), measure(part="held_out_2"))
    ev, gap = held["evaluation"], held["gap"]
    assert ev["right"] / ev["made"] >= 0.8 and ev["found"] / ev["labelled"] >= 0.8, ev
    assert gap["right"] / gap["made"] >= 0.8 and gap["found"] / gap["labelled"] >= 0.5, gap


@pytest.mark.parametrize("abstract, stated", [
    ("Federated averaging can diverge when devices hold very different data. FedProx adds a "
     "proximal term to each local objective. It trains more stably than federated averaging on "
     "heterogeneous benchmarks.", 2),
    # Data words in the problem are no evaluation ("records", "survey data"): the pattern is.
    ("Sensor records and survey data are scarce in small towns. We propose a graph model of "
     "traffic. Evaluated against a census, it predicts flows better than earlier methods.", 2),
])
def test_an_evaluation_stated_as_a_pattern_is_found_where_it_is_stated(abstract, stated):
    found = X.extract(Paper("p", "A study", abstract=abstract)).of("evaluation")
    assert found is not None and found.sentence == sentences(abstract)[stated]


def test_a_review_or_perspective_names_no_evaluation():
    """A perspective's sentences talk about data and compare ("far more variables than
    traditional scores"), yet it tests nothing: Q5 must not take its data or measure."""
    abstract = ("This perspective argues that learned models will predict outcomes from far more "
                "variables than traditional scores on hospital records. The authors warn that models "
                "reflect the data they are trained on.")
    assert X.extract(Paper("p", "A view", abstract=abstract)).of("evaluation") is None
    study = abstract.replace("This perspective argues", "The authors show")
    assert X.extract(Paper("p", "A study", abstract=study)).of("evaluation") is not None


def test_a_stated_difficulty_is_a_gap_and_a_name_or_a_contrast_is_not():
    gap = ("Generating stable crystals is difficult because structures are periodic. "
           "We propose a diffusion model. It produces more valid materials than earlier methods.")
    assert X.extract(Paper("p", "A study", abstract=gap)).of("gap").sentence.startswith("Generating")
    for none in ("The authors prove the hard Lefschetz theorem for matroids. The approach builds a "
                 "combinatorial theory.",
                 "The model predicts formation energy and band gap. It is accurate on most crystals, "
                 "but not on all of them."):
        assert X.extract(Paper("p", "A study", abstract=none)).of("gap") is None, none


def test_facets_kept_under_other_rules_are_found_again(store, monkeypatch):
    """The version facets are kept under is a digest of the rules' source: a change to the
    rules reads none of the facets the old rules found."""
    paper = Paper("p-1", "A method", abstract="We propose a graph network for crystals. "
                  "On formation energy data it reaches low error.", fields=["materials"])
    store.corpus.upsert_papers([paper])
    stale = dict(facets_of([paper], store)["p-1"].to_dict(), note="found by the old rules")
    store.facets.put(X.VERSION, {"p-1": stale})
    assert facets_of([paper], store)["p-1"].note == "found by the old rules"  # kept: not found again
    monkeypatch.setattr(X, "VERSION", X.rules_version(("the rules, edited",)))
    assert facets_of([paper], store)["p-1"].note == ""
    assert X.rules_version(("a",)) != X.rules_version(("b",)) and X.VERSION.startswith("facets-")
    # what the old rules found is not kept beside the new (planted: no delete in store.facets.put)
    rows = store.db.conn.execute("SELECT version FROM paper_facets WHERE paper_id='p-1'").fetchall()
    assert [r[0] for r in rows] == [X.VERSION]


def _bare(n: int) -> list[Paper]:
    return [Paper(f"b{i}", f"Bare record {i}", fields=["criminology"]) for i in range(n)]


def test_papers_without_an_abstract_are_named_in_one_sentence():
    papers = [Paper("a", "Graph nets", abstract="We propose a graph network.", fields=["materials"]),
              *_bare(5)]
    found = facets_of(papers)
    why = "The papers of Criminology state no facet, so no two fields could be paired."
    said = one_note(papers, found, why)
    assert said.count(".") == 1 and said.endswith("paired.") and said[0] == "“"
    assert all(f"Bare record {i}" in said for i in range(3)) and "2 more papers" in said
    assert "Bare record 3" not in said and "the papers of Criminology" in said
    alone = one_note(papers[:2], found)
    assert alone == "“Bare record 0” has no abstract to find facets in, so the proposal is written " \
                    "from the other papers."
    assert one_note(papers[:1], found, why) == why and one_note(papers[:1], found) == ""


@pytest.fixture
def base_model(request):
    """`scripted/base` declared a base model (prompt style stem), as the bundled Gemma is."""
    previous = registry.declare("scripted/base", registry.Capabilities(
        prompt_style=registry.STEM, in_process=True))
    request.addfinalizer(lambda: registry.forget("scripted/base", previous))


def test_a_run_on_the_command_line_with_papers_without_abstracts_says_so_once_and_finishes(
        tmp_path, capsys, scripted, base_model):
    scripted.responder = lambda messages, params: " 6" if "score" in messages[-1]["content"][-80:].lower() \
        else " and compare both with careful measurements."
    data = {"papers": [{"id": "x1", "title": "Graph networks for crystals", "year": 2020, "fields": ["materials"],
                        "abstract": "Predicting crystal properties is slow. We propose a crystal graph "
                                    "network. On density functional theory data it reaches low error."},
                       {"id": "x2", "title": "A record without an abstract", "year": 2021,
                        "fields": ["criminology"]},
                       {"id": "x3", "title": "Another bare record", "year": 2021, "fields": ["criminology"]}],
            "researchers": [{"id": "rx", "name": "Rae Crystal", "publication_ids": ["x1", "x2", "x3"]}]}
    (tmp_path / "in.json").write_text(json.dumps(data))
    code = main(["--db", str(tmp_path / "db.sqlite3"), "run", "--model", "scripted/base", "--input",
                 str(tmp_path / "in.json"), "--reviewers", "1", "--out-json", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 0
    said = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(said) == 1, said
    assert "“A record without an abstract” and “Another bare record” have no abstract" in said[0]
    assert said[0].count(". ") == 0 and said[0].endswith(".")
    out = json.loads((tmp_path / "o.json").read_text())
    assert out["status"] == "done" and out["proposal"]["q1"]


@pytest.mark.parametrize("sentence, data", [
    ("Using survey data from hundreds of British localities, the authors measure networks.",
     "survey data from hundreds of British localities"),
    ("Evaluated on web search logs with human judgements, it is more relevant.", "web search logs"),
    ("They propose POPE, a polling evaluation that asks yes/no questions about object presence.",
     "yes/no questions"),
    ("On GPUs, attention is limited more by moving data between memories than by arithmetic.", ""),
])
def test_the_data_of_an_evaluation_is_a_data_set_not_a_verbs_object(sentence, data):
    """Q5 applies a method to the other side's data: "moving data" is none, and "Using
    survey data ..." names the survey's data, not "survey" alone (too short to use)."""
    assert X.data_of(sentence) == data


def test_a_result_or_a_description_of_the_paper_is_no_gap_even_with_a_gap_word():
    """Issue 49: a blind reader found both quoted in Q4 as stated gaps."""
    for abstract in ("Supervised networks predict ventral-stream responses well. The authors show that "
                     "contrastive networks reach neural predictivity comparable to supervised networks, and "
                     "remain predictive when trained on video.",
                     "The second release provides positions for a billion sources. The summary describes the "
                     "processing advances, the validation performed, and limitations that users should keep "
                     "in mind.",
                     # said of its authors (blind reading v7: quoted as a gap, 4 false review sentences)
                     "Gaia's third data release adds spectra and astrophysical parameters. The authors "
                     "summarise the content, validation and known limitations for users.",
                     # blind reading v9: a finding with what it implies, and a review of its own evidence
                     "Knee pain is graded from X-rays. The algorithm explains a much larger share of pain "
                     "disparities than standard severity grades, suggesting that conventional grading misses "
                     "features of disease.",
                     "Deep networks predict visual responses. The authors review evidence that such networks "
                     "predict responses and discuss how the approach might extend, along with its limitations.",
                     # blind reading v11: a survey that "outlines open challenges" names none
                     "Prompting rewrites a task as a template. It lists applications and resources and outlines "
                     "open challenges."):
        sents = sentences(abstract)
        assert "gap" not in X.choose(X.sentence_scores(sents, None, None, True, True)), abstract
    sents = sentences("Models answer exam questions. A large model achieves high accuracy, but human "
                      "raters find it still lacks the care of clinicians.")
    assert X.choose(X.sentence_scores(sents, None, None, True, True)).get("gap") == 1
