"""The bank of ideas (store/ideas.py, rt_core/ideas/bank.py, the `ideas` command): written when a
run or a version is saved, filled for runs made before it, searched by words and meaning,
filtered and paged, seen as the access rule says, and refused with one message for an
unknown idea. Both store engines."""
from __future__ import annotations

import csv
import io
import json

import pytest

from rt_core import access
from rt_core.__main__ import main
from rt_core.access import RunFacts, Viewer
from rt_core.errors import InputError, NotFoundError
from rt_core.ideas.bank import Bank, Query
from rt_core.ideas.export import export
from rt_core.models.embed import Embedder
from rt_core.run.steer import table
from rt_core.run.steer.tree import Version
from rt_core.store.migrator import migrate
from rt_core.types import Candidate, Lead, MetaReview, Proposal, Round, Run, RunConfig

ME, OTHER = "h-me", "h-other"
VISITOR = Viewer(shared=True, owner_hash=ME)
OPERATOR = Viewer(shared=True, operator=True)


@pytest.fixture(scope="module")
def minilm():
    return Embedder().encode


def _brainstorm(run_id: str, created: str, model: str = "scripted/demo") -> Run:
    """Two candidates (one of astronomy, one of NLP) and a revision round of the winner."""
    c1 = Candidate("c1", Proposal(q1="Can telescope time be scheduled around cloudy nights?",
                                  q5="Forecast the weather and reorder the observing queue."),
                   lead=Lead(fields=["astronomy"]), meta_review=MetaReview(score=7.5))
    c2 = Candidate("c2", Proposal(q1="Do language models memorise benchmark answers?",
                                  q5="Probe models with partial benchmark prompts."),
                   lead=Lead(fields=["nlp"]), meta_review=MetaReview(score=5.0))
    rounds = [Round(0, c1.proposal), Round(1, Proposal(q1=c1.proposal.q1 + " Revised.", q5=c1.proposal.q5),
                                                meta_review=MetaReview(score=8.0))]
    return Run(id=run_id, config=RunConfig(model=model, researcher_ids=["r-ada"], paper_ids=["p-gaia"]),
               status="done", created_at=created, candidates=[c1, c2], proposal=c1.proposal, rounds=rounds)


def _version(run_id: str) -> Version:
    return Version("s0123456789", run_id, parent="c2", author="you", kind="edit",
                   proposal=Proposal(q1="Do language models memorise the answers of code benchmarks?",
                                     q5="Probe them."), created_at="2026-03-01T00:00:00+00:00")


def test_a_saved_run_and_a_steered_version_are_ideas_of_the_bank(community):
    community.runs.create(_brainstorm("b1", "2026-02-01T00:00:00+00:00"))
    assert table.save(community, _version("b1"))
    rows = {r["id"]: r for r in community.ideas.get(["b1:c1", "b1:c2", "b1:round1", "b1:s0123456789"])}
    assert set(rows) == {"b1:c1", "b1:c2", "b1:round1", "b1:s0123456789"}  # the proposal is c1
    assert json.loads(rows["b1:c1"]["fields_json"]) == ["astronomy"]
    assert rows["b1:round1"]["parent"] == "c1" and rows["b1:round1"]["score"] == 8.0
    assert rows["b1:s0123456789"]["kind"] == "version" and rows["b1:s0123456789"]["parent"] == "c2"
    # the version's neighbourhood is its run's: r-ada works on astronomy
    assert json.loads(rows["b1:s0123456789"]["fields_json"]) == ["astronomy"]
    assert json.loads(rows["b1:s0123456789"]["researcher_ids_json"]) == ["r-ada"]
    community.runs.delete("b1")  # a deleted run takes its ideas with it
    assert community.ideas.count() == 0


def test_runs_made_before_the_bank_are_in_it_after_the_migration(community):
    community.runs.create(_brainstorm("old", "2025-12-01T00:00:00+00:00"))
    table.save(community, _version("old"))
    conn = community.db.conn  # the store as it was before migration m024
    conn.execute("DROP TABLE ideas")
    conn.execute("DELETE FROM _migrations WHERE name='m024_ideas'")
    assert migrate(conn) == ["m024_ideas"]
    assert sorted(r["id"] for r in community.ideas.select()) == ["old:c1", "old:c2", "old:round1",
                                                                "old:s0123456789"]


@pytest.fixture
def bank(community, minilm):
    community.runs.create(_brainstorm("mine", "2026-01-10T00:00:00+00:00"), owner_hash=ME)
    community.runs.create(_brainstorm("theirs", "2026-02-10T00:00:00+00:00", model="other/model"),
                          owner_hash=OTHER)
    return Bank(community, minilm)


def _ids(page) -> list[str]:
    return [i.id for i in page.ideas]


def test_search_by_words_and_by_meaning(bank):
    by_words = bank.find(OPERATOR, Query(text="telescope"))
    assert set(_ids(by_words)[:4]) == {"mine:c1", "mine:round1", "theirs:c1", "theirs:round1"}
    # no word in common with the idea: found by its meaning
    meaning = bank.find(OPERATOR, Query(text="observatory planning under bad weather"))
    assert _ids(meaning)[0] in ("mine:c1", "mine:round1", "theirs:c1", "theirs:round1")
    assert meaning.ideas[0].match is not None
    assert "mine:c2" not in _ids(meaning)[:4]


