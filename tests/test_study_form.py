"""The study pages' forms through app.py (AppTest): number fields that say beside themselves what
is wrong and hold the action back until fixed, the hidden real-paper arm only where a reference
exists, a rater's confidence that starts unselected and is required, exports that name the study,
the run and the item, and a Bradley-Terry ranking printed in a form people read."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apphelp import errors, module_data_dir, record_downloads, shown
from tests.test_study import OTHER, REPLAY, make_run, rate_all, real_wins, seed_runs
from tests.test_study_app import current_position, join, page

data_dir = module_data_dir("study-form-data")
ROOT = Path(__file__).resolve().parents[1]
NO_REFERENCE = ["run-hood-global", "run-hood-self"]  # a neighbourhood, no reference paper


def store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture(scope="module")
def runs() -> list[str]:
    s = store()
    ids = seed_runs(s)
    for rid, mode in zip(NO_REFERENCE, ("global", "self"), strict=True):
        make_run(s, rid, mode, "")
    return ids


def column_of(at: AppTest, key: str):
    """The column a number field is drawn in (what 'beside the field' means on this page)."""
    return next(c for c in at.columns if any(n.key == key for n in c.number_input))


def column_errors(at: AppTest, key: str) -> str:
    return "\n".join(shown(e.value) for e in column_of(at, key).error)


# -- number fields -----------------------------------------------------------------------------
def test_an_out_of_range_number_is_named_beside_its_field_and_holds_create_back(runs):
    at = page("study_create")
    assert not at.button(key="sc_create").disabled
    at.number_input(key="sc_minutes").set_value(99999).run()
    at.number_input(key="sc_cap").set_value(500).run()  # StudySettings itself would take 500
    at.number_input(key="sc_per_unit").set_value(0).run()
    assert not at.exception
    assert "Minutes per rater must be from 1 to 240; 99999 is out of range." in column_errors(at, "sc_minutes")
    assert "Most items per rater must be from 1 to 200; 500 is out of range." in column_errors(at, "sc_cap")
    assert "Raters per item (at least) must be from 1 to 50; 0 is out of range." in column_errors(at, "sc_per_unit")
    assert at.button(key="sc_create").disabled
    assert any("waits until every number above is in range" in c.value for c in at.caption)
    # Two fixed, one still wrong: still held back.
    at.number_input(key="sc_minutes").set_value(30).run()
    at.number_input(key="sc_cap").set_value(7).run()
    assert not column_errors(at, "sc_minutes") and at.button(key="sc_create").disabled
    at.number_input(key="sc_per_unit").set_value(3).run()
    assert not at.error, errors(at)
    assert not at.button(key="sc_create").disabled
    at.text_input(key="sc_name").input("Typed numbers").run()
    at.button(key="sc_create").click().run()
    assert not at.exception and not at.error, errors(at)
    made = next(s for s in store().studies.list() if s["name"] == "Typed numbers")
    settings = store().studies.get(made["id"])["settings"]
    # What was typed last is what the study uses, not an older value the browser kept.
    assert (settings.minutes_per_rater, settings.max_units_per_rater, settings.raters_per_unit) == (30, 7, 3)


def test_the_running_study_panel_holds_apply_back_on_a_bad_number(runs):
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings

    s = store()
    made = create_from_runs(s, runs, StudySettings("Panel check"))
    at = page("study_results", organiser=made["organiser_token"])
    field = f"sr_cap_{made['id']}"
    at.number_input(key=field).set_value(0).run()
    assert "Most items per rater must be from 1 to 200; 0 is out of range." in errors(at)
    assert at.button(key=f"sr_adjust_{made['id']}").disabled
    at.number_input(key=field).set_value(12).run()
    assert not at.error
    at.button(key=f"sr_adjust_{made['id']}").click().run()
    assert s.studies.get(made["id"])["settings"].max_units_per_rater == 12


# The Run page's settings fields are drawn from the settings schema (its own helper); every
# other number field goes through studio/fields.py, so no browser-side bound can hide a value.
RUN_SETTINGS_FIELDS = {"pages/run.py", "studio/loop_settings.py", "studio/budget.py"}


def test_every_number_field_outside_the_run_settings_goes_through_the_bounded_helper():
    calls = {str(p.relative_to(ROOT)) for folder in ("pages", "studio") for p in (ROOT / folder).glob("*.py")
             if re.search(r"\bnumber_input\(", p.read_text("utf-8"))}
    assert calls - RUN_SETTINGS_FIELDS == {"studio/fields.py"}


def test_the_helper_names_every_kind_of_problem():
    from studio.fields import all_valid, problem

    assert problem("Minutes", 10, 1, 240) is None
    assert problem("Minutes", 0.5, 1, 240) == "Minutes must be from 1 to 240; 0.5 is out of range."
    assert problem("Minutes", None, 1, 240) == "Minutes: enter a number from 1 to 240."
    assert problem("Budget", 1234567.0, 0, 1e6) == "Budget must be from 0 to 1000000; 1234567 is out of range."
    assert all_valid(1, 2.5, 0) and not all_valid(1, None)


# -- the hidden real-paper arm -----------------------------------------------------------------
def test_the_hidden_arm_is_off_and_says_why_when_no_run_has_a_reference(runs):
    at = page("study_create")
    box = at.checkbox(key="sc_real")  # the default choice includes runs with a reference
    assert box.value and not box.disabled
    at.multiselect(key="sc_runs").set_value(NO_REFERENCE).run()
    assert not [c for c in at.checkbox if c.key == "sc_real"]
    box = at.checkbox(key="sc_real_none")
    assert box.disabled and not box.value
    assert any("none of the chosen runs has a reference paper" in c.value for c in at.caption)
    assert any("2 items in 2 arms, 1 pairs" in shown(c.value) for c in at.caption)
    # Runs whose reference has no known answers add nothing either, so they say the same.
    at.multiselect(key="sc_runs").set_value([f"run-{m}-{t}" for t in OTHER for m in ("global", "self")]).run()
    assert at.checkbox(key="sc_real_none").disabled
    at.multiselect(key="sc_runs").set_value([f"run-{m}-{REPLAY[0]}" for m in ("global", "self")]).run()
    box = at.checkbox(key="sc_real")
    assert box.value and not box.disabled
    assert any("3 items in 3 arms, 3 pairs" in shown(c.value) for c in at.caption)


# -- the rater's confidence --------------------------------------------------------------------
def test_confidence_starts_unselected_and_a_submit_without_it_says_so(runs):
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import SESSION_CRITERIA, StudySettings

    s = store()
    made = create_from_runs(s, runs, StudySettings("Confidence"))
    at = join(made["code"], "eva")
    pos = current_position(at)
    assert at.radio(key=f"rate_conf_{pos}").value is None  # no anchor on the middle
    for _ in SESSION_CRITERIA:
        at.button(key=f"rate_btn_left_{pos}").click().run()
    at.button(key=f"rate_submit_{pos}").click().run()
    assert "still missing: confidence" in errors(at)
    assert not s.studies.answer_rows(made["id"])  # nothing stored without it
    assert current_position(at) == pos
    at.radio(key=f"rate_conf_{pos}").set_value(2)
    at.button(key=f"rate_submit_{pos}").click().run()
    assert not at.exception and not at.error, errors(at)
    rows = s.studies.answer_rows(made["id"])
    assert {r["confidence"] for r in rows} == {2} and len(rows) == len(SESSION_CRITERIA)


# -- exports and the ranking -------------------------------------------------------------------
@pytest.fixture(scope="module")
def rated(runs):
    """A pairwise study rated by three raters who always prefer the real paper."""
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings

    s = store()
    made = create_from_runs(s, runs, StudySettings("Exports: modes vs paper", raters_per_unit=3))
    rate_all(s, made["id"], ["ann", "bob", "cat"], real_wins)
    return made


def test_the_answers_csv_names_the_study_the_run_and_the_item(rated, monkeypatch):
    from rt_core.study.results import item_title

    downloads = record_downloads(monkeypatch)
    at = page("study_results", organiser=rated["organiser_token"])
    assert not at.exception
    rows = list(csv.DictReader(io.StringIO(downloads[f"study-{rated['code']}.csv"].decode())))
    assert rows
    assert {"study_name", "study_code", "study_id", "shown_left", "run_left", "title_left",
            "shown_right", "run_right", "title_right"} <= set(rows[0])
    assert {r["study_name"] for r in rows} == {"Exports: modes vs paper"}
    items = store().studies.items(rated["id"])
    for r in rows:
        for side in ("left", "right"):
            item = items[r[f"shown_{side}"]]
            assert r[f"run_{side}"] == item.run_id  # empty for the real paper
            assert r[f"title_{side}"] == item_title(item) and r[f"title_{side}"]
    assert any(r["run_left"].startswith("run-") for r in rows) and any(not r["run_left"] for r in rows)
    assert any("Variant one" in r["title_left"] + r["title_right"] for r in rows)


def test_strengths_print_as_log_strength_and_rank_with_intervals(rated, monkeypatch):
    downloads = record_downloads(monkeypatch)
    at = page("study_results", organiser=rated["organiser_token"])
    table = next(d.value for d in at.dataframe if "log-strength" in d.value.columns)
    assert list(table.columns) == ["rank", "plausible ranks (95%)", "arm", "log-strength", "95% interval",
                                   "beats an average arm", "votes"]
    assert table["arm"].iloc[0] == "real paper"
    assert table["log-strength"].str.fullmatch(r"[+-]\d+\.\d\d").all(), table["log-strength"]
    assert table["95% interval"].str.fullmatch(r"[+-]\d+\.\d\d to [+-]\d+\.\d\d").all()
    assert table["plausible ranks (95%)"].str.fullmatch(r"\d(-\d)?").all()
    assert table["beats an average arm"].str.fullmatch(r"<0\.1%|>99\.9%|\d+\.\d%").all()
    ranking = pd.read_csv(io.BytesIO(downloads[f"study-{rated['code']}-ranking.csv"]))
    assert set(ranking["study_name"]) == {"Exports: modes vs paper"}
    numbers = ranking[["log_strength", "ci_low", "ci_high", "p_beat_average"]].to_numpy().ravel()
    assert all(len(repr(float(x)).split(".")[1]) <= 4 for x in numbers), numbers


def test_an_extreme_strength_is_printed_bounded():
    from rt_core.study.results import ranking_export, ranking_table

    bt = pd.DataFrame({"rank": [1, 2], "rank_low": [1.0, 2.0], "rank_high": [1.0, 2.0], "arm": ["a", "b"],
                       "strength": [80.0, -80.0], "ci_low": [79.5, -80.5], "ci_high": [80.5, -79.5],
                       "p_beat_average": [1.0, 1e-35], "n_votes": [9, 9]})
    table = ranking_table(bt)
    assert list(table["beats an average arm"]) == [">99.9%", "<0.1%"]
    assert list(table["plausible ranks (95%)"]) == ["1", "2"]
    assert list(table["log-strength"]) == ["+80.00", "-80.00"]
    out = ranking_export(bt, {"name": "s", "code": "C"})
    assert out["p_beat_average"].tolist() == [1.0, 0.0]
