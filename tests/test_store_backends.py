"""Choosing the backend, copying a store across, and bad PostgreSQL addresses."""
from __future__ import annotations

import socket

import pytest

from rt_core import community
from rt_core.__main__ import main
from rt_core.errors import ConfigError, InputError
from rt_core.store import Store, open_store
from rt_core.store.transfer import CopyMismatch, copy_store
from rt_core.types import Paper, Run, RunConfig


def test_rt_db_selects_postgresql_and_a_path_or_nothing_keeps_sqlite(pg_server, tmp_path, monkeypatch):
    url = pg_server.fresh_database()
    try:
        monkeypatch.setenv("RT_DB", url)
        store = open_store()
        assert store.dialect == "postgresql" and "@" in str(store.path)
        assert open_store(url) is store  # one Store per location and process
        store.close()
        monkeypatch.setenv("RT_DB", str(tmp_path / "x.sqlite3"))
        assert open_store().dialect == "sqlite"
        monkeypatch.delenv("RT_DB")
        assert open_store().dialect == "sqlite"
    finally:
        pg_server.drop(url)


def test_the_password_never_shows_in_the_store_path(pg_server):
    url = pg_server.fresh_database().replace("rt@", "rt:hunter2@")  # trust auth ignores it
    store = Store(url)
    try:
        assert "hunter2" not in str(store.path) and str(store.path).endswith(url.rsplit("/", 1)[1])
    finally:
        store.close()
        pg_server.drop(url)


def _filled(location) -> Store:
    store = Store(location)
    community.ensure_loaded(store)
    store.runs.save(Run(id="run1", config=RunConfig(researcher_ids=["x"]), status="done",
                        created_at="2026-01-01"), title="A run with 'quotes' and % signs")
    store.llm_cache.put("k", "m", "an answer", 3, 4)
    store.embeddings.put("m", {"some text": [0.5, -1.0, 2.0]})
    return store


@pytest.mark.parametrize("direction", ["to_postgresql", "to_sqlite"])
def test_migrate_store_copies_every_row_and_the_copy_works(pg_server, tmp_path, direction):
    sqlite_path, url = tmp_path / "studio.sqlite3", pg_server.fresh_database()
    source, target = (sqlite_path, url) if direction == "to_postgresql" else (url, sqlite_path)
    try:
        _filled(source).close()
        copied = copy_store(source, target)
        assert copied["papers"] > 50 and copied["runs"] == 1 and copied["llm_cache"] == 1
        store = Store(target)
        src = Store(source)
        assert store.counts() == src.counts()
        words = "stellar spectra"
        assert [p.id for p in store.corpus.search_papers(words)] == \
            [p.id for p in src.corpus.search_papers(words)] != []
        assert store.runs.load("run1").status == "done"
        links = store.db.conn.execute(  # recomputed: rowids differ between the two stores
            "SELECT count(*), count(CASE WHEN pf.paper_rowid=p.rowid THEN 1 END) "
            "FROM paper_fields pf JOIN papers p ON p.id=pf.paper_id").fetchone()
        assert links[0] == links[1] > 0
        store.corpus.upsert_papers([Paper(id="new", title="Written after the copy")])  # usable
        assert list(store.embeddings.get("m", ["some text"])["some text"]) == [0.5, -1.0, 2.0]
        store.close()
        src.close()
    finally:
        pg_server.drop(url)


def test_migrate_store_refuses_a_target_that_holds_data(pg_server, tmp_path):
    url = pg_server.fresh_database()
    try:
        _filled(tmp_path / "a.sqlite3").close()
        _filled(url).close()
        with pytest.raises(InputError, match="already holds data"):
            copy_store(tmp_path / "a.sqlite3", url)
    finally:
        pg_server.drop(url)


def test_a_copy_that_cannot_be_exact_is_reported(pg_server, tmp_path):
    """PostgreSQL text cannot hold NUL: the row-for-row check names the table."""
    url = pg_server.fresh_database()
    try:
        store = Store(tmp_path / "a.sqlite3")
        store.llm_cache.put("k", "m", "nul \x00 inside", 1, 1)
        store.close()
        with pytest.raises(CopyMismatch, match="llm_cache"):
            copy_store(tmp_path / "a.sqlite3", url)
    finally:
        pg_server.drop(url)


def test_migrate_store_on_the_command_line(pg_server, tmp_path, capsys):
    url = pg_server.fresh_database()
    try:
        _filled(tmp_path / "a.sqlite3").close()
        assert main(["migrate-store", "--from", str(tmp_path / "a.sqlite3"), "--to", url]) == 0
        assert '"runs": 1' in capsys.readouterr().out
    finally:
        pg_server.drop(url)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once closed


@pytest.mark.parametrize(("url", "words"), [
    ("postgresql://u:secret@127.0.0.1:notaport/db", "not a valid PostgreSQL address"),
    ("postgresql://u:secret@127.0.0.1:5432", "names no database"),
    ("postgresql://u:secret@127.0.0.1:{port}/db", "cannot open the PostgreSQL store"),
    ("postgresql://nobody:secret@127.0.0.1:{server}/nowhere", "cannot open the PostgreSQL store"),
])
def test_a_bad_or_unreachable_url_is_one_clear_message(pg_server, url, words, capsys, monkeypatch):
    url = url.format(port=_closed_port(), server=pg_server.port)
    with pytest.raises(ConfigError, match=words) as err:
        Store(url)
    assert "secret" not in str(err.value) and err.value.hint
    monkeypatch.setenv("RT_DB", url)
    assert main(["init"]) == 2
    out = capsys.readouterr()
    assert out.err.startswith(f"error: {err.value}") and "Traceback" not in out.err
    assert "secret" not in out.err + out.out


def test_a_server_that_goes_away_is_one_clear_error_and_the_next_call_reconnects(pg_server):
    from rt_core.store.pg import StoreUnavailable

    url = pg_server.fresh_database()
    store = Store(url)
    try:
        store.corpus.upsert_papers([Paper(id="kept", title="Finished before the outage")])
        pg_server.admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname=%s AND pid <> pg_backend_pid()", (url.rsplit("/", 1)[1],))
        with pytest.raises(StoreUnavailable, match="lost the connection") as err:
            store.corpus.upsert_papers([Paper(id="lost", title="Written during the outage")])
        assert err.value.hint
        assert [p.id for p in store.corpus.search_papers("finished")] == ["kept"]  # back again
    finally:
        store.close()
        pg_server.drop(url)
