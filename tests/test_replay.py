"""Replaying a real paper of the starter community (node masking) on the scripted model."""
from __future__ import annotations

import re

import pytest

from rt_core.run.replay.paper import Replay, chance_band, neighbourhood
from rt_core.types import RunConfig, RunRequest

TARGET = "arxiv:2410.16179"  # MagicPIG (2024): three authors, five cited papers in the store


def request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", "num_reviewers": 2, **cfg}),
                      max_retries=0)


def test_neighbourhood_is_the_authors_before_the_year_and_the_cited_papers(starter_store):
    target = starter_store.corpus.get_paper(TARGET)
    hood = neighbourhood(starter_store, TARGET)
    assert hood.cutoff_year == target.year - 1
    assert set(hood.paper_ids) == set(target.references) and TARGET not in hood.paper_ids
    assert set(hood.researcher_ids) <= set(starter_store.corpus.authors_of([TARGET])[TARGET])
    assert hood.researcher_ids


def words8(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i:i + 8]) for i in range(max(0, len(words) - 7))}


def test_replay_runs_modes_side_by_side_and_the_hidden_paper_never_reaches_a_prompt(
        starter_store, demo):
    target = starter_store.corpus.get_paper(TARGET)
    events = []
    result = Replay(request(), starter_store, TARGET, on_progress=events.append).run_sync()
    rows = {r["mode"]: r for r in result.rows()}
    assert list(rows) == ["self", "agent", "data", "global"]
    for row in rows.values():
        assert row["status"] == "done" and row["mean"] is not None, row
        assert all(row[k] is not None for k in ("q1", "q2", "q3", "q4", "q5"))
    # One evaluator for every mode, and it says where the reference came from.
    assert result.reference_source.startswith("shipped summary")
    assert {result.runs[m].similarity.evaluator for m in rows} == {result.evaluator}
    assert result.chance is not None and result.chance.n >= 3
    assert result.chance.low <= result.chance.median <= result.chance.high
    # Shared stages ran once: each author's profile was asked for once, not once per mode.
    names = starter_store.corpus.researcher_names(result.neighbourhood["researcher_ids"])
    for name in names.values():
        asked = [h for h in demo.history
                 if f"publications by {name}," in h["messages"][-1]["content"]]
        assert len(asked) == 1, name
    assert result.runs["agent"].profiles.keys() >= names.keys()
    # The masked paper: neither its title, nor any 8 words of its abstract, nor its
    # five-question summary reach any prompt of any mode.
    hidden = words8(target.abstract)
    summary = starter_store.references.summary(TARGET).answers
    for h in demo.history:
        text = "\n".join(str(m.get("content", "")) for m in h["messages"])
        assert target.title.lower() not in text.lower()
        assert not (words8(text) & hidden)
        assert all(getattr(summary, k)[:60] not in text for k in ("q1", "q2", "q3", "q4", "q5"))
    assert any(e.agent.startswith("global: ") for e in events)


def test_a_mode_that_cannot_run_is_reported_and_the_others_go_on(starter_store, demo):
    result = Replay(request(num_reviewers=0), starter_store, TARGET, modes=["data", "agent"],
                    references=[]).run_sync()
    rows = {r["mode"]: r for r in result.rows()}
    assert rows["data"]["status"] == "not run" and "paper" in rows["data"]["error"]
    assert rows["agent"]["status"] == "done"


def test_chance_band_excludes_related_papers(starter_store):
    from rt_core.models.embed import Embedder
    from rt_core.run.evidence.evaluate import Reference
    from rt_core.run.replay.paper import unrelated_ids

    target = starter_store.corpus.get_paper(TARGET)
    ref = Reference(target, starter_store.references.summary(TARGET).answers, "summary")

    class Count(Embedder):
        def __init__(self):
            super().__init__("local/all-MiniLM-L6-v2")

    band = chance_band(starter_store, Count(), ref)
    related = unrelated_ids(starter_store, target)
    pool = [r.paper_id for r in starter_store.references.all_with_answers()]
    assert band.n == len([p for p in pool if p not in related])
    assert TARGET in related


