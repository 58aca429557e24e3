"""A fleet of model endpoints behind litellm's Router (rt_core.models.router): a run on a
routed name spreads its calls over three loopback servers, each deployment gets only its
own key, a re-run is answered by the cache, bad router files give one message, and the
Run page lists the deployments."""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
from pathlib import Path

import pytest

from rt_core.__main__ import main
from rt_core.errors import ConfigError
from rt_core.export.run import run_json
from rt_core.models import keys, registry, router
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store import Store
from rt_core.types import RunConfig, RunRequest
from tests.apphelp import errors, goto, new_app
from tests.fleet import FleetServer, write_router_file
from tests.reliability.leaks import sightings_in_files
from tests.reliability.test_faults import load_community

ROOT = Path(__file__).resolve().parents[1]
DEPLOYMENT_KEYS = ["sk-GPU1-271828-secret", "sk-GPU2-314159-secret", "sk-GPU3-161803-secret"]
EMBED_KEY = "sk-EMBED-141421-secret"
SERVER_KEY = "sk-OPERATOR-577215-secret"  # the operator's OPENAI_API_KEY
RUN_KEY = "sk-TYPED-662607-secret"  # a key given for the run (--api-key-env)
ALL_KEYS = (*DEPLOYMENT_KEYS, EMBED_KEY, SERVER_KEY, RUN_KEY)


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """Three chat servers and one embedding server behind a router file, installed.
"""
    chat = [FleetServer() for _ in range(3)]
    embed = FleetServer()
    for i, key in enumerate(DEPLOYMENT_KEYS, start=1):
        monkeypatch.setenv(f"LAB_KEY_{i}", key)
    monkeypatch.setenv("LAB_EMBED_KEY", EMBED_KEY)
    path = write_router_file(tmp_path / "router.yaml", chat, embed, keys=DEPLOYMENT_KEYS)
    installed = router.install(path)
    yield installed, chat, embed
    router.uninstall()
    for server in (*chat, embed):
        server.close()


def simulate(store: Store, request: RunRequest):
    load_community(store)
    return Simulation(request, store).run_sync()


def routed_config(**kw) -> RunConfig:
    settings = {"researcher_ids": ["r-ada", "r-nia", "r-cole"], "paper_ids": ["p-gaia", "p-llm"],
                "model": "lab-llm", "embedder": "lab-embed", "num_reviewers": 2, "temperature": 0.0}
    return RunConfig(**{**settings, **kw})


def test_a_run_spreads_over_the_fleet_and_a_rerun_is_cached(fleet, tmp_path):
    installed, chat, embed = fleet
    store = Store(tmp_path / "s.sqlite3")
    try:
        run = simulate(store, RunRequest(routed_config(), timeout=30))
        assert run.status == "done", run.errors
        served = [len(s.chat_requests()) for s in chat]
        # Spread: litellm picks a deployment at random per call, so with a dozen calls one
        # server sometimes gets none (about 1 run in 40); two or more always share them.
        assert sum(n > 0 for n in served) >= 2, served
        assert sum(served) == run.usage.calls
        assert installed.served() == {**{f"gpu{i}": n for i, n in enumerate(served, start=1)},
                                      "lab-embed-4": len(embed.requests)}
        assert embed.requests and all(r["path"].endswith("/embeddings") for r in embed.requests)
        # The cache is keyed by the model name, not by whichever deployment answered.
        before = [len(s.requests) for s in (*chat, embed)]
        again = simulate(store, RunRequest(routed_config(), timeout=30))
        assert again.status == "done" and again.usage.calls == 0
        assert [len(s.requests) for s in (*chat, embed)] == before
    finally:
        store.close()


