"""A PostgreSQL server that goes away in the middle of a run (stopped with pg_ctl from the
scripted model's reply hook, so at a known call): the run stops with one clear message and
no traceback, the answers that arrived before the outage are kept, and once the server is
back `resume` finishes the run without asking the model again for what it already has."""
from __future__ import annotations

import pytest

from rt_core.__main__ import main
from rt_core.models.scripted import demo_responder
from rt_core.store import Store
from tests.pgserver import pg_bin, running

pytestmark = pytest.mark.skipif(pg_bin() is None, reason="PostgreSQL is not installed")

AUTHORS = "r-neubig-graham,r-chen-beidi,r-ivezic-zeljko"
STOP_AT = 4  # the model call during which the server goes away


@pytest.fixture
def own_pg():
    """A server of this test's own (the session's shared one must stay up)."""
    with running() as server:
        yield server


def counts(url: str) -> tuple[dict[str, str], int]:
    store = Store(url)
    try:
        runs = dict(store.db.conn.execute("SELECT id, status FROM runs").fetchall())
        return runs, store.db.conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    finally:
        store.close()


def test_a_run_survives_the_store_going_away_and_resumes(own_pg, scripted, capsys):
    url = own_pg.fresh_database()
    calls = []

    def hook(messages, params):
        calls.append(1)
        if len(calls) == STOP_AT:
            own_pg.halt()
        return demo_responder(messages, params)

    scripted.responder = hook
    code = main(["--db", url, "run", "--researchers", AUTHORS, "--model", "scripted/outage",
                 "--reviewers", "2"])
    out = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out.err and out.err.count("error:") == 1, out.err
    assert "PostgreSQL store" in out.err and "resumed" in out.err  # what happened, what to do
    made_before = len(calls)

    own_pg.start()
    runs, cached = counts(url)
    assert len(runs) == 1
    (run_id, status), = runs.items()
    assert status == "running"  # the server was gone: nothing could record the failure
    assert cached >= STOP_AT - 1  # the answers that arrived before the outage were kept

    code = main(["--db", url, "resume", run_id])
    out = capsys.readouterr()
    assert code == 0, out.err
    runs, cached_after = counts(url)
    assert runs[run_id] == "done"
    # the resume asked only for what the store did not have
    assert len(calls) - made_before == cached_after - cached
