"""A rater's submit is either stored (and the next item shown) or the page says it was not
stored, on every rerun until it is: never neither.

The lab-load test once waited 60 s on a rater whose item showed every criterion answered and
the rationale typed, with nothing stored and no message. The click had been handled before the
rerun that applied the last shortcut: the refusal ("answer every criterion first") was drawn by
that one run only, and the shortcut's rerun, a moment later, drew the item without it. Here the
same order of events, through app.py (AppTest): two criteria answered, Submit, the third answered.
"""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.apphelp import APP, errors, module_data_dir
from tests.test_study import seed_runs

data_dir = module_data_dir("rater-submit-data")


def joined(code: str, rater: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["study"] = code
    at.run()
    at.switch_page("pages/study_rate.py").run()
    at.text_input(key="rate_rater_input").input(rater)
    next(b for b in at.button if b.label == "Start or resume").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def position(at: AppTest) -> int:
    [key] = [b.key for b in at.button if b.key and b.key.startswith("rate_submit_")]
    return int(key.rsplit("_", 1)[1])


def warnings(at: AppTest) -> str:
    return "\n".join(w.value for w in at.warning)


def test_a_refused_submit_says_so_until_the_item_is_stored():
    from rt_core.store import open_store
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs

    store = open_store()
    study = create_from_runs(store, seed_runs(store), StudySettings(name="Submit study"))
    criteria = [c.name for c in store.studies.get(study["id"])["settings"].criteria]
    at = joined(study["code"], "gil")
    pos = position(at)
    for _ in criteria[:-1]:  # every criterion but the last
        at.button(key=f"rate_btn_left_{pos}").click().run()
    at.text_area(key=f"rate_why_{pos}").input("clear aims")
    at.radio(key=f"rate_conf_{pos}").set_value(4)
    at.button(key=f"rate_submit_{pos}").click().run()
    assert "answer every criterion" in errors(at) and criteria[-1] in errors(at)
    assert store.studies.answer_rows(study["id"]) == []

    # the last criterion answered in a rerun of its own (the shortcut that came just too late)
    at.button(key=f"rate_btn_left_{pos}").click().run()
    assert position(at) == pos and store.studies.answer_rows(study["id"]) == []
    assert "Not saved yet" in warnings(at), "an unsaved item is on screen without a word"
    assert not at.error

    at.button(key=f"rate_submit_{pos}").click().run()  # the rater presses Submit again
    assert not at.exception and not at.error
    assert position(at) != pos and "Not saved" not in warnings(at)
    rows = store.studies.answer_rows(study["id"])
    assert sorted(r["criterion"] for r in rows) == sorted(criteria)
    assert {r["choice"] for r in rows} == {"left"}
