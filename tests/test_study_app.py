"""The study pages through app.py (AppTest): an organiser builds a 10-item pairwise study (two
modes plus the real paper), two raters rate it in interleaved sessions, the results page (opened
with the organiser link) shows alpha, the Bradley-Terry ranking with intervals, judge calibration
and the CSV export; the rater link shows the rating page alone and unlocks nothing."""
from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.apphelp import APP, errors, module_data_dir, shown
from tests.test_study import seed_runs

XSS = "<script>alert('rater')</script>"


data_dir = module_data_dir("study-app-data")


def shared_store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture(scope="module")
def judge_model():
    from rt_core.models.scripted import demo_responder, scripted_model

    m = scripted_model()
    m.reset()
    m.responder = demo_responder
    yield m
    m.reset()


def page(name: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, errors(at)
    return at


@pytest.fixture(scope="module")
def study():
    """The organiser's part, through the create page."""
    s = shared_store()
    seed_runs(s)
    at = page("study_create")
    assert at.multiselect(key="sc_runs").value and len(at.multiselect(key="sc_runs").value) == 8
    started = time.perf_counter()
    at.text_input(key="sc_name").input("Modes vs the real paper").run()
    assert any("10 items in 3 arms, 8 pairs" in shown(c.value) for c in at.caption), [c.value for c in at.caption]
    at.number_input(key="sc_per_unit").set_value(3)
    at.checkbox(key="sc_gold").check().run()
    at.button(key="sc_create").click().run()
    ok(at)
    seconds = time.perf_counter() - started
    made = s.studies.list()
    assert len(made) == 1 and made[0]["units"] == 8 + 1 and made[0]["mode"] == "pairwise"
    assert any(made[0]["code"] in c.value for c in at.code)  # the join link is on the page
    organiser = [c.value for c in at.code if "organiser=" in c.value]
    assert len(organiser) == 1 and organiser[0].startswith("http://localhost:8501/study_results?organiser=")
    print(f"\ncreate page: study built in {seconds:.2f} s (AppTest, from a finished page)")
    return {**made[0], "token": organiser[0].split("organiser=", 1)[1]}


def results_page(study, **query) -> AppTest:
    """The results page as the organiser opens it: through the organiser link."""
    return page("study_results", organiser=study["token"], **query)


def answer_current(at: AppTest, choice: str, rationale: str) -> None:
    """Answer the task on screen: the shortcut buttons fill each criterion in turn."""
    for _ in study_criteria():
        at.button(key=f"rate_btn_{choice}_{current_position(at)}").click().run()
    at.text_area(key=f"rate_why_{current_position(at)}").input(rationale)
    at.radio(key=f"rate_conf_{current_position(at)}").set_value(4)  # required, never preselected
    at.button(key=f"rate_submit_{current_position(at)}").click().run()
    ok(at)


def current_position(at: AppTest) -> int:
    keys = [b.key for b in at.button if b.key and b.key.startswith("rate_submit_")]
    assert len(keys) == 1, keys
    return int(keys[0].rsplit("_", 1)[1])


def join(code: str, rater: str) -> AppTest:
    at = page("study_rate", study=code)
    assert at.text_input(key="rate_code").value == code  # filled in from the link
    at.text_input(key="rate_rater_input").input(rater)
    submit = next(b for b in at.button if b.label == "Start or resume")
    submit.click().run()
    return ok(at)


def test_join_link_at_the_root_opens_the_rating_page(study):
    """Join links point at the app's root (which always runs app.py), with the code."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["study"] = study["code"]
    at.run()
    ok(at)
    assert [t.value for t in at.title] == ["Rate proposals"]
    assert at.text_input(key="rate_code").value == study["code"]
    plain = AppTest.from_file(APP, default_timeout=120).run()  # without a code: Neighbourhood
    assert "Rate proposals" not in [t.value for t in plain.title]


def test_bad_rater_id_and_unknown_code_get_one_clear_message(study):
    at = page("study_rate", study=study["code"])
    at.text_input(key="rate_rater_input").input("has space")
    next(b for b in at.button if b.label == "Start or resume").click().run()
    assert "not a valid rater id" in errors(at)
    at.text_input(key="rate_code").input("ZZZZZZ")
    at.text_input(key="rate_rater_input").input("ann")
    next(b for b in at.button if b.label == "Start or resume").click().run()
    assert "No study has the code" in errors(at)


def test_two_raters_interleaved_then_results_with_judge_and_csv(study, judge_model):
    s = shared_store()
    ann, bob = join(study["code"], "ann"), join(study["code"], "bob")
    assert "Left proposal" in [m.value.strip("# ") for m in ann.markdown]
    # Blind: nothing on the rating page names an arm or run.
    seen = " ".join([t.value for t in ann.text] + [m.value for m in ann.markdown] + [c.value for c in ann.caption])
    assert "mode: " not in seen and "run-" not in seen
    # Both work at once, one item each in turn; ann's texts include a hostile one. Each gets
    # every pair and the gold pair: items take well under a second, so ten minutes cover them.
    for i in range(9):
        answer_current(ann, "left", XSS if i == 0 else f"ann reason {i}")
        answer_current(bob, ("left", "tie", "right")[i % 3], f"bob reason {i}")
    assert any("All done" in x.value for x in ann.success) and any("All done" in x.value for x in bob.success)
    rows = s.studies.answer_rows(study["id"])
    assert len(rows) == 2 * 9 * len(study_criteria())
    assert {r["rationale"] for r in rows if r["rater_id"] == "ann"} >= {XSS}
    assert all(r["minutes"] and r["minutes"] > 0 for r in rows)  # measured by the app

    res = results_page(study)
    ok(res)
    assert "organiser" not in res.query_params  # the secret left the address bar
    labels = {m.label: m.value for m in res.metric}
    assert labels["Raters"] == "2" and "Krippendorff's alpha (all)" in labels and "Fleiss' kappa" in labels
    bt = next(d.value for d in res.dataframe if "log-strength" in d.value.columns)
    assert set(bt["arm"]) == {"mode: global", "mode: self", "real paper"}
    assert bt["95% interval"].str.fullmatch(r"[+-]\d+\.\d\d to [+-]\d+\.\d\d").all(), bt["95% interval"]
    assert any("real paper" in h.value for h in res.header)
    # Rater text is shown as text, never as HTML.
    assert XSS in [t.value for t in res.text]
    # Judge calibration with the scripted judge (an instruction model).
    assert res.button(key="sr_judge").disabled  # the default embedded model cannot judge
    hint = next(c.value for c in res.caption if "cannot judge" in c.value)
    assert "Run page" in hint and "scripted" not in hint  # names only what the Run page offers
    res.session_state["model"] = "scripted/demo"
    res.run()
    res.button(key="sr_judge").click().run()
    ok(res)
    labels = {m.label: m.value for m in res.metric}
    assert labels["Position flips"] == "100%"  # the demo judge always picks A
    assert labels["Picks the left side"] == "100%"
    assert any("spearman_rho" in d.value.columns for d in res.dataframe)
    # Exports: the CSV is on the page and safe.
    from rt_core.study import results

    csv_text = results.to_csv(results.export_frame(s, study["id"])).decode()
    assert "'<script>" not in csv_text and XSS in csv_text
    assert any(b.proto.label == "Answers (CSV)" for b in res.get("download_button"))


def study_criteria():
    from rt_core.study.design import SESSION_CRITERIA

    return SESSION_CRITERIA


def test_closing_the_study_stops_answers(study):
    s = shared_store()
    at = join(study["code"], "cat")
    res = results_page(study)
    res.button(key="sr_close").click().run()
    ok(res)
    assert s.studies.get(study["id"])["status"] == "closed"
    pos = current_position(at)  # cat's page was drawn while the study was open
    for radio in at.radio:
        if radio.key.startswith("rate_") and radio.key.endswith(tuple(c.name for c in study_criteria())):
            radio.set_value("tie")
    at.radio(key=f"rate_conf_{pos}").set_value(3)
    at.button(key=f"rate_submit_{pos}").click().run()
    assert not at.exception
    assert any("closed and accepts no more answers" in w.value for w in at.warning)
    assert not [r for r in s.studies.answer_rows(study["id"]) if r["rater_id"] == "cat"]
    res.button(key="sr_reopen").click().run()
    assert s.studies.get(study["id"])["status"] == "open"


def test_absolute_study_rate_stop_resume_and_means():
    """Absolute mode through the pages: radios 1-10 per criterion; a rater stops after one
    item and resumes with the same id where they left off; the results show per-arm means."""
    from rt_core.study.create import create_from_runs
    from rt_core.study.design import StudySettings

    s = shared_store()
    made = create_from_runs(s, [r["id"] for r in s.runs.list()], StudySettings("Scores", mode="absolute"))
    made["token"] = made["organiser_token"]
    at = join(made["code"], "dana")
    assert "Proposal" in [m.value.strip("# ") for m in at.markdown]
    pos = current_position(at)
    for c in study_criteria():
        at.radio(key=f"rate_{made['id']}_dana_{pos}_{c.name}").set_value(7)
    at.radio(key=f"rate_conf_{pos}").set_value(5)
    at.button(key=f"rate_submit_{pos}").click().run()
    ok(at)
    again = join(made["code"], "dana")  # a new browser session: the tab was closed
    assert any(p.proto.text.startswith("1 of ") for p in again.get("progress"))
    assert current_position(again) != pos
    nxt = current_position(again)
    again.button(key=f"rate_submit_{nxt}").click().run()  # nothing answered yet
    assert "answer every criterion" in errors(again)
    assert len(s.studies.answer_rows(made["id"])) == len(study_criteria())
    res = results_page(made)
    assert res.selectbox(key="study_id").value == made["id"]
    ok(res)
    assert any(h.value == "Scores by arm and criterion" for h in res.header)
    means = next(d.value for d in res.dataframe if "mean" in d.value.columns)
    assert means["mean"].dropna().eq(7).all() and len(means.dropna(subset=["mean"])) == len(study_criteria())


def test_the_rater_link_shows_the_rating_page_alone(study):
    """Through the rater link: one page, no sidebar, no navigation to any other page."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["study"] = study["code"]
    at.run()
    ok(at)
    assert [t.value for t in at.title] == ["Rate proposals"]
    assert len(at.sidebar) == 0
    assert not at.get("page_link")
    seen = " ".join(m.value for m in at.markdown)
    assert "Study: results" not in seen and "mode: " not in seen


def test_results_need_the_organiser_token(study):
    """Without the organiser link the results page shows no study, no arm and no export; the
    study code (what raters have) and a wrong token open nothing."""
    for query in ({}, {"organiser": study["code"]}, {"organiser": study["token"][:-2]}):
        at = page("study_results", **query)
        assert not at.exception
        assert "organiser link" in " ".join(i.value for i in at.info)
        assert not at.dataframe and not at.get("download_button") and not at.metric
        assert not [b for b in at.button if b.key in ("sr_close", "sr_reopen")]
        shown_text = " ".join([m.value for m in at.markdown] + [c.value for c in at.code])
        assert "mode: " not in shown_text and "real paper" not in shown_text
        assert ("opens no study" in errors(at)) == bool(query)
    # Pasting the whole organiser link into the field opens it.
    at.text_input(key="sr_token").input(f"http://localhost:8501/study_results?organiser={study['token']}")
    next(b for b in at.button if b.label == "Open results").click().run()
    ok(at)
    assert at.selectbox(key="study_id").value == study["id"]


def test_the_organiser_adds_runs_and_raters_per_item_while_the_study_runs(study):
    from tests.test_study import make_run

    s = shared_store()
    run = make_run(s, "run-agent-paper", "agent", "arxiv:2412.17767")
    res = results_page(study)
    res.number_input(key=f"sr_floor_{study['id']}").set_value(4)
    res.button(key=f"sr_adjust_{study['id']}").click().run()
    ok(res)
    assert s.studies.get(study["id"])["settings"].raters_per_unit == 4
    res.multiselect(key=f"sr_more_{study['id']}").select(run.id).run()
    res.button(key=f"sr_add_{study['id']}").click().run()
    ok(res)
    assert len(s.studies.units(study["id"])) == 8 + 1 + 3


def test_key_presses_are_applied_once_each_in_order():
    """The rating page applies the browser's key log: only presses it has not applied, in order,
    however many arrive in one rerun."""
    from studio.study_keys import apply_new

    got: list[str] = []
    assert apply_new("LR", 0, got.append) == 2 and got == ["left", "right"]
    assert apply_new("LRTTL", 2, got.append) == 5  # three presses folded into one rerun
    assert got == ["left", "right", "tie", "tie", "left"]
    assert apply_new("LRTTL", 5, got.append) == 5 and len(got) == 5  # a rerun with no new press
