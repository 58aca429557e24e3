"""Shared fixtures. No test touches the network or the user's data folder."""
from __future__ import annotations

import os
import tempfile
import uuid

_DATA = tempfile.mkdtemp(prefix="rt-test-data-")
os.environ["RT_DATA_DIR"] = _DATA
os.environ.pop("RT_DB", None)
os.environ.pop("RT_ROUTER_CONFIG", None)  # a developer's router file stays out of the tests
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# The machine's kept calibration (models/machine_speeds.py) is the session's own, never the
# installation's; each test gets a fresh one besides (`_fresh_machine_speeds`), and a server
# a fixture starts before that keeps this one.
os.environ["RT_MACHINE_SPEEDS"] = os.path.join(_DATA, "machine-speeds.json")
# Nor the installation's kept vectors (models/kept_vectors.py): a test embeds what it embeds,
# and the tests of the kept vectors write their own file.
os.environ["RT_KEPT_VECTORS"] = os.path.join(_DATA, "kept-vectors.npz")
# Apps under test start with a plain run (one proposal, no novelty, no revision), so tests
# about other things can count a run's calls; tests of the loop set these themselves.
os.environ.update(RT_APP_CANDIDATES="1", RT_APP_ROUNDS="0", RT_APP_NOVELTY="0")
for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "VOYAGE_API_KEY"):
    os.environ.pop(var, None)

import pytest  # noqa: E402

from rt_core.store import Store  # noqa: E402
from rt_core.types import Paper, Researcher  # noqa: E402

# Modules whose every `store` test runs on both engines; RT_TEST_BACKENDS=sqlite,postgresql
# runs the whole suite on both (or RT_TEST_BACKENDS=postgresql on PostgreSQL alone).
BOTH_BACKENDS = {"test_store", "test_migrate", "test_simulate", "test_runs", "test_study",
                 "test_cache_rules", "test_llm", "test_bench", "test_call_claims",
                 "test_bench_tasks", "test_bench_workers", "test_comparisons", "test_topics",
                 "test_paper_vectors_ann", "test_corpus_owners", "test_visible_runs",
                 "test_ideas_bank", "test_ideas_seen", "test_facet_extract"}


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames:
        return
    chosen = os.environ.get("RT_TEST_BACKENDS", "")
    if chosen:
        backends = [b.strip() for b in chosen.split(",") if b.strip()]
    elif metafunc.module.__name__.rsplit(".", 1)[-1] in BOTH_BACKENDS:
        backends = ["sqlite", "postgresql"]
    else:
        return  # the `backend` fixture below: SQLite
    metafunc.parametrize("backend", backends)


@pytest.fixture(autouse=True)
def _fresh_machine_speeds(monkeypatch):
    """Each test starts on a machine that has timed no model (models/machine_speeds.py): one
    test's calibration must not spare another's first run the calibration it tests."""
    monkeypatch.setenv("RT_MACHINE_SPEEDS", os.path.join(_DATA, f"machine-speeds-{uuid.uuid4().hex}.json"))


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture(scope="session")
def pg_server():
    """One throwaway PostgreSQL server for the session (tests/pgserver.py)."""
    from tests.pgserver import running

    with running() as server:
        yield server


@pytest.fixture
def store_at(backend, tmp_path, request):
    """Where a fresh, migrated store lives: a SQLite file or a new PostgreSQL database."""
    if backend == "sqlite":
        yield tmp_path / "studio.sqlite3"
        return
    server = request.getfixturevalue("pg_server")
    url = server.fresh_database()
    yield url
    server.drop(url)


@pytest.fixture
def store(store_at):
    s = Store(store_at)
    yield s
    s.close()


@pytest.fixture
def scripted():
    from rt_core.models.scripted import scripted_model

    model = scripted_model()
    model.reset()
    yield model
    model.reset()


@pytest.fixture
def demo(scripted):
    """The scripted model answering like the demo model (well-formed replies everywhere)."""
    from rt_core.models.scripted import demo_responder

    scripted.responder = demo_responder
    return scripted


