"""The corpus keeps its integrity on a shared server (issue 48, point 3): a visitor's uploads
never change a record that was there before them; what they add is theirs (their searches,
pickers and runs), listed for the operator and shared with everybody only once published.
Store tests: they run on SQLite and PostgreSQL both (conftest.BOTH_BACKENDS)."""
import json

import pytest

from rt_core import access
from rt_core.deployment import token_hash
from rt_core.errors import InputError, NotFoundError
from rt_core.run.pipeline.simulation import Simulation
from rt_core.sources import parse_upload
from rt_core.types import Paper, RunConfig, RunRequest

OWNER, STRANGER, OPERATOR = (token_hash(t) for t in ("owner-token-0123456789", "stranger-token-0123456",
                                                      "operator-token-012345"))
BUNDLED = "arxiv:2410.16179"  # MagicPIG, a bundled paper


def view(store, owner_hash: str, operator: bool = False, shared: bool = True):
    """The store as that browser's pages (and the runs they start) see it."""
    viewer = access.Viewer(shared=shared, operator=operator, owner_hash=owner_hash)
    return store.seen_by(access.record_scope(viewer))


def upload(store, body: dict, name: str = "mine.json"):
    result = parse_upload(name, json.dumps(body).encode())
    assert result.errors == []
    return store.corpus.import_bundle(result.papers, result.researchers, origin="upload")


JANE = {"researchers": [{"name": "Jane Doe", "affiliation": "Good University", "papers": [
    {"title": "Sparse attention for long documents", "abstract": "We make attention sparse.",
     "year": 2022, "fields": ["nlp"]}]}]}


def snapshot(store, researcher_ids):
    c = store.corpus
    papers = c.search_papers("", limit=500)
    return {"papers": {p.id: p for p in papers}, "researchers": c.get_researchers(researcher_ids),
            "authors": c.authors_of([p.id for p in papers]),
            "ids": sorted(c.all_researcher_ids()), "found": [r.id for r in c.search_researchers("jane")]}


def test_a_strangers_upload_changes_nothing_anybody_else_sees(starter_store):
    operator, owner, stranger = (view(starter_store, h, operator=(h == OPERATOR))
                                 for h in (OPERATOR, OWNER, STRANGER))
    jane_id = upload(operator, JANE).researcher_ids[0]  # shared: the operator added her
    people = ["r-neubig-graham", jane_id]
    before = {v: snapshot(v, people) for v in (owner, operator)}
    original = owner.corpus.get_paper(BUNDLED)

    bundle = upload(stranger, {"papers": [
        {"title": "POISONED " + original.title, "arxiv_id": BUNDLED.split(":")[1],
         "abstract": "POISONED abstract", "fields": ["criminology"]},
        {"title": "Mallory's own results on sparse attention", "abstract": "Sparse attention, again.",
         "year": 2024, "fields": ["nlp"]}],
        "researchers": [{"name": "JANE DOE", "affiliation": "Fraud Inc",
                         "papers": [BUNDLED, "Mallory's own results on sparse attention"]}]})

    # the bundled paper was kept as it is and used in place of the upload's version
    assert bundle.papers.kept == {BUNDLED: BUNDLED} and bundle.paper_ids[0] == BUNDLED
    # the stranger's researcher is theirs, under an id of its own
    mine = bundle.researcher_ids[0]
    assert mine != jane_id and mine.startswith(jane_id + "~")
    for v in (owner, operator):
        assert snapshot(v, people) == before[v]  # every earlier record, its authors and searches
        assert not v.corpus.researcher_exists(mine) and mine not in v.corpus.all_researcher_ids()
        with pytest.raises(NotFoundError, match="Unknown researcher"):
            v.corpus.get_researchers([mine])
    assert owner.corpus.search_papers("POISONED") == [] and owner.corpus.search_papers("Mallory") == []
    assert starter_store.corpus.get_paper(BUNDLED) == original  # the rows themselves

    # the stranger sees the shared records unchanged, and their own
    assert stranger.corpus.get_paper(BUNDLED) == original
    theirs = stranger.corpus.get_researcher(mine)
    assert (theirs.name, theirs.affiliation) == ("JANE DOE", "Fraud Inc")
    own_paper = bundle.paper_ids[1]
    assert set(theirs.publication_ids) == {BUNDLED, own_paper}
    assert [p.id for p in stranger.corpus.search_papers("Mallory")] == [own_paper]
    assert mine in stranger.corpus.authors_of([BUNDLED])[BUNDLED]
    assert stranger.corpus.get_researcher(jane_id).name == "Jane Doe"

    # the operator lists them with who added them, and publishing shares them
    listed = {(r["kind"], r["id"]): r["added_by"] for r in operator.corpus.visitors_records()}
    assert listed == {("paper", own_paper): STRANGER, ("researcher", mine): STRANGER}
    assert owner.corpus.visitors_records() == []
    with pytest.raises(InputError, match="operator"):
        stranger.corpus.publish("researcher", [mine])
    assert operator.corpus.publish("researcher", [mine]) == 2  # with the paper added for them
    assert owner.corpus.get_researcher(mine).publication_ids == theirs.publication_ids
    assert owner.corpus.get_paper(BUNDLED) == original and operator.corpus.visitors_records() == []


