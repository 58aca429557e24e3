"""The Ideas page through the entry file (AppTest): the bank listed and searched, an idea
starred, noted and exported, a seen-before idea followed to the earlier one, and on a shared
server a visitor's bank holding only their own runs' ideas (an open study's items hidden)."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import deployment
from rt_core.access import Viewer
from rt_core.types import Proposal, Run, RunConfig
from tests.apphelp import APP, goto, module_data_dir, record_downloads, shared_server
from tests.test_ideas_seen import SAME

data_dir = module_data_dir("ideas-app")
MINE, THEIRS = "browser-a-owner-token-0101", "browser-b-owner-token-0102"
OPERATOR = "operator-token-for-the-ideas-0103"
XSS = "<script>alert(1)</script> Can telescopes share time?"


def store():
    from rt_core.store import open_store

    return open_store()


def _run(run_id: str, token: str, created: str, q1: str, q5: str) -> str:
    run = Run(id=run_id, config=RunConfig(model="scripted/demo"), status="done", created_at=created,
              proposal=Proposal(q1=q1, q2="Why.", q3="Hard.", q4="New.", q5=q5))
    store().runs.create(run, owner_hash=deployment.token_hash(token))
    return run_id


@pytest.fixture(scope="module")
def runs():
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs

    AppTest.from_file(APP, default_timeout=120).run()  # the app's store, made as the app makes it
    a, b = SAME[0]
    ids = {"first": _run("first0000001", MINE, "2026-01-01T00:00:00+00:00", a["q1"], a["q5"]),
           "again": _run("again0000001", MINE, "2026-01-02T00:00:00+00:00", b["q1"], b["q5"]),
           "xss": _run("xss000000001", MINE, "2026-01-03T00:00:00+00:00", XSS, "Share it."),
           "theirs": _run("theirs000001", THEIRS, "2026-01-04T00:00:00+00:00", "How do bees dance?", "Film them."),
           "item": _run("item00000001", MINE, "2026-01-05T00:00:00+00:00", "How do ants vote?", "Count them."),
           "item2": _run("item00000002", THEIRS, "2026-01-06T00:00:00+00:00", "Do fish sleep?", "Watch them.")}
    create_from_runs(store(), [ids["item"], ids["item2"]], StudySettings(name="Blind", mode="absolute"),
                     real_arm=False)
    return ids


@pytest.fixture
def shared(monkeypatch):
    with shared_server(monkeypatch, OPERATOR):
        yield


def browser(token: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if token:
        at.session_state["_owner_token"] = token
    at.run()
    return goto(at, "ideas")


def listed(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["id"]) if at.dataframe else []


def test_a_visitor_sees_their_own_runs_ideas_and_no_study_item(runs, shared):
    at = browser(MINE)
    assert set(listed(at)) == {f"{runs[k]}:proposal" for k in ("first", "again", "xss")}
    assert set(listed(browser(THEIRS))) == {f"{runs['theirs']}:proposal"}


def test_star_note_export_and_the_seen_before_link(runs, monkeypatch):
    downloads = record_downloads(monkeypatch)
    at = browser()  # a personal server: everything
    assert len(listed(at)) == 6
    at.text_input(key="ideas_text").input("telescope").run()
    assert set(listed(at)[:3]) == {f"{runs[k]}:proposal" for k in ("first", "again", "xss")}
    # model text is shown as text: the script tag is a string in a text element, never HTML
    at.selectbox(key="ideas_pick").select(f"{runs['xss']}:proposal").run()
    assert XSS in [t.value for t in at.text]
    at.text_input(key="ideas_text").input("").run()
    at.selectbox(key="ideas_pick").select(f"{runs['again']}:proposal").run()
    assert any("Seen before" in i.value for i in at.info)
    at.button(key="ideas_open_seen").click().run()
    assert at.selectbox(key="ideas_pick").value == f"{runs['first']}:proposal"
    at.button(key="ideas_star").click().run()
    at.text_area(key=f"ideas_note_{runs['first']}:proposal").input("the one to try").run()
    at.button(key="ideas_note_save").click().run()
    assert not at.exception
    exported = json.loads(downloads["ideas.json"])
    assert [(i["id"], i["note"], i["starred"]) for i in exported] == [
        (f"{runs['first']}:proposal", "the one to try", True)]
    assert f"run `{runs['first']}`" in downloads["ideas.md"].decode()


def test_an_empty_bank_says_where_ideas_come_from(runs, shared):
    at = browser("browser-c-owner-token-0104")  # has started no run
    assert not at.dataframe and any("No ideas yet" in i.value for i in at.info)


def test_a_study_of_starred_ideas_from_two_runs_is_rated_blind(runs):
    from tests.test_study_app import join

    at = browser()
    for key in ("first", "xss"):
        at.selectbox(key="ideas_pick").select(f"{runs[key]}:proposal").run()
        if at.button(key="ideas_star").label == "Star":
            at.button(key="ideas_star").click().run()
    at.text_input(key="ideas_study_name").input("Two starred ideas").run()
    at.button(key="ideas_study_create").click().run()
    assert not at.exception  # the Create a study page now shows its links
    made = next(s for s in store().studies.list() if s["name"] == "Two starred ideas")
    assert {i.run_id for i in store().studies.items(made["id"]).values()} == {runs["first"], runs["xss"]}
    rater = join(made["code"], "ann")  # another session, through the join link
    shown = " ".join([t.value for t in rater.text] + [m.value for m in rater.markdown])
    assert SAME[0][0]["q1"] in shown  # the ideas themselves...
    assert not any(r in shown for r in runs.values()) and "scripted" not in shown  # ...and nothing else


def test_continue_from_an_idea_seeds_the_neighbourhood(runs):
    at = browser()
    at.selectbox(key="ideas_pick").select(f"{runs['first']}:proposal").run()
    at.button(key="ideas_continue").click().run()
    assert not at.exception
    assert at.session_state["sg_topic"] == SAME[0][0]["q1"]  # the topic for suggestions
    assert at.session_state["hood_p"]  # the papers nearest its problem


def test_the_map_of_the_bank_draws_and_keeps_its_axes(runs):
    at = browser()
    at.toggle(key="ideas_map_on").set_value(True).run()
    assert not at.exception
    assert any("the axes were fitted on" in c.value for c in at.caption)
    from rt_core.ideas import bank as ideas_bank
    from rt_core.ideas import bankmap

    first = bankmap.build(ideas_bank.for_store(store(), per_owner=False), Viewer())
    _run("later0000001", MINE, "2026-02-01T00:00:00+00:00", "Can glaciers sing?", "Record the ice.")
    later = bankmap.build(ideas_bank.for_store(store(), per_owner=False), Viewer())
    moved = {p.id: (p.x, p.y) for p in later.ideas}
    assert all(moved[p.id] == (p.x, p.y) for p in first.ideas)  # the new idea moved no old one
