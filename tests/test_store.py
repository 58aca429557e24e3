import threading

import pytest

from rt_core import community
from rt_core.errors import NotFoundError
from rt_core.types import Paper, Researcher, Run, RunConfig


def test_duplicates_merge_by_arxiv_id_doi_or_title(store):
    store.corpus.upsert_papers([Paper(id="arxiv:2401.00001", title="Deep Stars in the Galactic Halo",
                                      arxiv_id="2401.00001", abstract="Our summary.",
                                      abstract_source="summary")])
    s = store.corpus.upsert_papers([
        Paper(id="doi:10.1/x", title="Deep stars in the galactic halo!", doi="10.1/X", abstract="The real abstract.",
              abstract_source="arxiv", year=2024),
        Paper(id="s2:abc", title="Something else", arxiv_id="2401.00001"),
    ])
    assert s.added == [] and s.merged == {"doi:10.1/x": "arxiv:2401.00001", "s2:abc": "arxiv:2401.00001"}
    p = store.corpus.get_paper("arxiv:2401.00001")
    assert p.abstract == "The real abstract." and p.abstract_source == "arxiv"  # real beats summary
    assert p.doi == "10.1/x" and p.year == 2024
    assert store.counts()["papers"] == 1


def test_search_is_full_text_with_field_filters(store):
    store.corpus.upsert_papers([Paper(id="a", title="Galaxy rotation", abstract="dark matter halos", fields=["astro"]),
                         Paper(id="b", title="Language agents", abstract="galaxy of tools", fields=["nlp"])])
    assert [p.id for p in store.corpus.search_papers("galaxy")] in (["a", "b"], ["b", "a"])
    assert [p.id for p in store.corpus.search_papers("galaxy", fields=["nlp"])] == ["b"]
    assert [p.id for p in store.corpus.search_papers("halo")] == ["a"]  # prefix match
    assert store.corpus.search_papers('"; DROP TABLE papers; --') == []  # hostile text is just words
    assert store.counts()["papers"] == 2


def test_field_filter_follows_fields_added_by_a_later_import(store):
    """A field filter keeps papers in any of the given fields, including a field that a
    duplicate brought in after the paper was first stored (PostgreSQL filters on a copy of
    the fields kept on the paper's row; it must not go stale)."""
    store.corpus.upsert_papers([Paper(id="a", title="Galaxy rotation curves", fields=["astro"]),
                                Paper(id="b", title="Galaxy of language tools", fields=["nlp", "hci"]),
                                Paper(id="c", title="Galaxy surveys by citizens")])
    assert [p.id for p in store.corpus.search_papers("galaxy", fields=["hci"])] == ["b"]
    assert {p.id for p in store.corpus.search_papers("galaxy", fields=["astro", "nlp"])} == {"a", "b"}
    assert store.corpus.search_papers("galaxy", fields=["sociology"]) == []
    store.corpus.upsert_papers([Paper(id="c2", title="Galaxy surveys by citizens", fields=["sociology"]),
                                Paper(id="a", title="Galaxy rotation curves", fields=["astro", "stats"])])
    assert [p.id for p in store.corpus.search_papers("galaxy", fields=["sociology"])] == ["c"]
    assert [p.id for p in store.corpus.search_papers("gal", fields=["stats"])] == ["a"]
    assert [p.id for p in store.corpus.search_papers("", fields=["sociology"])] == ["c"]
    assert store.corpus.get_paper("a").fields == ["astro", "stats"]
    assert store.corpus.get_paper("c").fields == ["sociology"]


@pytest.mark.parametrize("walk", [True, False])
def test_a_field_filter_keeps_the_unfiltered_order_restricted_to_the_field(store, monkeypatch, walk):
    """Filtering to one field gives the unfiltered results of that field, in the same
    order, whichever plan PostgreSQL uses (the walk of the field's newest papers, or the
    filter on the row's field list): for papers stored first, a paper stored later, and
    a paper that a merge puts in the field."""
    from rt_core.store.search import PostgresSearch

    monkeypatch.setattr(PostgresSearch, "WALK_FROM", 0.0 if walk else 2.0)
    monkeypatch.setattr(PostgresSearch, "WALK_BELOW", 0.0)
    store.corpus.upsert_papers([
        Paper(id=f"p{i}", title=f"Galaxy study {i}", abstract="galaxy " * (i % 4 + 1) + "halo",
              fields=["astro"] if i % 3 else ["nlp", "astro"] if i % 2 else ["nlp"])
        for i in range(30)])
    store.corpus.upsert_papers([Paper(id="late", title="Galaxy galaxy galaxy survey", fields=["nlp"])])
    store.corpus.upsert_papers([Paper(id="p1b", title="Galaxy study 1", fields=["nlp"])])  # merges into p1

    def check():
        every = store.corpus.search_papers("galax", limit=500)
        for field in ("nlp", "astro"):
            want = [p.id for p in every if field in p.fields]
            assert [p.id for p in store.corpus.search_papers("galax", fields=[field], limit=500)] == want
            assert store.corpus.search_paper_ids("galax", [field], limit=500) == want
            assert [p.id for p in store.corpus.search_papers("galax", fields=[field], limit=5,
                                                            offset=3)] == want[3:8]
        return every

    every = check()
    assert "late" in [p.id for p in every] and "nlp" in store.corpus.get_paper("p1").fields
    assert "p1" in store.corpus.search_paper_ids("galax", ["nlp"], limit=500)