def test_each_deployment_gets_only_its_own_key(fleet, tmp_path, monkeypatch, caplog):
    installed, chat, embed = fleet
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("RUN_KEY", RUN_KEY)
    caplog.set_level(logging.DEBUG)
    # The CLI's key rule for a run on a routed name, with a key given for it
    from rt_core.cli.settings import request_for

    args = argparse.Namespace(api_key_env="RUN_KEY", timeout=30.0)
    request = request_for(args, routed_config())
    run, embedder = request.endpoint("model").key, request.endpoint("embedder").key
    assert (run.value, embedder.value, run.server) == ("", "", False)
    assert keys.resolve("lab-llm", "", keys.Typed(RUN_KEY, "lab-llm")).source == keys.ROUTED
    store = Store(tmp_path / "keys.sqlite3")
    try:
        run = simulate(store, request)
    finally:
        store.close()
    assert run.status == "done", run.errors
    # Which deployment takes each call is litellm's random pick, so one server may get none
    # of the dozen calls: each one that served saw its own key and nothing else.
    served = [s for s in chat if s.chat_requests()]
    assert len(served) >= 2 and sum(len(s.chat_requests()) for s in chat) == run.usage.calls
    for server, key in zip(chat, DEPLOYMENT_KEYS, strict=True):
        assert server.authorizations() <= {f"Bearer {key}"}
        assert bool(server.authorizations()) == (server in served)
    assert embed.authorizations() == {f"Bearer {EMBED_KEY}"}
    (tmp_path / "export.json").write_text(run_json(run))
    assert sightings_in_files(tmp_path, ALL_KEYS)[0] == 0  # store, WAL, export
    assert not any(k in caplog.text for k in ALL_KEYS)
    assert not any(k in repr(d) for d in installed.deployments for k in ALL_KEYS)


def test_a_deployment_without_a_key_never_gets_the_operators(tmp_path, monkeypatch):
    server = FleetServer()
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    try:
        router.install(write_router_file(tmp_path / "r.yaml", [server]))
        store = Store(tmp_path / "s.sqlite3")
        try:
            run = simulate(store, RunRequest(routed_config(embedder="local/all-MiniLM-L6-v2",
                                                           num_reviewers=0), timeout=30))
        finally:
            store.close()
        assert run.status == "done", run.errors
        assert server.authorizations() == {f"Bearer {keys.NO_KEY}"}
    finally:
        router.uninstall()
        server.close()


def test_the_registry_declares_routed_names_and_others_go_the_usual_way(fleet):
    assert registry.routed("lab-llm") and registry.routed("lab-embed")
    assert registry.prompt_style("lab-llm") == "chat" and not registry.serial("lab-llm")
    assert registry.key_env("lab-llm") == ""
    assert router.serving("openai/other") is None and not registry.routed("openai/other")
    with pytest.raises(ConfigError, match="served by the router file"):
        keys.check("lab-llm", "http://127.0.0.1:9/v1", "")
    router.uninstall()
    assert not registry.routed("lab-llm") and registry.key_env("lab-llm") == "OPENAI_API_KEY"


BAD_FILES = {
    "not valid YAML": "model_list: [\n  - model_name: x\n    litellm_params: {model: a",
    "is not a mapping": "- model_name: x\n",
    "names no deployments": "router_settings: {num_retries: 1}\n",
    "names no deployments ": "model_list: []\n",
    "needs a model_name": "model_list:\n  - litellm_params: {model: openai/x}\n",
    "LAB_UNSET_KEY, which is not set": ("model_list:\n  - model_name: x\n    litellm_params: "
                                        "{model: openai/x, api_key: os.environ/LAB_UNSET_KEY}\n"),
    "unknown router_settings": ("model_list:\n  - model_name: x\n    litellm_params: {model: openai/x}\n"
                                "router_settings: {num_retrys: 2}\n"),
    "router_settings cooldown_time is 'soon'": ("model_list:\n  - model_name: x\n    litellm_params: "
                                                "{model: openai/x}\nrouter_settings: {cooldown_time: soon}\n"),
}