def test_a_visitor_merges_into_their_own_records_and_never_into_anothers(store):
    stranger, owner = view(store, STRANGER), view(store, OWNER)
    first = stranger.corpus.upsert_papers([Paper(id="doi:10.1/own", title="A paper only I have",
                                                 doi="10.1/own", abstract="Our summary.",
                                                 abstract_source="summary")])
    assert first.added == ["doi:10.1/own"]
    again = stranger.corpus.upsert_papers([Paper(id="doi:10.1/own", title="A paper only I have",
                                                 doi="10.1/own", abstract="The real abstract.",
                                                 abstract_source="upload", year=2020)])
    assert again.merged == {"doi:10.1/own": "doi:10.1/own"}  # today's merge, on their own record
    assert stranger.corpus.get_paper("doi:10.1/own").abstract == "The real abstract."
    # another visitor's upload of the same id is theirs too, beside it, not into it
    other = owner.corpus.upsert_papers([Paper(id="doi:10.1/own", title="A paper only I have",
                                              doi="10.1/own", abstract="Mine says otherwise.")])
    copy_id = other.stored_id("doi:10.1/own")
    assert copy_id != "doi:10.1/own" and owner.corpus.get_paper(copy_id).abstract == "Mine says otherwise."
    assert stranger.corpus.get_paper("doi:10.1/own").abstract == "The real abstract."
    assert not owner.corpus.paper_exists("doi:10.1/own") and not stranger.corpus.paper_exists(copy_id)


def test_personal_servers_and_the_operator_keep_todays_merge(store):
    for who in (view(store, OWNER, shared=False), view(store, OPERATOR, operator=True)):
        who.corpus.upsert_papers([Paper(id="arxiv:2401.00001", title="Deep Stars in the Galactic Halo",
                                        arxiv_id="2401.00001", abstract="Our summary.",
                                        abstract_source="summary")])
        s = who.corpus.upsert_papers([Paper(id="doi:10.1/x", title="Deep stars", doi="10.1/x",
                                            arxiv_id="2401.00001", abstract="The real abstract.",
                                            abstract_source="arxiv")])
        assert s.merged == {"doi:10.1/x": "arxiv:2401.00001"}
    assert store.corpus.get_paper("arxiv:2401.00001").abstract == "The real abstract."
    assert store.corpus.visitors_records() == []  # shared: nothing waits for publishing


