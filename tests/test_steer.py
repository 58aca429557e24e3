"""`python -m rt_core steer`: a user's answer becomes a version the community reviews.

The scripted model (registered like any provider) answers, so every call goes the real
way (cache, parsing, usage) and its history counts the calls a steer makes.
"""
from __future__ import annotations

import json
import re
import threading

import pytest

from rt_core.__main__ import main
from rt_core.access import Action, RunFacts, Viewer, may
from rt_core.errors import InputError
from rt_core.run.steer.table import versions_of
from rt_core.store import open_store

NEW_Q1 = "How can star catalogue cross-matching find agents that browse the web badly?"


@pytest.fixture
def finished(tmp_path, demo, capsys):
    """A finished run with three reviewers, written by the scripted model."""
    db = str(tmp_path / "steer.sqlite3")
    assert main(["--db", db, "run", "--model", "scripted/demo", "--researchers",
                 "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854",
                 "--out-json", str(tmp_path / "run.json")]) == 0
    run_id = json.loads((tmp_path / "run.json").read_text())["id"]
    demo.history.clear()
    capsys.readouterr()
    return db, run_id


def steer(db: str, run_id: str, *args: str) -> int:
    return main(["--db", db, "steer", run_id, "--model", "scripted/demo", *args])


def test_a_steered_q1_is_the_text_given_and_a_repeat_makes_no_call(finished, demo, capsys, tmp_path):
    db, run_id = finished
    out = tmp_path / "version.json"
    assert steer(db, run_id, "--question", "1", "--text", NEW_Q1, "--out-json", str(out)) == 0
    captured = capsys.readouterr()
    printed = captured.out.split()
    calls, hits = map(int, re.search(r"(\d+) model calls, (\d+) answered from the cache", captured.err).groups())
    assert calls + hits == 3 + 1  # a review per reviewer and the meta-review: nothing else is redone
    assert re.search(r"This steer: about 4 \(up to \d+ with re-asks\) model calls", captured.err)  # said first
    doc = json.loads(out.read_text())
    assert doc["proposal"]["q1"] == NEW_Q1 and doc["id"] == run_id
    assert doc["version"]["id"] == printed[-1] and doc["version"]["parent"] == "v0"
    assert doc["version"]["author"] == "you" and doc["version"]["changed"] == ["q1"]
    # the reviews are new ones, about the edited text, by the run's reviewers
    assert len(doc["reviews"]) == 3 and all(NEW_Q1[:40] in r["strengths"] for r in doc["reviews"])
    assert doc["meta_review"]["score"] is not None
    assert len(demo.history) >= 2  # reviews and the meta-review were asked for

    demo.history.clear()
    assert steer(db, run_id, "--question", "1", "--text", NEW_Q1) == 0
    assert demo.history == []  # every call from the cache
    assert capsys.readouterr().out.split() == printed  # the same node, not a copy
    nodes = versions_of(open_store(db), run_id)
    assert [n.id for n in nodes] == ["v0", printed[-1]]
    assert nodes[1].answers()["q2"] == nodes[0].answers()["q2"]  # only Q1 changed


@pytest.mark.parametrize("args, words", [
    (("--question", "1", "--text", "x"), "Unknown run id"),
    (("--question", "6", "--text", "A new question?"), "there is no question 6"),
    (("--question", "2", "--text", "   "), "the new text for question 2 is empty"),
])
def test_bad_steers_get_one_clear_message_and_make_no_call(finished, demo, capsys, args, words):
    db, run_id = finished
    code = steer(db, "no-such-run" if words == "Unknown run id" else run_id, *args)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err
    assert demo.history == []
    assert [n.id for n in versions_of(open_store(db), run_id)] == ["v0"]


def test_steering_is_for_whoever_may_revise():
    facts = RunFacts("r1", owner_hash="h-owner")
    for viewer, linked in ((Viewer(), False), (Viewer(shared=True, owner_hash="h-owner"), False),
                           (Viewer(shared=True, operator=True), False),
                           (Viewer(shared=True, owner_hash="h-else"), True),
                           (Viewer(shared=True), False), (Viewer(shared=True, rater=True), True)):
        f = RunFacts(facts.run_id, owner_hash=facts.owner_hash, linked=linked)
        assert may(viewer, Action.STEER, f) == may(viewer, Action.REVISE, f)
    assert not may(Viewer(shared=True, owner_hash="h-else"), Action.STEER, RunFacts("r1", owner_hash="h-owner",
                                                                                     linked=True))


def test_a_steer_job_refuses_a_second_steer_of_its_run_and_counts_its_steps(finished, demo):
    """The app's steer runs in a job (rt_core/run/steer/job.py); the model is held until the
    second steer has been refused, so the first one is certainly still running."""
    from rt_core.run.steer import job as steer_job
    from rt_core.run.steer.steer import Steer

    db, run_id = finished
    store = open_store(db)
    gate, answer = threading.Event(), demo.responder

    def held(messages: list, params: dict) -> str:
        gate.wait(300)
        return answer(messages, params)

    demo.responder = held
    try:
        job = steer_job.start(store, run_id, Steer(question=1, text=NEW_Q1))
        with pytest.raises(InputError, match="being steered already"):
            steer_job.start(store, run_id, Steer(question=2, text="Another plan for the work."))
        assert steer_job.live(run_id) is job and not job.done
    finally:
        gate.set()
        demo.responder = answer
    assert job.wait(300) and job.error is None and not job.unexpected, (job.error, job.unexpected)
    assert job.steps == job.steps_done() == 3 + 1  # a review per reviewer and the meta-review
    assert [n.id for n in versions_of(store, run_id)] == ["v0", job.steered.last.id]