@pytest.fixture(scope="module")
def module_demo():
    """The scripted model answering like the demo model, for a module of app tests that share
    one app's data (a module-scoped fixture cannot use the function-scoped `scripted`)."""
    from rt_core.models.scripted import demo_responder, scripted_model

    m = scripted_model()
    m.reset()
    m.responder = demo_responder
    yield m
    m.reset()


@pytest.fixture
def starter_store(store):
    """A fresh store holding the bundled starter community."""
    from rt_core import community as starter

    starter.ensure_loaded(store)
    return store


@pytest.fixture
def openai_server():
    """An OpenAI-compatible server on 127.0.0.1 (tests/openai_server.py)."""
    from tests.openai_server import OpenAIServer

    server = OpenAIServer()
    yield server
    server.close()


@pytest.fixture
def fake_server():
    """A scripted paper-source server on 127.0.0.1 (tests/fakeservers.py)."""
    from tests.fakeservers import FakeServer

    server = FakeServer()
    yield server
    server.close()


@pytest.fixture
def closing():
    """Register clients made in a test (`src = closing(ArxivSource(...))`); closed at teardown."""
    made: list = []

    def register(client):
        made.append(client)
        return client

    yield register
    for client in made:
        client.close()


@pytest.fixture
def sleeps():
    """Stands in for `sleep=` (sync or async): records the waits, never waits."""
    from tests.loopback import Sleeps

    return Sleeps()


PAPERS = [
    ("p-gaia", "Mapping the Milky Way disk with stellar kinematics", "astronomy", 2021,
     "We model the motions of millions of stars to map the structure of the galactic disk."),
    ("p-spectra", "Automated classification of stellar spectra", "astronomy", 2019,
     "A survey pipeline classifies stellar spectra and flags rare objects for follow-up."),
    ("p-llm", "Scaling instruction-tuned language models", "nlp", 2023,
     "We study how instruction tuning changes the behaviour of large language models."),
    ("p-agents", "Web agents that plan with language models", "nlp", 2022,
     "Language model agents complete multi-step tasks on realistic websites."),
    ("p-crime", "Collateral effects of incarceration on families", "criminology", 2020,
     "We review evidence on how imprisonment affects the families of those imprisoned."),
    ("p-networks", "Resilience of criminal networks under policing", "criminology", 2022,
     "Criminal organisations trade off security against efficiency when under pressure."),
]
RESEARCHERS = [
    ("r-ada", "Ada Astro", "astronomy", ["p-gaia", "p-spectra"]),
    ("r-nia", "Nia Lang", "nlp", ["p-llm", "p-agents"]),
    ("r-cole", "Cole Crim", "criminology", ["p-crime", "p-networks"]),
    ("r-sam", "Sam Stars", "astronomy", ["p-spectra"]),
    ("r-lee", "Lee Tokens", "nlp", ["p-agents"]),
]


@pytest.fixture
def community(store):
    store.corpus.upsert_fields([{"id": "astronomy", "name": "Astronomy", "domain": "physical_sciences"},
                         {"id": "nlp", "name": "NLP", "domain": "computing"},
                         {"id": "criminology", "name": "Criminology", "domain": "social_sciences"}])
    store.corpus.upsert_papers([Paper(id=i, title=t, abstract=a, year=y, fields=[f], authors=[])
                         for i, t, f, y, a in PAPERS])
    store.corpus.upsert_researchers([Researcher(id=i, name=n, fields=[f], publication_ids=p)
                              for i, n, f, p in RESEARCHERS])
    return store


@pytest.fixture
def stem_writing(monkeypatch):
    """Base-model runs write by sentence stems, as they do when the chosen papers share no
    facet that pairs (run/facets/): for the tests of that path, which a run with pairings
    no longer takes."""
    from rt_core.run.facets.pair import Pairings
    from rt_core.run.pipeline import costs
    from rt_core.run.styles.grounding import Grounding

    monkeypatch.setattr(Grounding, "pairings", property(lambda self: Pairings(note="")))
    # ...and their estimates count that path's calls (costs.from_facets: the facets path's none).
    monkeypatch.setattr(costs, "from_facets", lambda sizes: False)