@pytest.mark.parametrize("message", list(BAD_FILES))
def test_a_bad_router_file_is_one_message(message, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LAB_UNSET_KEY", raising=False)
    path = tmp_path / "router.yaml"
    path.write_text(BAD_FILES[message], encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(message.strip())) as caught:
        router.load(path)
    assert caught.value.hint
    # the CLI: one line and a hint, exit status 2, no traceback
    assert main(["--router-config", str(path), "search", "gaia"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: router file {path}") and "hint:" in err and "Traceback" not in err
    assert router.active() is None


def test_a_missing_router_file_stops_the_app_with_its_message(tmp_path, monkeypatch):
    monkeypatch.setenv("RT_ROUTER_CONFIG", str(tmp_path / "nowhere.yaml"))
    at = new_app()
    assert "nowhere.yaml does not exist" in errors(at)
    assert not at.exception
    assert router.active() is None


def test_the_example_router_file_loads(monkeypatch):
    for var in ("GPU1_KEY", "GPU2_KEY", "GPU3_KEY", "EMBED_KEY"):
        monkeypatch.setenv(var, "sk-example")
    fleet = router.load(ROOT / "docs" / "lab" / "router.example.yaml")
    assert fleet.names == {"lab-llama", "lab-embed"}
    assert [d.model_name for d in fleet.deployments].count("lab-llama") == 3
    assert all(d.api_base.startswith("http://") for d in fleet.deployments)
    assert fleet.capabilities("lab-llama").context_tokens == 32768
    assert fleet.capabilities("lab-embed").context_tokens == 0  # not declared for every one


def test_the_run_page_lists_the_deployments(fleet, tmp_path, monkeypatch):
    installed, chat, _ = fleet
    monkeypatch.setenv("RT_ROUTER_CONFIG", installed.path)
    at = goto(new_app(), "run")
    table = at.dataframe[0].value
    assert list(table["Deployment"]) == ["gpu1", "gpu2", "gpu3", "lab-embed-4"]
    assert list(table["Address"])[:3] == [s.base_url for s in chat]
    assert list(table["Calls served"]) == [0, 0, 0, 0]
    assert not any(k in table.to_csv() for k in ALL_KEYS)


def test_a_run_from_the_page_goes_through_the_router_and_is_counted(fleet, monkeypatch):
    from tests.reliability.apphelp import openai_run_page, start_and_wait

    installed, chat, _ = fleet
    monkeypatch.setenv("RT_ROUTER_CONFIG", installed.path)
    at = openai_run_page(new_app(), "", model="lab-llm")
    at.text_input(key="api_key").input("sk-typed-for-the-page").run()  # not used: routed
    assert any("the router file" in c.value for c in at.caption)
    job = start_and_wait(at)
    assert job.run.status == "done", job.run.errors
    table = at.dataframe[0].value
    served = dict(zip(table["Deployment"], table["Calls served"], strict=True))
    assert sum(served[f"gpu{i}"] for i in (1, 2, 3)) == job.run.usage.calls > 0
    assert all("sk-typed-for-the-page" not in json.dumps(r["headers"]) for s in chat for r in s.requests)


def test_a_fleet_with_every_deployment_dead_fails_with_one_message(tmp_path, sleeps):
    from rt_core.errors import Unreachable
    from rt_core.models.client import LLMClient, ModelSettings

    servers = [FleetServer() for _ in range(2)]
    for server in servers:
        server.die_after(0, cooling=lambda: False)
    try:
        router.install(write_router_file(tmp_path / "r.yaml", servers,
                                         settings={"num_retries": 1, "allowed_fails": 0,
                                                   "cooldown_time": 600}))
        client = LLMClient(ModelSettings(model="lab-llm"), sleep=sleeps)
        with pytest.raises(Unreachable, match="every deployment of model 'lab-llm'"):
            asyncio.run(client.complete([{"role": "user", "content": "hello"}]))
    finally:
        router.uninstall()
        for server in servers:
            server.close()
    # each dead server met one request; after that both were cooling down
    assert [s.after_death for s in servers] == [[False], [False]]
