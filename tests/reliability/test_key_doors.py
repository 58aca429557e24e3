"""The one key rule at every door but the app's (tests/reliability/test_keys.py drives the
app through app.py): the CLI's run, resume, revise, credit, replay, bench, similarity --judge,
ideate's judge and the novelty explainer, the evaluator, and the study judge. Each talks to
the loopback OpenAI-compatible server, which records the Authorization header of every
request it gets."""
from __future__ import annotations

import json

import pytest

from rt_core.__main__ import main
from rt_core.errors import ConfigError
from rt_core.models import keys
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.scripted import demo_responder
from rt_core.run.evidence.evaluate import restater_for
from rt_core.study import models as study_models
from rt_core.study.create import create_from_runs
from rt_core.study.design import StudySettings
from rt_core.types import Proposal, Run, RunConfig, RunRequest
from tests import ideas
from tests.reliability.leaks import sightings_in_requests

OPERATOR_KEY = "sk-operator-DOORS-5e1f-do-not-leak"
TYPED_KEY = "sk-typed-DOORS-2222"
HOOD = ["--researchers", "r-neubig-graham", "--papers", "arxiv:2307.13854", "--reviewers", "0"]
TARGET = "arxiv:2410.16179"  # a replay target of the starter community


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("RT_ALLOWED_BASE_URLS", "RT_DEMO", "OPENAI_API_KEY", "MY_SERVER_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)


@pytest.fixture
def server(openai_server):
    openai_server.responder = lambda messages: demo_responder(messages, {})
    return openai_server


def authorizations(server) -> set[str]:
    return {r["headers"].get("authorization", "") for r in server.chat_requests()}


def cli(tmp_path, *args) -> int:
    return main(["--db", str(tmp_path / "doors.sqlite3"), *args])


# -- the rule itself -----------------------------------------------------------------------------
def test_resolve_prefers_a_key_typed_for_exactly_this_target():
    typed = keys.Typed(TYPED_KEY, "openai/x", "http://host.test/v1/")
    assert keys.resolve("openai/x", "http://host.test/v1", typed).value == TYPED_KEY
    assert keys.resolve("openai/y", "http://host.test/v1", typed).source == keys.BLOCKED  # other model
    elsewhere = keys.resolve("openai/x", "", typed)  # the provider's own endpoint: the operator's
    assert elsewhere.value == OPERATOR_KEY and elsewhere.server


def test_resolve_reads_injected_secrets_after_the_environment(monkeypatch):
    secrets = keys.Secrets("the test's secrets", {"OPENAI_API_KEY": "sk-from-secrets"}.get)
    assert keys.resolve("gpt-4o-mini", "", secrets=secrets).value == OPERATOR_KEY
    monkeypatch.delenv("OPENAI_API_KEY")
    found = keys.resolve("gpt-4o-mini", "", secrets=secrets)
    assert (found.value, found.source, found.server) == ("sk-from-secrets", "the test's secrets", True)
    assert keys.resolve("gpt-4o-mini", "http://elsewhere.test", secrets=secrets).value == ""


def test_in_process_models_need_no_key():
    assert keys.resolve("local/gemma-3-270m", "").value == ""
    keys.check("local/gemma-3-270m", "", "")  # no error


# -- the CLI ---------------------------------------------------------------------------------------
def test_cli_run_never_sends_the_operator_key_to_a_typed_base_url(tmp_path, server, capsys):
    code = cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url, *HOOD)
    err = capsys.readouterr().err
    assert code == 2 and "no API key for model 'openai/test-model'" in err and "--api-key-env" in err
    assert server.requests == []


def test_cli_run_sends_the_key_named_by_api_key_env(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    code = cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url,
               "--api-key-env", "MY_SERVER_KEY", *HOOD, "--out-json", str(tmp_path / "r.json"))
    assert code == 0, capsys.readouterr().err
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}
    assert sightings_in_requests(server, (OPERATOR_KEY,)) == 0
    assert TYPED_KEY.encode() not in (tmp_path / "r.json").read_bytes()


