"""The kinds of data a paper works on (rt_core/run/facets/kinds.py), measured on the
hand-labelled bundled papers and on the cases a blind reader found false (issue 49)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rt_core.run.facets import kinds, rubric
from tests.kind_measure import LABELS, measure, totals
from tests.test_facets import _planted

PAPERS = {p["id"]: p for p in json.loads((Path(__file__).resolve().parents[1] / "assets" / "community"
                                          / "papers.json").read_text("utf-8"))}


def _text(title_part: str) -> str:
    p = next(p for p in PAPERS.values() if title_part in p["title"])
    return f"{p['title']}. {p['abstract']}"


def test_the_kind_labels_are_many_and_across_fields():
    labels = json.loads(LABELS.read_text("utf-8"))
    assert len(labels["papers"]) >= 40 and len(labels["held_out"]) >= 20
    fields = {f for rec in labels["papers"] for f in PAPERS[rec["paper_id"]]["fields"]}
    assert len(fields) >= 8


@pytest.mark.parametrize("part,precision,recall", [("papers", 0.9, 0.9), ("held_out", 0.75, 0.8)])
def test_the_kinds_found_are_mostly_the_labelled_ones(part, precision, recall):
    p, r = totals(measure(part))
    assert p >= precision and r >= recall, (p, r)


def test_a_stream_of_tokens_is_text_not_a_time_series():
    found = kinds.kinds_of(_text("Attention Sinks"))
    assert "text" in found and "series" not in found


def test_a_software_library_is_no_program_data_for_an_llm_method():
    f = kinds.fit(_text("MagicPIG"), "LSH sampling of attention", _text("pymatgen"))
    assert "compute" not in f.side_kinds and not f.plausible


def test_an_optimizing_compiler_is_no_optimiser_of_models():
    side = "We fit models of stellar orbits to the catalogue and train a network on the fits."
    assert kinds.fit(_text("TVM"), "an optimizing compiler for deep learning", side).generic == ""
    assert kinds.fit("", "stochastic optimization with Adam", side).generic == "models to train"


def test_gridded_weather_fields_are_images_to_a_vision_model_and_the_bridge_says_so():
    f = kinds.fit("A deep convolutional network reads knee X-ray images.", "a deep network", _text("ClimaX"))
    assert f.plausible and f.shared == ("images",) and "images" not in f.side_kinds
    assert f.bridge() == "gridded fields of weather and climate, which a vision model reads as images"
    assert not kinds.fit("A survey of residents.", "a survey", _text("ClimaX")).shared


def test_the_kind_check_says_what_it_read_and_claims_no_kind_the_labels_do_not_give():
    hood = ["materials", "criminology"]

    def said(fit: kinds.Fit, reviewer: str) -> str:
        checks = rubric.check(_planted(), reviewer, "materials", hood, str.title, None, fit).checks
        return next(c.said for c in checks if c.key == "kind")

    for reviewer in ("r-a", "r-b"):  # both wordings
        both = said(kinds.Fit(True, ("series",), "", ("text", "series"), ("series",)), reviewer)
        assert "abstract says the method works on time series" in both and "names time series too" in both
        assert "text" not in both  # the side never said text
        f = kinds.fit("A deep network reads knee X-ray images.", "a deep network", _text("ClimaX"))
        grid = said(f, reviewer)
        assert "names gridded fields of weather and climate, which a vision model reads as images" in grid
        assert "names images" not in grid
        tool = said(kinds.Fit(True, (), "any data", ("compute",), ("records",)), reviewer)
        assert "words that name the method mark it as a general-purpose method" in tool
        assert "any kind" not in tool and "(records of people)" in tool
        none = said(kinds.Fit(False, (), "", ("images",), ("text",)), reviewer)
        assert "works on images" in none and "names nothing of that kind" in none and "text" not in none
