"""Router faults: three loopback model servers behind litellm's Router, one killed mid-run.

The killed server cuts every connection after its second answer (counted on its side).
litellm's Router is set so the cooldown does not depend on time: `allowed_fails: 0`
sets a deployment aside at its first failure, `cooldown_time: 600` keeps it aside for
the whole test, `num_retries: 2` retries the failed call at once on a deployment that is
not cooling down. The run makes one call at a time (concurrency 1), so which request
reaches the dead server is fixed: exactly one, before its cooldown began, and none after.
The dead server is the heaviest deployment (`weight`), so it is the one picked until it
dies; a run that never met the fault cannot pass.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from rt_core.models import router
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store import Store
from rt_core.types import RunConfig, RunRequest
from tests.fleet import FleetServer, write_router_file
from tests.reliability.test_faults import load_community


def config(temperature: float) -> RunConfig:
    return RunConfig(researcher_ids=["r-ada", "r-nia", "r-cole"], paper_ids=["p-gaia", "p-llm"],
                     model="lab-llm", num_reviewers=2, concurrency=1, temperature=temperature)


def test_a_killed_deployment_is_set_aside_and_the_runs_finish(tmp_path):
    servers = [FleetServer() for _ in range(3)]
    live, dead = [servers[0], servers[2]], servers[1]
    path = write_router_file(tmp_path / "router.yaml", servers, weights=[1, 1000, 1],
                             settings={"num_retries": 2, "allowed_fails": 0, "cooldown_time": 600})
    store = Store(tmp_path / "s.sqlite3")
    try:
        fleet = router.install(path)
        dead.die_after(2, cooling=lambda: "gpu2" in fleet.cooling())
        load_community(store)
        # Two runs (different temperatures, so no cache replay): enough calls after the
        # kill that both live servers take some.
        runs = [Simulation(RunRequest(config(t), timeout=30), store).run_sync() for t in (0.0, 0.1)]
        served = fleet.served()
        cooling = fleet.cooling()
    finally:
        router.uninstall()
        store.close()
        for s in servers:
            s.close()
    bodies = [r["body"] for s in servers for r in s.requests]
    summary = {"runs": [r.status for r in runs], "calls": sum(r.usage.calls for r in runs),
               "served_by_deployment": served,
               "requests_per_server": [len(s.requests) for s in servers],
               "dead_server_answers_before_kill": dead.answered,
               "requests_reaching_dead_server_after_kill": len(dead.after_death),
               "of_those_after_cooldown_began": sum(dead.after_death),
               "cooling_at_end": sorted(cooling)}
    out = os.environ.get("RT_RELIABILITY_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "router_faults.json").write_text(json.dumps(summary, indent=1))
    assert all(r.status == "done" and not r.errors for r in runs), [r.errors for r in runs]
    assert dead.answered == 2 and served["gpu2"] == 2, summary
    assert dead.after_death == [False], summary  # one request met the dead server; none after cooldown
    assert cooling == {"gpu2"}, summary
    assert all(served[f"gpu{i}"] > 0 for i in (1, 3)), summary  # the rest spread over the live ones
    assert served["gpu1"] + served["gpu3"] + 2 == summary["calls"], summary
    assert not any("weight" in b for b in bodies)  # a router setting, not sent to the model
    assert [len(s.requests) for s in live] == [served["gpu1"], served["gpu3"]], summary
