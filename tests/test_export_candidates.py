"""The ranking of a brainstorm's candidates in rt_core: one order for every view, what ranked
them in words, the Markdown/JSON/CSV downloads, and a pairwise study made of the candidates."""
from __future__ import annotations

import csv
import io
import json
from math import comb

import pytest

from rt_core.errors import InputError
from rt_core.export import candidates as ec
from rt_core.study.candidates import create_from_candidates
from rt_core.types import Run, Tournament
from tests.candidates_run import ORDER, brainstorm_run

FORMULA = "=HYPERLINK(\"http://example.com\")"


def test_ranked_follows_the_tournament_then_unranked_in_writing_order():
    run = brainstorm_run("r1")
    assert [r.candidate.id for r in ec.ranked(run)] == ORDER
    assert [r.rank for r in ec.ranked(run)] == [1, 2, 3, 4]
    assert [c.id for c in ec.merged(run)] == ["c5"] and ec.merged_count(run) == 1
    run.tournament.order = ["c4", "c5"]  # c5 was merged: never ranked on its own
    got = [(r.candidate.id, r.rank) for r in ec.ranked(run)]
    assert got == [("c4", 1), ("c1", None), ("c2", None), ("c3", None)]


def test_signals_are_never_called_a_judges_verdict():
    run = brainstorm_run("r2", method="signals")
    words = ec.method_words(run) + ec.ranking_markdown(run)
    assert "measured signals" in words and "cannot judge" in words
    assert "judgement" not in words and "the judge" not in words.lower()
    assert json.loads(ec.ranking_json(run))["judgements"] == []
    assert ec.method_words(Run(id="x", config=brainstorm_run("x").config)).startswith("not ranked")


def test_csv_neutralises_formulas_and_keeps_ids_beside_names():
    run = brainstorm_run("r3")
    run.candidates[1].proposal.q1 = FORMULA  # c2, ranked first
    rows = list(csv.DictReader(io.StringIO(ec.ranking_csv(run, ec.Names({"r-chen-beidi": "Beidi Chen"})).decode())))
    assert rows[0]["title"].startswith("'=")
    assert rows[0]["authors"] == "Beidi Chen" and rows[0]["author_ids"] == "r-chen-beidi"
    assert rows[0]["score"] == "1.5" and rows[0]["low"] == "1.2" and rows[0]["high"] == "1.8"
    assert rows[-1]["candidate"] == "c5" and rows[-1]["rank"] == ""


def test_json_holds_each_whole_candidate_and_still_loads():
    from rt_core.types import Candidate

    run = brainstorm_run("r4")
    doc = json.loads(ec.ranking_json(run))
    first = doc["ranking"][0]
    assert first["rank"] == 1 and first["interval"] == [1.2, 1.8]
    again = Candidate.from_dict({k: v for k, v in first["candidate"].items() if k != "lead"})
    assert again.novelty.facets[0].searched == 120 and again.reviews[0].score == 7
    assert doc["wins"]["c2"]["c4"] == 2 and doc["position_bias"] == pytest.approx(6 / 11)


def test_a_study_of_the_candidates_pairs_every_one_and_leaves_out_the_merged(store):
    run = brainstorm_run("r5")
    store.runs.save(run)
    made = create_from_candidates(store, run)
    items = store.studies.items(made["id"])
    assert len(items) == 4 and len(store.studies.units(made["id"])) == comb(4, 2)
    assert {i.arm for i in items.values()} == {f"{c} (tournament #{n})" for n, c in enumerate(ORDER, 1)}
    assert made["organiser_token"] and store.studies.by_organiser_token(made["organiser_token"])["id"] == made["id"]
    # Blind: an item carries the answers only, not the candidate's id or rank.
    assert not any("tournament" in " ".join(i.shown().values()) for i in items.values())


def test_a_study_needs_two_candidates_with_a_proposal(store):
    run = brainstorm_run("r6")
    for c in run.candidates[1:]:
        c.proposal.q1 = c.proposal.q2 = c.proposal.q3 = c.proposal.q4 = c.proposal.q5 = ""
    run.tournament = Tournament(order=[c.id for c in run.candidates])
    with pytest.raises(InputError, match="at least two"):
        create_from_candidates(store, run)