def test_filters_and_pages(bank):
    everything = bank.find(OPERATOR, Query(per_page=100))
    assert everything.total == 6 and _ids(everything)[:3] == ["theirs:c1", "theirs:c2", "theirs:round1"]
    assert set(_ids(bank.find(OPERATOR, Query(field="nlp")))) == {"mine:c2", "theirs:c2"}
    assert set(_ids(bank.find(OPERATOR, Query(model="other/model")))) == {"theirs:c1", "theirs:c2",
                                                                          "theirs:round1"}
    assert set(_ids(bank.find(OPERATOR, Query(min_score=7.5)))) == {"mine:c1", "mine:round1", "theirs:c1",
                                                                    "theirs:round1"}
    assert set(_ids(bank.find(OPERATOR, Query(since="2026-02-01")))) == {"theirs:c1", "theirs:c2",
                                                                         "theirs:round1"}
    assert set(_ids(bank.find(OPERATOR, Query(until="2026-02-01")))) == {"mine:c1", "mine:c2", "mine:round1"}
    bank.star(OPERATOR, "mine:c2")
    assert _ids(bank.find(OPERATOR, Query(starred=True))) == ["mine:c2"]
    pages = [bank.find(OPERATOR, Query(page=n, per_page=4)) for n in range(2)]
    assert [len(p.ideas) for p in pages] == [4, 2] and pages[0].pages == 2
    assert _ids(pages[0]) + _ids(pages[1]) == _ids(everything)
    with pytest.raises(InputError):
        bank.find(OPERATOR, Query(page=-1))


def test_a_visitor_sees_the_ideas_of_their_own_runs_and_the_operator_all(bank):
    assert set(_ids(bank.find(VISITOR, Query(per_page=100)))) == {"mine:c1", "mine:c2", "mine:round1"}
    assert bank.find(OPERATOR, Query(per_page=100)).total == 6
    assert bank.find(Viewer(), Query(per_page=100)).total == 6  # a personal server: one person
    with pytest.raises(NotFoundError) as hidden:
        bank.star(VISITOR, "theirs:c1")
    with pytest.raises(NotFoundError) as unknown:
        bank.one(VISITOR, "nothing:c9")
    # another's idea is refused in the words of one that does not exist: nothing is revealed
    assert str(hidden.value).replace("theirs:c1", "X") == str(unknown.value).replace("nothing:c9", "X")
    assert not bank.one(OPERATOR, "theirs:c1").starred


def test_an_item_of_an_open_study_is_hidden_from_everybody_but_the_operator():
    facts = RunFacts("r1", owner_hash=ME, open_studies=frozenset({"st1"}))
    assert not access.may_see_idea(VISITOR, facts, "r1:c1")
    assert access.may_see_idea(OPERATOR, facts, "r1:c1")
    assert access.may_see_idea(VISITOR, RunFacts("r1", owner_hash=ME), "r1:c1")
    assert not access.may_see_idea(Viewer(rater=True), RunFacts("r1"), "r1:c1")


def test_notes_and_exports_carry_the_run_version_and_neighbourhood(bank):
    bank.star(OPERATOR, "mine:c1")
    bank.note(OPERATOR, "mine:c1", "=HYPERLINK(\"x\") try this first")
    starred = bank.starred(OPERATOR)
    rows = list(csv.DictReader(io.StringIO(export(starred, "csv"))))
    assert [(r["id"], r["run_id"], r["version"], r["researcher_ids"], r["paper_ids"]) for r in rows] == [
        ("mine:c1", "mine", "c1", "r-ada", "p-gaia")]
    assert rows[0]["note"].startswith("'=")  # a spreadsheet shows it, never runs it
    md = export(starred, "md")
    assert "run `mine`, version `c1`" in md and "researchers r-ada; papers p-gaia" in md
    assert json.loads(export(starred, "json"))[0]["note"].startswith("=HYPERLINK")
    with pytest.raises(InputError, match="unknown export format"):
        export(starred, "pdf")


def test_the_command_line(bank, community, capsys):
    db = str(community.db.url or community.db.path)
    assert main(["--db", db, "ideas", "list", "--json", "--per-page", "2"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 2 and {"id", "run_id", "version", "q1", "fields", "seen_before"} <= set(listed[0])
    # the command line is the personal server's one person: "theirs" repeats "mine" word for word
    assert [(i["id"], i["seen_before"]) for i in listed] == [("theirs:c1", "mine:c1"), ("theirs:c2", "mine:c2")]
    assert main(["--db", db, "ideas", "search", "telescope", "--json"]) == 0
    assert {i["id"] for i in json.loads(capsys.readouterr().out)[:4]} == {"mine:c1", "mine:round1", "theirs:c1",
                                                                        "theirs:round1"}
    assert main(["--db", db, "ideas", "star", "theirs:c2"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "ideas", "export", "--starred", "--format", "json"]) == 0
    assert [i["id"] for i in json.loads(capsys.readouterr().out)] == ["theirs:c2"]
    assert main(["--db", db, "ideas", "star", "nope:c1"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "no idea nope:c1" in err and "Traceback" not in err