G = "/graph/v1"
NEW = {"paperId": "n1", "externalIds": {"ArXiv": "2501.01234"}, "title": "Sparse attention for long agents",
       "abstract": "We study sparse attention.", "venue": "arXiv", "year": 2025,
       "fieldsOfStudy": ["Computer Science"], "url": "https://example.org/n1",
       "authors": [{"authorId": "1", "name": "Beidi Chen"}, {"authorId": "2", "name": "Ann Newcomer"}]}
CITED_KNOWN = {"paperId": "k1", "externalIds": {"ArXiv": "2306.14048"}, "title": "H2O (as S2 spells it)",
               "abstract": None, "venue": "", "year": 2023, "fieldsOfStudy": [], "url": "", "authors": []}
CITED_NEW = {"paperId": "k2", "externalIds": {"DOI": "10.1000/xyz"}, "title": "A cited paper new to the store",
             "abstract": "Text.", "venue": "", "year": 2022, "fieldsOfStudy": [], "url": "", "authors": []}


def serve_new_paper(fake_server):
    fake_server.json(G + "/paper/ARXIV:2501.01234", NEW)
    fake_server.json(G + "/paper/ARXIV:2501.01234/references",
                     {"offset": 0, "data": [{"citedPaper": CITED_KNOWN}, {"citedPaper": CITED_NEW}]})


def test_a_paper_imported_by_arxiv_id_brings_its_cite_edges_and_known_authors(
        starter_store, fake_server, sleeps):
    from rt_core.errors import InputError
    from rt_core.run.replay.paper import import_target
    from rt_core.sources.semantic_scholar import SemanticScholar

    serve_new_paper(fake_server)
    with SemanticScholar(base_url=fake_server.url + G, sleep=sleeps, timeout=5) as s2:
        pid = import_target(starter_store, "https://arxiv.org/abs/2501.01234", s2)
        with pytest.raises(InputError, match="neither an arXiv id nor a DOI"):
            import_target(starter_store, "not an id", s2)
    paper = starter_store.corpus.get_paper(pid)
    assert set(paper.references) == {"arxiv:2306.14048", "doi:10.1000/xyz"}  # merged with H2O
    assert "r-chen-beidi" in starter_store.corpus.authors_of([pid])[pid]
    hood = neighbourhood(starter_store, pid)
    assert hood.researcher_ids == ["r-chen-beidi"] and hood.cutoff_year == 2024


def test_cli_replay_imports_then_replays(tmp_path, fake_server, demo, monkeypatch, capsys):
    from rt_core.__main__ import main

    serve_new_paper(fake_server)
    monkeypatch.setenv("RT_S2_URL", fake_server.url + G)
    code = main(["--db", str(tmp_path / "i.sqlite3"), "replay", "2501.01234", "--import",
                 "--modes", "self,agent", "--model", "scripted/demo"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "imported arxiv:2501.01234" in out.err
    # No five answers for a new paper: whole-text similarity, and the output says so.
    assert "reference: abstract, whole text" in out.out and out.out.count("\tdone") == 2


def test_a_replay_takes_only_the_settings_it_offers(starter_store, demo):
    """The app's request carries the Run page's whole loop (candidates, novelty, a revision
    round, named reviewers); a replay with 0 reviewers must not inherit the round, which it
    cannot run and offers no field to turn off. Its runs keep the starter's owner hash."""
    loop = request(num_reviewers=0, revision_rounds=1, candidates=4, check_novelty=True,
                   reviewer_ids=["r-neubig-graham"], max_tokens=500_000, temperature=0.3)
    replay = Replay(loop, starter_store, TARGET, modes=["self"], owner_hash="the-starters-hash")
    assert not replay.errors, replay.errors
    config = replay.sims["self"].config
    assert (config.revision_rounds, config.candidates, config.check_novelty, config.reviewer_ids) == \
        (0, 1, False, [])  # not offered: defaults
    assert (config.num_reviewers, config.max_tokens, config.temperature) == (0, 500_000, 0.3)  # offered
    run = replay.run_sync().runs["self"]
    assert run.status == "done", run.errors
    assert starter_store.runs.owner_hash(run.id) == "the-starters-hash"
