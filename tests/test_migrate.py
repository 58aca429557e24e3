import sqlite3

from rt_core.store.migrations import MIGRATIONS, migrate


def columns(db, table):
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def test_migrating_an_empty_database_creates_the_schema(tmp_path):
    db = sqlite3.connect(tmp_path / "empty.db", isolation_level=None)
    applied = migrate(db)
    assert applied == [m.__name__ for m in MIGRATIONS]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for t in ("papers", "researchers", "authorship", "citations", "fields", "paper_fields",
              "researcher_fields", "profiles", "runs", "llm_cache", "embedding_cache",
              "http_cache", "meta", "papers_fts", "researchers_fts", "_migrations"):
        assert t in tables, t
    assert {"id", "title", "abstract", "abstract_source", "arxiv_id", "doi", "norm_title"} <= columns(db, "papers")
    assert {"key", "model", "response", "prompt_tokens", "completion_tokens"} <= columns(db, "llm_cache")
    assert "ratings" not in tables  # created by m002, never used, dropped by m008


def test_migrate_is_idempotent_and_records_each_step(tmp_path):
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    migrate(db)
    assert migrate(db) == []
    names = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(m.__name__ for m in MIGRATIONS)


def test_a_failing_migration_leaves_nothing_half_applied(tmp_path, monkeypatch):
    db = sqlite3.connect(tmp_path / "y.db", isolation_level=None)
    migrate(db)

    def m999_broken(conn):
        conn.executescript("CREATE TABLE half (x INTEGER); INSERT INTO nowhere VALUES (1);")

    monkeypatch.setattr("rt_core.store.migrations.MIGRATIONS", MIGRATIONS + [m999_broken])
    try:
        migrate(db)
    except sqlite3.OperationalError:
        pass
    else:
        raise AssertionError("the broken migration should raise")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables
    assert not db.execute("SELECT 1 FROM _migrations WHERE name='m999_broken'").fetchone()