def test_cli_run_sends_the_operator_key_to_an_allowed_base_url(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("RT_ALLOWED_BASE_URLS", server.base_url)
    code = cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url, *HOOD,
               "--out-json", str(tmp_path / "r.json"))
    assert code == 0, capsys.readouterr().err
    assert authorizations(server) == {f"Bearer {OPERATOR_KEY}"}


def test_cli_api_key_env_naming_an_empty_variable_says_so(tmp_path, server, capsys):
    code = cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url,
               "--api-key-env", "MY_SERVER_KEY", *HOOD)
    err = capsys.readouterr().err
    assert code == 2 and "MY_SERVER_KEY" in err and "not set" in err
    assert server.requests == []


def test_cli_resume_applies_the_rule_to_the_stored_run(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    server.enqueue((500, {}, {"error": {"message": "down", "type": "server_error"}}))
    cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url,
        "--api-key-env", "MY_SERVER_KEY", "--timeout", "5", *HOOD, "--out-json", str(tmp_path / "r.json"))
    run_id = json.loads((tmp_path / "r.json").read_text())["id"]
    before = len(server.requests)
    assert cli(tmp_path, "resume", run_id) == 2  # no --api-key-env: the operator's key stays home
    assert "no API key" in capsys.readouterr().err and len(server.requests) == before
    cli(tmp_path, "resume", run_id, "--api-key-env", "MY_SERVER_KEY", "--out-json", str(tmp_path / "r.json"))
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}


def test_cli_replay_and_its_evaluator_keep_the_operator_key_home(tmp_path, server, capsys):
    """The run's model at a typed base URL is refused; the evaluator at a typed base URL gets
    no key at all (the operator's may not go there), whatever the run's model is."""
    code = cli(tmp_path, "replay", TARGET, "--modes", "self", "--model", "openai/test-model",
               "--base-url", server.base_url)
    out = capsys.readouterr()
    assert code == 1 and "no API key" in out.out + out.err and server.requests == []
    code = cli(tmp_path, "replay", TARGET, "--modes", "self", "--model", "scripted/demo",
               "--evaluator-model", "openai/restater", "--evaluator-base-url", server.base_url)
    assert server.chat_requests(), capsys.readouterr()  # the evaluator restated the reference
    assert authorizations(server) == {f"Bearer {keys.NO_KEY}"}


def test_cli_bench_sends_the_key_named_by_api_key_env(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps({"paper_id": TARGET}) + "\n")
    code = cli(tmp_path, "bench", str(tasks), "--modes", "self", "--model", "openai/test-model",
               "--base-url", server.base_url, "--api-key-env", "MY_SERVER_KEY",
               "--out", str(tmp_path / "res"), "--no-progress")
    assert code == 0, capsys.readouterr().err
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}
    assert sightings_in_requests(server, (OPERATOR_KEY,)) == 0


def test_cli_judge_never_sends_the_operator_key_to_a_typed_base_url(tmp_path, server, monkeypatch,
                                                                    capsys):
    proposal = "\n".join(f"[Question {i}] Q?\nAnswer {i} about star maps." for i in range(1, 6))
    (tmp_path / "p.md").write_text(proposal)
    judge = ["similarity", str(tmp_path / "p.md"), str(tmp_path / "p.md"), "--json", "--judge",
             "--model", "openai/judge", "--base-url", server.base_url]
    assert cli(tmp_path, *judge) == 2
    assert "no API key for model 'openai/judge'" in capsys.readouterr().err and server.requests == []
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    assert cli(tmp_path, *judge, "--api-key-env", "MY_SERVER_KEY") == 0, capsys.readouterr().err
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}


