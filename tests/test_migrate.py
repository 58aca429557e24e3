"""The numbered migrations, on an empty database of each engine (`backend` in conftest)."""
import sqlite3
import threading

import psycopg
import pytest

from rt_core.store import pg
from rt_core.store.migrations import MIGRATIONS
from rt_core.store.migrator import migrate


@pytest.fixture
def db(backend, tmp_path, request):
    """A raw, empty connection: nothing migrated yet."""
    if backend == "sqlite":
        conn = sqlite3.connect(tmp_path / "empty.db", isolation_level=None)
        yield conn
        conn.close()
        return
    server = request.getfixturevalue("pg_server")
    url = server.fresh_database(empty=True)
    conn = pg.connect(url)
    yield conn
    conn.close()
    server.drop(url)


def tables(db) -> set[str]:
    if getattr(db, "dialect", "sqlite") == "sqlite":
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {r[0] for r in db.execute("SELECT table_name FROM information_schema.tables "
                                     "WHERE table_schema='public'")}


def columns(db, table) -> set[str]:
    if getattr(db, "dialect", "sqlite") == "sqlite":
        return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    return {r[0] for r in db.execute("SELECT column_name FROM information_schema.columns "
                                     "WHERE table_name=?", (table,))}


def test_migrating_an_empty_database_creates_the_schema(db):
    applied = migrate(db)
    assert applied == [m.__name__ for m in MIGRATIONS]
    found = tables(db)
    for t in ("papers", "researchers", "authorship", "citations", "fields", "paper_fields",
              "researcher_fields", "profiles", "runs", "llm_cache", "embedding_cache",
              "http_cache", "meta", "_migrations", "studies", "study_answers"):
        assert t in found, t
    if getattr(db, "dialect", "sqlite") == "sqlite":
        assert {"papers_fts", "researchers_fts"} <= found
    else:  # the text index is a generated column with a GIN index
        assert "fts" in columns(db, "papers") and "fts" in columns(db, "researchers")
        indexes = {r[0] for r in db.execute("SELECT indexname FROM pg_indexes WHERE indexdef "
                                            "LIKE '%USING gin%'")}
        assert {"papers_fts", "researchers_fts"} <= indexes
    assert {"id", "title", "abstract", "abstract_source", "arxiv_id", "doi", "norm_title"} <= columns(db, "papers")
    assert {"key", "model", "response", "prompt_tokens", "completion_tokens"} <= columns(db, "llm_cache")
    assert "ratings" not in found  # created by m002, never used, dropped by m008


def test_migrate_is_idempotent_and_records_each_step(db):
    migrate(db)
    assert migrate(db) == []
    names = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(m.__name__ for m in MIGRATIONS)


def test_a_failing_migration_leaves_nothing_half_applied(db, monkeypatch):
    migrate(db)

    def m999_broken(conn):
        conn.executescript("CREATE TABLE half (x INTEGER); INSERT INTO nowhere VALUES (1);")

    monkeypatch.setattr("rt_core.store.migrations.MIGRATIONS", MIGRATIONS + [m999_broken])
    with pytest.raises((sqlite3.OperationalError, psycopg.errors.UndefinedTable)):
        migrate(db)
    assert "half" not in tables(db)
    assert not db.execute("SELECT 1 FROM _migrations WHERE name='m999_broken'").fetchone()
    assert not db.in_transaction


def test_a_new_migration_runs_on_both_engines_in_sqlites_spelling(db, monkeypatch):
    """What adding a migration takes: one function, SQLite's types, translated as needed."""
    migrate(db)

    def m998_example(conn):
        conn.executescript("""
        CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB, weight REAL,
                            created_at TEXT NOT NULL DEFAULT (datetime('now')));
        """)

    monkeypatch.setattr("rt_core.store.migrations.MIGRATIONS", MIGRATIONS + [m998_example])
    assert migrate(db) == ["m998_example"]
    db.execute("INSERT INTO notes(body, weight) VALUES (?, ?)", (b"\x00\x01", 0.1234567891))
    row = db.execute("SELECT id, body, weight, created_at FROM notes").fetchone()
    assert row[0] == 1 and bytes(row[1]) == b"\x00\x01" and row[2] == 0.1234567891
    assert len(row[3]) == len("2026-01-01 00:00:00")


def migrate_around(db, monkeypatch, name: str, *rows_sql: str) -> list[str]:
    """Migrate a store up to (not including) migration `name`, store rows the way code of
    that time did (`rows_sql`), then migrate the rest: the names of the steps applied."""
    monkeypatch.setattr("rt_core.store.migrations.MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < name])
    migrate(db)
    for sql in rows_sql:
        db.execute(sql)
    monkeypatch.setattr("rt_core.store.migrations.MIGRATIONS", MIGRATIONS)
    return migrate(db)


def test_m014_copies_the_fields_of_papers_stored_before_it(db, monkeypatch):
    """Papers stored before m014 get their fields on their own row, so a field filter on
    PostgreSQL (which reads that copy) still finds them."""
    assert "m014_paper_fields_json" in migrate_around(
        db, monkeypatch, "m014", "INSERT INTO papers(id, title) VALUES ('a', 'A'), ('b', 'B')",
        "INSERT INTO paper_fields VALUES ('a', 'nlp'), ('a', 'astro')")
    rows = dict(db.execute("SELECT id, fields_json FROM papers ORDER BY id").fetchall())
    assert rows == {"a": '["astro", "nlp"]', "b": "[]"}


def test_m015_gives_links_stored_before_it_their_papers_rowid(db, monkeypatch):
    """Links stored before m015 carry their paper's rowid afterwards, so the walk of a
    field's newest papers (search.py) finds them."""
    assert "m015_paper_fields_rowid" in migrate_around(
        db, monkeypatch, "m015", "INSERT INTO papers(id, title) VALUES ('a', 'A'), ('b', 'B')",
        "INSERT INTO paper_fields VALUES ('a', 'nlp'), ('b', 'nlp'), ('b', 'astro')")
    links = db.execute("SELECT pf.paper_rowid, p.rowid FROM paper_fields pf JOIN papers p "
                       "ON p.id=pf.paper_id").fetchall()
    assert len(links) == 3 and all(a == b and a is not None for a, b in links)


def test_two_processes_migrating_at_once_apply_each_step_once(db, backend, tmp_path):
    """Two app servers starting together on a new database: writers take turns."""
    if backend == "sqlite":
        path = tmp_path / "empty.db"

        def connect():
            return sqlite3.connect(path, isolation_level=None, timeout=30)
    else:
        info = db.raw.info
        url = f"postgresql://{info.user}@127.0.0.1:{info.port}/{info.dbname}"

        def connect():
            return pg.connect(url)
    applied: list[list[str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def migrator() -> None:
        conn = connect()
        try:
            start.wait()
            applied.append(migrate(conn))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=migrator) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(applied[0] + applied[1]) == sorted(m.__name__ for m in MIGRATIONS)
    assert [r[0] for r in db.execute("SELECT count(*) FROM _migrations")] == [len(MIGRATIONS)]