def test_get_papers_keeps_the_order_asked_across_chunks(store):
    """Papers are read in chunks of 500: order, references and fields stay each paper's own."""
    store.corpus.upsert_papers([Paper(id=f"p{i}", title=f"Paper number {i}", fields=[f"f{i % 3}"],
                                      references=[f"r{i}b", f"r{i}a"] if i % 250 == 0 else [])
                                for i in range(1200)])
    asked = [f"p{i}" for i in range(1199, -1, -7)]
    got = store.corpus.get_papers(asked)
    assert [p.id for p in got] == asked
    assert all(p.fields == [f"f{int(p.id[1:]) % 3}"] for p in got)
    assert store.corpus.get_paper("p1000").references == ["r1000a", "r1000b"]
    assert store.corpus.get_paper("p999").references == []
    with pytest.raises(NotFoundError, match="nope"):
        store.corpus.get_papers([*asked, "nope"])


def test_import_is_all_or_nothing(store):
    with pytest.raises(NotFoundError), store.transaction():
        store.corpus.upsert_papers([Paper(id="ok", title="Fine paper")])
        store.corpus.upsert_researchers([Researcher(id="r", name="R", publication_ids=["missing"])])
    assert store.counts()["papers"] == 0 and store.counts()["researchers"] == 0


def test_unknown_ids_are_named(store):
    store.corpus.upsert_papers([Paper(id="a", title="A paper")])
    with pytest.raises(NotFoundError, match="b, c"):
        store.corpus.get_papers(["a", "b", "c"])


def test_runs_round_trip_list_and_delete(store):
    run = Run(id="run1", config=RunConfig(researcher_ids=["x"]), status="done", created_at="2026-01-01")
    store.runs.save(run, title="A run")
    assert store.runs.load("run1") == run
    assert [r["id"] for r in store.runs.list(text="A run")] == ["run1"]
    assert store.runs.delete("run1")
    with pytest.raises(NotFoundError):
        store.runs.load("run1")


def test_concurrent_writers_from_threads(store):
    errors = []

    def writer(n):
        try:
            for i in range(20):
                store.corpus.upsert_papers([Paper(id=f"t{n}-{i}", title=f"Thread {n} paper {i}")])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.counts()["papers"] == 80


def test_starter_community_loads_once_and_is_consistent(store):
    assert community.ensure_loaded(store) is True
    assert community.ensure_loaded(store) is False
    counts = store.counts()
    assert counts["papers"] >= 80 and counts["researchers"] >= 30 and counts["fields"] >= 10
    for r in store.corpus.search_researchers(limit=1000):
        assert len(r.publication_ids) >= 3, r.name
    fields = {f["id"]: f for f in store.corpus.list_fields()}
    for f in ("nlp", "astronomy", "biology", "criminology", "mathematics", "systems"):
        assert fields[f]["papers"] >= 5 and fields[f]["researchers"] >= 2
    for p in community.presets():
        store.corpus.get_researchers(p["researcher_ids"])
        store.corpus.get_papers(p["paper_ids"])
    assert store.corpus.search_papers("Gaia Data Release 3")
    # our summaries are marked as such
    assert {p.abstract_source for p in store.corpus.search_papers(limit=1000)} == {"summary"}


def test_caches_can_be_cleared(store):
    store.llm_cache.put("k", "m", "text", 1, 1)
    store.http_cache.set("http-key", "{}")
    assert store.cache_sizes()["llm_cache"] == 1
    store.clear_caches()
    assert store.cache_sizes() == {"llm_cache": 0, "embedding_cache": 0, "http_cache": 0, "profiles": 0}


def test_http_cache_entries_expire(store):
    store.http_cache.set("k", "body")
    assert store.http_cache.get("k") == "body"
    store.db.conn.execute("UPDATE http_cache SET created_at=datetime('now', '-8 days')")
    assert store.http_cache.get("k") is None


