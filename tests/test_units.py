"""Shared-unit questions (issue 49): where no method of one field can run on another's data,
two fields that study the same units (neighbourhoods, workers, patients ...) are asked
whether one's topic bears on the other's outcome; ranked after method bridges and before
long shots, said as such in Q1-Q5, and reported by the rubric as the bridge used."""
from __future__ import annotations

from rt_core.config import LOCAL_EMBEDDER
from rt_core.models.embed import Embedder
from rt_core.run.facets import rubric, units
from rt_core.run.facets.kept import by_field, facets_of
from rt_core.run.facets.pair import pairings
from rt_core.run.facets.write import write
from rt_core.types import Ground, Proposal
from tests.test_facets import _paper

# Economics and criminology on neighbourhoods; astronomy on stars (no unit in common).
HOOD = [
    _paper("e1", "economics", "The aim is to understand how industrial robots change local labour markets. "
           "We compare commuting zones with more and fewer robots. On census data of employment and wages "
           "in commuting zones, robots lower the employment rate.", "Robots and Jobs: Evidence from Labor Markets"),
    _paper("c1", "criminology", "The authors test whether collective efficacy of residents explains crime "
           "across neighbourhoods. Using a multilevel model of survey data, they relate crime to ties. On "
           "resident surveys from Chicago neighbourhoods the model explains the violence rate.",
           "Neighborhoods and Violent Crime: A Multilevel Study"),
    _paper("a1", "astronomy", "The aim is to map the dark matter of the Milky Way. We fit a "
           "kinematic model to stellar velocities. On Gaia astrometry data of proper motions the model "
           "reaches a low error.", "Dark matter from stellar kinematics"),
]
TITLES = {p.id: p.title for p in HOOD}


def _plans(hood=HOOD):
    texts = {p.id: f"{p.title}. {p.abstract}" for p in hood}
    return pairings(by_field(hood, facets_of(hood)), Embedder(LOCAL_EMBEDDER), limit=1000, texts=texts)


def test_units_are_found_by_their_words_and_only_shared_ones_count():
    assert {"places", "workers"} <= units.units_of(HOOD[0].abstract)
    assert units.shared(HOOD[0].abstract, HOOD[1].abstract) == ("places",)
    assert units.shared(HOOD[0].abstract, HOOD[2].abstract) == ()


def test_shared_unit_questions_rank_after_method_bridges_and_before_long_shots():
    plans = _plans()
    order = {"method": 0, "unit": 1, "none": 2}
    kinds_seen = [p.bridge for p in plans.ranked]
    assert "unit" in kinds_seen
    assert [order[k] for k in kinds_seen] == sorted(order[k] for k in kinds_seen)
    for p in plans.ranked:
        if p.bridge == "unit":
            assert {p.mechanism.field, p.purpose.field} == {"economics", "criminology"}
            assert p.fit.units == ("places",) and not p.fit.plausible


def test_a_shared_unit_proposal_says_what_it_is_and_carries_no_method():
    best = next(p for p in _plans().ranked if p.bridge == "unit")
    w = write(best, str.title, TITLES)
    a = dict(w.answers)
    assert "neighbourhoods and cities" in a["q1"] and "go with differences in" in a["q1"] and a["q1"].endswith("?")
    assert "long shot" not in a["q1"] and "apply" not in a["q5"]
    assert best.target_eval.phrase in a["q5"]
    g = dict(w.grounds)
    assert all(f.kind != "mechanism" for f in g["q1"])  # Q1 names no method, so none is its ground
    assert g["q1"][0] is best.purpose  # the problem's facet first (rubric.sides)


def _planted_unit() -> Proposal:
    """A shared-unit proposal lacking a measure, a gap and the third field (astronomy)."""
    own = Ground("e1", "purpose", "The aim is to understand how industrial robots change labour markets.",
                 "economics")
    purp = Ground("c1", "purpose", "The authors test whether collective efficacy explains crime.",
                  "criminology")
    data = Ground("c1", "evaluation", "On resident surveys from Chicago neighbourhoods.", "criminology")
    return Proposal(
        q1="Economics studies robots and jobs and Criminology studies crime, both on neighbourhoods and "
           "cities: does the first bear on the second?",
        q2="This matters because criminology asks it.",
        q3="It is hard because the two fields observe neighbourhoods with different data.",
        q4="Earlier work has not solved it because no one joined them.",
        q5="We will take resident surveys from Criminology and add a measure of robots.",
        grounds={"q1": [purp, own], "q2": [purp], "q3": [own, data], "q4": [], "q5": [own, data]})


def test_a_planted_shared_unit_proposal_gets_exactly_its_faults_and_the_unit_bridge_said():
    hood = ["economics", "criminology", "astronomy"]
    assert rubric.sides(_planted_unit()) == ("economics", "criminology")
    fit = next(p for p in _plans().ranked if p.bridge == "unit").fit
    r = rubric.check(_planted_unit(), "r-x", "economics", hood, str.title, ("A far paper", 0.2), fit)
    assert {c.key for c in r.checks if not c.holds} == {"fields", "measure", "gap"}
    assert {c.key for c in r.checks} == {"fields", "data", "unit", "prior", "measure", "gap", "match"}
    assert "method" not in " ".join(c.said for c in r.checks if c.key != "unit")
    good, bad = rubric.sections(r, "Economics")
    assert "neighbourhoods and cities" in good and "method across" in good
    assert len([x for x in bad.splitlines() if x.strip()]) == 3
    # The meta-review names the unit bridge, not a kind of data the method works on.
    lines, _ = rubric.agreement({"r-x": {c.key: c.holds for c in r.checks}})
    assert "same units" in lines and "kind of data" not in lines


def test_shared_units_agree_with_the_labelled_pairs():
    """On the labelled pairs (pairing_labels.json "units"; not held out, see its rule): no
    pair is called shared that is not (a false shared unit writes a question about nothing),
    and most shared pairs are found."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    rows = json.loads((root / "tests" / "fixtures" / "pairing_labels.json").read_text("utf-8"))["units"]
    papers = {p["id"]: p for p in json.loads((root / "assets" / "community" / "papers.json").read_text("utf-8"))}

    def text(pid):
        return f"{papers[pid]['title']}. {papers[pid].get('abstract') or ''}"

    got = [bool(units.shared(text(r["exposure_paper"]), text(r["outcome_paper"]))) for r in rows]
    said = [r["shared"] for r in rows]
    assert len(rows) >= 15 and any(said) and not all(said)
    false = [r["note"] for r, g, s in zip(rows, got, said, strict=True) if g and not s]
    assert not false
    assert sum(g and s for g, s in zip(got, said, strict=True)) / sum(said) >= 0.75