def test_the_rule(store):
    """access.may_see_record and the corpus's SQL of it agree, for each kind of viewer."""
    for added_by in ("", OWNER, STRANGER):
        store.corpus.db.conn.execute(
            "INSERT INTO papers(id, title, added_by) VALUES (?, ?, ?)", (f"p{added_by[:4]}", "t", added_by))
    for viewer in (access.Viewer(shared=True, owner_hash=OWNER), access.Viewer(shared=False, owner_hash=OWNER),
                   access.Viewer(shared=True, operator=True, owner_hash=OPERATOR),
                   access.Viewer(shared=True, owner_hash="")):
        scope = access.record_scope(viewer)
        seen = {p.id for p in store.seen_by(scope).corpus.search_papers("", limit=10)}
        assert seen == {f"p{a[:4]}" for a in ("", OWNER, STRANGER) if access.may_see_record(scope, a)}
        assert bool(access.may_change_record(scope, "")) == viewer.privileged
        assert access.may_change_record(scope, STRANGER).reason == access.KEPT_SHARED
        assert bool(access.may(viewer, access.Action.PUBLISH)) == viewer.privileged
    nobody = store.seen_by(access.record_scope(access.Viewer(shared=True, owner_hash="")))
    with pytest.raises(InputError, match="owner token"):
        nobody.corpus.upsert_papers([Paper(id="x", title="Unowned")])


def _request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", **cfg}), max_retries=0)


def test_runs_use_their_starters_records_and_nobody_elses(community, demo):
    """A run reads researchers and papers through its starter's view: the stranger's run uses
    what the stranger added; the owner's never picks it as a reviewer, nor may name it."""
    stranger, owner = view(community, STRANGER), view(community, OWNER)
    bundle = upload(stranger, {"researchers": [{"name": "Mallory Agents", "papers": [
        {"title": "Web agents that plan with language models"},  # p-agents, by its title
        {"title": "Web agents that plan with language models on real websites",
                     "abstract": "Language model web agents plan multi-step tasks on websites.",
                     "fields": ["nlp"]}]}]})
    mallory = bundle.researcher_ids[0]
    assert bundle.paper_ids[0] == "p-agents"
    run = Simulation(_request(researcher_ids=["r-nia"], paper_ids=["p-agents"], num_reviewers=4),
                     owner).run_sync()
    assert run.status == "done" and {r.reviewer_id for r in run.reviews} == {"r-ada", "r-cole", "r-sam", "r-lee"}
    with pytest.raises(NotFoundError, match="Unknown researcher id"):
        Simulation(_request(researcher_ids=["r-nia"], paper_ids=["p-agents"], reviewer_ids=[mallory]),
                   owner).start()
    sim = Simulation(_request(researcher_ids=[mallory], paper_ids=bundle.paper_ids[1:], num_reviewers=1),
                     stranger)
    sim.start()
    sim.state.recorder.owner_hash = STRANGER  # as jobs.start stores a browser's run
    theirs = sim.run_sync()
    assert theirs.status == "done" and mallory in theirs.profiles
    # the operator resumes, revises, steers or credits it with the records it was built from
    operator = view(community, OPERATOR, operator=True)
    assert not operator.corpus.researcher_exists(mallory)
    assert operator.for_run(theirs.id).corpus.researcher_exists(mallory)
    assert operator.for_run(run.id) is operator  # a run stored without an owner: as it is


@pytest.mark.parametrize("walk", [False, True])
def test_every_search_holds_the_shared_records_and_the_browsers_own(store, monkeypatch, walk):
    """Word, field and word-with-field searches, each plan (PostgreSQL's walk of one field's
    newest papers too), and the search of researchers, see the same records."""
    from rt_core.store.search import PostgresSearch

    if walk:  # the walk is PostgreSQL's plan for a word in one field; force it where it exists
        monkeypatch.setattr(PostgresSearch, "walks_field", staticmethod(lambda db, q, f: len(f) == 1))
    for who, tag in (("", "shared"), (OWNER, "owner"), (STRANGER, "stranger")):
        v = view(store, who or OPERATOR, operator=not who)
        v.corpus.import_bundle([Paper(id=f"p-{tag}", title=f"Galaxy halos seen by the {tag}",
                                      fields=["astro"])], [])
    owner = view(store, OWNER).corpus
    expected = {"p-shared", "p-owner"}
    assert {p.id for p in owner.search_papers("galaxy", ["astro"])} == expected
    assert set(owner.search_paper_ids("galaxy", ["astro"])) == expected
    assert {p.id for p in owner.search_papers("galaxy")} == expected
    assert {p.id for p in owner.search_papers("", ["astro"])} == expected
    assert set(owner.any_word_ids(["galaxy", "halos"], ["astro"], 10)) == expected
    assert set(owner.paper_choices()) == expected