def test_researcher_search_follows_updates(store):
    store.corpus.upsert_researchers([Researcher(id="r", name="Ada Lovelace", affiliation="Old Place")])
    store.corpus.upsert_researchers([Researcher(id="r", name="Ada Lovelace", affiliation="")])  # keeps Old Place
    assert [r.id for r in store.corpus.search_researchers("Old Place")] == ["r"]
    store.corpus.upsert_researchers([Researcher(id="r", name="Ada Lovelace", affiliation="New Lab")])
    assert store.corpus.search_researchers("Old Place") == []
    assert [r.id for r in store.corpus.search_researchers("New Lab")] == ["r"]


def test_search_ranking_contract_is_the_same_on_both_engines(store, monkeypatch):
    """Every word must match, the last as a prefix; the better match comes first; only the
    FTS_WINDOW most recently added matches are ranked; reviewer candidates match any word."""
    store.corpus.upsert_papers([
        Paper(id="old", title="Galaxy rotation curves of galaxy clusters", abstract="galaxy rotation"),
        Paper(id="once", title="A survey of instruments", abstract=(
            "We describe telescopes, detectors, pipelines, archives and one galaxy rotation study "
            "among many calibration campaigns, data releases and software packages.")),
        Paper(id="often", title="Galaxy rotation", abstract="Galaxy rotation and more galaxy rotation."),
        Paper(id="other", title="Galaxy mergers", abstract="Tidal tails.", authors=["Rota Vera"]),
    ])
    store.corpus.upsert_researchers([Researcher(id="r-often", name="R", publication_ids=["often"]),
                                     Researcher(id="r-other", name="O", publication_ids=["other"])])
    assert [p.id for p in store.corpus.search_papers("galaxy rotation")][:2] in (["often", "old"],
                                                                                ["old", "often"])
    assert [p.id for p in store.corpus.search_papers("galaxy rotation")][-1] == "once"
    assert {p.id for p in store.corpus.search_papers("galaxy rot")} == {"old", "once", "often", "other"}
    assert [p.id for p in store.corpus.search_papers("vera")] == ["other"]  # authors are indexed
    monkeypatch.setattr("rt_core.store.corpus_search.FTS_WINDOW", 2)
    assert {p.id for p in store.corpus.search_papers("galaxy rotation")} == {"once", "often"}
    assert store.corpus.reviewer_candidates(["tidal", "nothing"]) == ["r-other"]
    assert set(store.corpus.reviewer_candidates(["rotation", "mergers"])) == {"r-often", "r-other"}


def test_a_browsers_kept_neighbourhood_is_its_own_and_the_newest(store):
    kept = store.neighbourhoods
    assert kept.kept("hash-a") == ([], [])
    kept.keep("hash-a", ["r-1", "r-2"], ["p-1"])
    kept.keep("hash-b", ["r-9"], [])
    kept.keep("hash-a", ["r-2"], ["p-1", "p-2"])  # the newest replaces the older
    assert kept.kept("hash-a") == (["r-2"], ["p-1", "p-2"])
    assert kept.kept("hash-b") == (["r-9"], [])
    kept.keep("", ["r-3"], [])  # no browser: nothing kept under an empty hash
    assert kept.kept("") == ([], [])


def test_demo_spending_is_added_in_place_per_day_and_visitor_from_many_writers(store, store_at):
    """The shared demo's counts (rt_core.allowance) are added to in the database, never read
    and written back: threads of two stores on one database (two app servers) adding at once
    lose nothing. Each visitor has a row per day, and the deployment's row holds them all."""
    from rt_core.store import Store

    spending = store.demo_spending
    assert spending.spent("2026-12-06", "hash-a") == (0, 0)
    other = Store(store_at)  # a second app server on the same store
    try:
        def spend(s: Store, who: str) -> None:
            for _ in range(60):
                s.demo_spending.add("2026-12-06", who, 7)

        writers = [threading.Thread(target=spend, args=(s, who))
                   for s, who in ((store, "hash-a"), (other, "hash-a"), (store, "hash-b"), (other, "hash-b"))]
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        assert spending.spent("2026-12-06", "hash-a") == (2 * 60 * 7, 4 * 60 * 7)
        assert other.demo_spending.spent("2026-12-06", "hash-b") == (2 * 60 * 7, 4 * 60 * 7)
    finally:
        other.close()
    spending.add("2026-12-07", "hash-a", 5)  # a new UTC day starts from nothing
    assert spending.spent("2026-12-07", "hash-a") == (5, 5)
    assert spending.spent("2026-12-07", "hash-c") == (0, 5)  # another visitor: only the total
    spending.add("2026-12-07", "hash-a", 0)  # nothing spent: nothing written
    spending.add("2026-12-07", "", 4)  # no visitor: counted for the deployment only
    assert spending.spent("2026-12-07", "") == (0, 9)
    assert spending.spent("2026-12-06", "hash-a") == (840, 1680)  # the older day is untouched
