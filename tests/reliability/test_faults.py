"""Provider faults at 20% per call (seeded, injected by the loopback server): every
simulation completes or ends with a typed error naming its stage and agent; finished
stages are kept; a re-run makes no call that had succeeded; re-running a finished run
makes zero calls and reproduces it exactly."""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from rt_core import errors
from rt_core.models.scripted import demo_responder
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store import Store
from rt_core.types import Paper, Researcher, RunConfig, RunRequest
from tests.conftest import PAPERS, RESEARCHERS
from tests.loopback import Sleeps
from tests.reliability.faulty import FaultyServer, body_hash

TYPED = {name for name in dir(errors) if isinstance(getattr(errors, name), type)
         and issubclass(getattr(errors, name), errors.RTError)}
STAGES = {"read", "write", "review", "evaluate"}


# The reference is newer than every paper the authors wrote: profiles read papers up to the
# year before the reference, so all three authors have something to read and write from.
REFERENCE = ("p-ref", "Language models that read sky surveys and court records", "nlp", 2024,
             "We combine survey pipelines from astronomy with language models to study sentencing records.")


def load_community(store: Store) -> None:
    store.corpus.upsert_fields([{"id": f, "name": f, "domain": "x"} for f in ("astronomy", "nlp", "criminology")])
    store.corpus.upsert_papers([Paper(id=i, title=t, abstract=a, year=y, fields=[f])
                                for i, t, f, y, a in [*PAPERS, REFERENCE]])
    store.corpus.upsert_researchers([Researcher(id=i, name=n, fields=[f], publication_ids=p)
                                     for i, n, f, p in RESEARCHERS])


def comparable(run) -> dict:
    d = run.to_dict()
    for k in ("id", "created_at", "timings", "usage", "status", "notes"):
        d.pop(k, None)
    return d


def one_simulation(seed: int, folder: Path) -> dict:
    """One full simulation (3 authors, 2 reviewers, a reference) against a faulty server,
    then a re-run of the same request; returns what happened."""
    server = FaultyServer(seed, rate=0.2, responder=lambda messages: demo_responder(messages, {}),
                          hang_seconds=3.0)
    store = Store(folder / f"faults-{seed}.sqlite3")
    try:
        load_community(store)
        cfg = RunConfig(researcher_ids=["r-ada", "r-nia", "r-cole"], paper_ids=["p-gaia", "p-llm"],
                        model="openai/faulty", base_url=server.base_url, num_reviewers=2,
                        reference_paper_id=REFERENCE[0], temperature=0.0)
        request = RunRequest.with_key(cfg, "k", timeout=1.5, max_retries=4)
        first = Simulation(request, store, sleep=Sleeps()).run_sync()
        stored = store.runs.load(first.id)
        succeeded = server.succeeded()
        before = len(server.log)
        second = Simulation(request, store, sleep=Sleeps()).run_sync()
        rerun_hashes = [e["hash"] for e in server.log[before:]]
        return {
            "seed": seed, "status": first.status, "errors": [e.to_dict() for e in first.errors],
            "stored_matches": comparable(stored) == comparable(first) and stored.status == first.status,
            "calls": first.usage.calls, "faults": dict(server.faults()),
            "rerun_calls": len(rerun_hashes),
            "rerun_repeats_success": sum(h in succeeded for h in rerun_hashes),
            "rerun_identical": comparable(second) == comparable(first),
            "second_status": second.status,
            "clean": first.status == "done" and not first.errors,
        }
    finally:
        store.close()
        server.close()


def check(result: dict) -> None:
    assert result["status"] in ("done", "failed"), result
    assert result["stored_matches"], "the store holds what the run finished"
    for e in result["errors"]:
        assert e["stage"] in STAGES and e["agent"] and e["kind"] in TYPED, e
        assert e["kind"] != "InputError", f"the test's community left an author nothing to read: {e}"
    if result["status"] == "failed":
        assert result["errors"], "a failed run says which stage and agent failed"
    assert result["rerun_repeats_success"] == 0, "a re-run repeated a call that had succeeded"
    if result["clean"]:
        assert result["rerun_calls"] == 0 and result["rerun_identical"], result


def test_body_hash_is_order_free():
    assert body_hash({"a": 1, "b": 2}) == body_hash({"b": 2, "a": 1})


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_few_simulations_survive_faults(seed, tmp_path):
    check(one_simulation(seed, tmp_path))


@pytest.mark.reliability
def test_fifty_simulations_survive_faults(tmp_path):
    results = [one_simulation(seed, tmp_path) for seed in range(100, 150)]
    summary = {
        "simulations": len(results),
        "completed": sum(r["status"] == "done" for r in results),
        "clean": sum(r["clean"] for r in results),
        "failed_with_typed_error": sum(r["status"] == "failed" for r in results),
        "faults_injected": dict(sum((Counter(r["faults"]) for r in results), Counter())),
        "calls": sum(r["calls"] for r in results),
        "clean_reruns_with_zero_calls_identical": sum(r["clean"] and r["rerun_calls"] == 0
                                                      and r["rerun_identical"] for r in results),
        "reruns_repeating_a_success": sum(r["rerun_repeats_success"] for r in results),
    }
    out = os.environ.get("RT_RELIABILITY_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "faults.json").write_text(json.dumps({"summary": summary, "runs": results}, indent=1))
    print("fault summary:", json.dumps(summary))
    for r in results:
        check(r)