def test_cli_ideate_and_run_send_the_judge_only_the_key_named_for_it(tmp_path, server, scripted,
                                                                    monkeypatch, capsys):
    """--judge-api-key-env (from the settings schema, on `run` and `ideate` alike) names the
    judge's key; --api-key-env is the run's and never goes to the judge."""
    scripted.responder = ideas.responder()  # distinct candidates, not merged
    judge_replies = ideas.responder(ideas.by_order([2, 1]))
    server.responder = lambda messages: judge_replies(messages, {})
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    judge = ["--model", "scripted/demo", "--candidates", "2", "--judge-model", "openai/judge",
             "--judge-base-url", server.base_url, *HOOD]
    assert cli(tmp_path, "run", *judge, "--api-key-env", "MY_SERVER_KEY") == 2
    assert "no API key for model 'openai/judge'" in capsys.readouterr().err and server.requests == []
    code = cli(tmp_path, "ideate", *judge, "--judge-api-key-env", "MY_SERVER_KEY", "--no-progress",
               "--out-dir", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 0 and "(judge); 0 merged" in err, err
    assert server.chat_requests() and authorizations(server) == {f"Bearer {TYPED_KEY}"}
    assert sightings_in_requests(server, (OPERATOR_KEY,)) == 0


# -- the evaluator and the study judge ---------------------------------------------------------------
def test_the_evaluator_keeps_the_server_key_flag(server):
    """The evaluator's settings come from the request (ModelSettings.for_evaluator), so an
    operator's key marked as such is refused for a base URL that is not allowed."""
    cfg = RunConfig(evaluator_model="openai/restater", evaluator_base_url=server.base_url)
    with pytest.raises(ConfigError, match="may not be sent"):
        restater_for(RunRequest(cfg, keys={"evaluator": keys.Key(OPERATOR_KEY, "env", server=True)}), None)
    client = restater_for(RunRequest(cfg, keys={"evaluator": keys.Key(TYPED_KEY, "typed")}), None)
    assert client.settings.api_key == TYPED_KEY and not client.settings.server_key


def _study(store) -> str:
    runs = []
    for mode in ("global", "self"):
        run = Run(id=f"run-{mode}", config=RunConfig(mode=mode, reference_paper_id="p-x"), status="done",
                  created_at="2026-01-01T00:00:00")
        run.proposal = Proposal(*(f"Answer {k} in mode {mode}" for k in range(1, 6)))
        store.runs.save(run)
        runs.append(run.id)
    return create_from_runs(store, runs, StudySettings(name="Doors", mode="absolute"))["id"]


def test_the_study_judge_follows_the_rule(store, server, monkeypatch):
    server.responder = lambda messages: json.dumps({"clarity": 5, "novelty": 5, "feasibility": 5,
                                                    "overall": 5, "significance": 5})
    sid = _study(store)
    at_server = keys.resolve("openai/judge", server.base_url)
    assert at_server.source == keys.BLOCKED
    with pytest.raises(ConfigError, match="no API key"):
        study_models.run_judge(store, sid, ModelSettings.with_key("openai/judge", at_server, server.base_url))
    assert server.requests == []
    typed = keys.resolve("openai/judge", server.base_url, keys.Typed(TYPED_KEY, "openai/judge", server.base_url))
    study_models.run_judge(store, sid, ModelSettings.with_key("openai/judge", typed, server.base_url))
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}
    monkeypatch.setenv("RT_ALLOWED_BASE_URLS", server.base_url)
    allowed = keys.resolve("openai/judge", server.base_url)
    assert allowed.server
    LLMClient(ModelSettings.with_key("openai/judge", allowed, server.base_url))  # allowed: no error


# -- credit, revise, the ideate judge and the novelty explainer ---------------------------------
def _typed_run(tmp_path, server, monkeypatch, *extra) -> str:
    """A finished run of a model at a typed base URL, made with the key typed for it."""
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    code = cli(tmp_path, "run", "--model", "openai/test-model", "--base-url", server.base_url,
               "--api-key-env", "MY_SERVER_KEY", *extra, "--out-json", str(tmp_path / "r.json"))
    assert code == 0
    return json.loads((tmp_path / "r.json").read_text())["id"]


def test_cli_credit_applies_the_rule_to_the_stored_run(tmp_path, server, monkeypatch, capsys):
    authors = "r-neubig-graham,r-chen-beidi,r-talwalkar-ameet"  # three: leaving one out asks anew
    run_id = _typed_run(tmp_path, server, monkeypatch, "--researchers", authors,
                        "--papers", "arxiv:2307.13854", "--reviewers", "0")
    before = len(server.requests)
    assert cli(tmp_path, "credit", run_id, "--out-dir", str(tmp_path), "--no-progress") == 2
    assert "no API key" in capsys.readouterr().err and len(server.requests) == before
    code = cli(tmp_path, "credit", run_id, "--out-dir", str(tmp_path), "--no-progress",
               "--api-key-env", "MY_SERVER_KEY")
    assert code == 0, capsys.readouterr().err
    assert len(server.requests) > before  # the leave-one-out rewritings went out
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}


def test_cli_revise_applies_the_rule_to_the_stored_run(tmp_path, server, monkeypatch, capsys):
    run_id = _typed_run(tmp_path, server, monkeypatch, *HOOD[:-1], "1")  # one reviewer
    before = len(server.requests)
    assert cli(tmp_path, "revise", run_id) == 2
    assert "no API key" in capsys.readouterr().err and len(server.requests) == before
    assert cli(tmp_path, "revise", run_id, "--api-key-env", "MY_SERVER_KEY") == 0, capsys.readouterr().err
    assert len(server.requests) > before  # the new round went out
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}


def test_cli_ideate_judge_never_gets_the_operator_key_or_the_runs(tmp_path, server, scripted,
                                                                  monkeypatch, capsys):
    """The run's model (scripted, writing distinct candidates) has a key of its own; the judge
    at a typed base URL gets neither the operator's key nor the run's, only its own."""
    scripted.responder = ideas.responder()
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    monkeypatch.setenv("RUN_KEY", "sk-run-DOORS-3333")
    ideate = ["ideate", "--model", "scripted/demo", "--api-key-env", "RUN_KEY", "--researchers",
              "r-neubig-graham", "--papers", "arxiv:2307.13854", "--candidates", "2", "--reviewers", "0",
              "--judge-model", "openai/judge", "--judge-base-url", server.base_url,
              "--out-dir", str(tmp_path / "out"), "--no-progress"]
    assert cli(tmp_path, *ideate) == 2
    assert "no API key for model 'openai/judge'" in capsys.readouterr().err
    assert server.chat_requests() == []
    assert cli(tmp_path, *ideate, "--judge-api-key-env", "MY_SERVER_KEY") == 0, capsys.readouterr().err
    assert server.chat_requests()  # the judge was asked
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}
    assert sightings_in_requests(server, (OPERATOR_KEY, "sk-run-DOORS-3333")) == 0


def test_cli_novelty_explainer_never_gets_the_operator_key(tmp_path, server, monkeypatch, capsys):
    proposal = "\n".join(f"[Question {i}] Q?\nAnswer {i}: web agents that plan multi-step tasks with "
                         "language models on realistic websites." for i in range(1, 6))
    (tmp_path / "p.md").write_text(proposal)
    novelty = ["novelty", str(tmp_path / "p.md"), "--model", "openai/explainer", "--base-url",
               server.base_url]
    assert cli(tmp_path, *novelty) == 2
    assert "no API key for model 'openai/explainer'" in capsys.readouterr().err and server.requests == []
    monkeypatch.setenv("MY_SERVER_KEY", TYPED_KEY)
    assert cli(tmp_path, *novelty, "--api-key-env", "MY_SERVER_KEY") == 0, capsys.readouterr().err
    assert server.chat_requests()  # the explainer was asked
    assert authorizations(server) == {f"Bearer {TYPED_KEY}"}
