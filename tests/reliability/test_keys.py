"""Keys: the operator's key reaches only its provider's endpoint or an allowed base URL.

Driven through app.py (AppTest) against the loopback OpenAI-compatible server, whose
recorded headers and bodies are searched for the key."""
from __future__ import annotations

import datetime as dt

import pytest

from rt_core import allowance
from rt_core.deployment import token_hash as identity_hash
from rt_core.errors import ConfigError
from rt_core.models import keys
from rt_core.models.client import LLMClient, ModelSettings, run_async
from rt_core.models.scripted import demo_responder
from rt_core.store import open_store
from tests.apphelp import module_data_dir
from tests.reliability.apphelp import (
    errors,
    everything_rendered,
    goto,
    new_app,
    openai_run_page,
    start_and_wait,
)
from tests.reliability.leaks import sightings_in_requests

OPERATOR_KEY = "sk-operator-FAKE-7f3c9e21-do-not-leak"
TYPED_KEY = "sk-visitor-typed-1234"


data_dir = module_data_dir("keys-data")


@pytest.fixture
def server(openai_server):
    openai_server.responder = lambda messages: demo_responder(messages, {})
    return openai_server


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("RT_ALLOWED_BASE_URLS", "RT_DEMO", "RT_DEMO_MODEL", "RT_DEMO_BASE_URL",
                "RT_DEMO_MAX_TOKENS", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def sightings(server, secret: str) -> int:
    """How many recorded requests carry the secret anywhere (headers or body)."""
    return sightings_in_requests(server, (secret,))


def test_env_key_never_goes_to_a_base_url_the_visitor_typed(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    at = openai_run_page(new_app(), server.base_url)
    assert any("only sent to the provider's own endpoint" in w.value for w in at.warning)
    at.button(key="run_start").click().run()
    assert "Type this server's key" in everything_rendered(at)  # one clear message, no run
    assert server.requests == [] and sightings(server, OPERATOR_KEY) == 0
    assert OPERATOR_KEY not in everything_rendered(at)


def test_secrets_key_never_goes_to_a_base_url_the_visitor_typed(server):
    at = openai_run_page(new_app(secrets={"OPENAI_API_KEY": OPERATOR_KEY}), server.base_url)
    at.button(key="run_start").click().run()
    assert "Type this server's key" in everything_rendered(at)
    assert server.requests == [] and sightings(server, OPERATOR_KEY) == 0


def test_an_allowed_base_url_gets_the_operator_key(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("RT_ALLOWED_BASE_URLS", f"https://example.invalid/v1, {server.base_url}/")
    at = openai_run_page(new_app(), server.base_url)
    assert any("environment variable OPENAI_API_KEY" in c.value for c in at.caption)
    job = start_and_wait(at)
    assert job.run.status == "done", job.run.errors
    sent = server.chat_requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {OPERATOR_KEY}" for r in sent)


def test_a_typed_key_goes_to_the_typed_base_url(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    at = openai_run_page(new_app(), server.base_url)
    at.text_input(key="api_key").input(TYPED_KEY).run()
    job = start_and_wait(at)
    assert job.run.status == "done", job.run.errors
    sent = server.chat_requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {TYPED_KEY}" for r in sent)
    assert sightings(server, OPERATOR_KEY) == 0


def test_compute_similarity_on_a_stored_run_keeps_the_operator_key_home(server, monkeypatch):
    """A stored run whose evaluator (the model that restates the reference) sits at a base
    URL a visitor typed, evaluated from another session that set nothing: the restatement
    request goes there without the operator's key (or the first visitor's)."""
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    at = openai_run_page(new_app(), server.base_url)
    at.text_input(key="api_key").input(TYPED_KEY).run()
    job = start_and_wait(at)
    assert job.run.status == "done"
    s = open_store()
    stored = s.runs.load(job.run_id)
    stored.config.evaluator_model = "openai/test-model"
    stored.config.evaluator_base_url = server.base_url
    assert s.runs.save(stored, create=False)
    before = len(server.requests)
    other = new_app()  # another visitor: no key typed, default settings
    other.session_state["results_run"] = job.run_id
    goto(other, "results")
    read = set(stored.config.paper_ids).union(*(p.paper_ids for p in stored.profiles.values()))
    ref = next(pid for pid in s.corpus.paper_choices() if pid not in read)  # unread: usable
    other.selectbox(key=f"sim_ref_{job.run_id}").set_value(ref).run()
    other.button(key=f"sim_go_{job.run_id}").click().run()
    assert not other.exception
    later = server.requests[before:]
    assert later, errors(other) or "the similarity asked the run's evaluator to restate the reference"
    assert all(r["headers"].get("authorization") == "Bearer no-key" for r in later
               if r["path"].endswith("/chat/completions"))
    assert sightings(server, OPERATOR_KEY) == 0 and sightings(server, TYPED_KEY) == len(
        [r for r in server.requests[:before] if r["path"].endswith("/chat/completions")])


def test_demo_mode_locks_model_and_base_url_and_caps_tokens(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("RT_DEMO", "1")
    monkeypatch.setenv("RT_DEMO_MODEL", "openai/demo-model")
    monkeypatch.setenv("RT_DEMO_BASE_URL", server.base_url)
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "200000")
    at = new_app()
    at.button(key="preset_nlp-astronomy").click().run()
    goto(at, "run")
    assert at.text_input(key="model").disabled and at.text_input(key="base_url").disabled
    assert not [t for t in at.text_input if t.key == "api_key"], "visitors type no key in a demo"
    at.session_state["model"] = "openai/other"  # a crafted session cannot move the key elsewhere
    at.session_state["base_url"] = "http://127.0.0.1:9/v1"
    at.session_state["num_reviewers"] = 1
    at.run()
    job = start_and_wait(at)
    assert job.run.config.model == "openai/demo-model" and job.run.config.base_url == server.base_url
    sent = server.chat_requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {OPERATOR_KEY}" for r in sent)
    at.run()
    spent = job.run.usage.prompt_tokens + job.run.usage.completion_tokens
    me, today = identity_hash(at.session_state["_owner_token"]), allowance.day(dt.datetime.now(dt.UTC))
    store = open_store()
    assert store.demo_spending.spent(today, me)[0] == spent > 0, "the run's tokens count against the allowance"
    assert not at.button(key="run_start").disabled
    store.demo_spending.add(today, me, 200_000 - 100 - spent)  # too little left for the first stage
    at.run()
    assert at.button(key="run_start").disabled, "the visitor's allowance for today is spent"
    assert OPERATOR_KEY not in everything_rendered(at), errors(at)


def test_the_client_refuses_a_server_key_for_a_foreign_url(monkeypatch):
    monkeypatch.delenv("RT_ALLOWED_BASE_URLS", raising=False)
    with pytest.raises(ConfigError, match="may not be sent"):
        LLMClient(ModelSettings(model="openai/x", api_key=OPERATOR_KEY, base_url="http://evil.test/v1",
                                server_key=True))
    assert keys.server_key_allowed("")
    assert not keys.server_key_allowed("http://evil.test/v1")


def test_an_empty_key_never_lets_litellm_read_the_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    client = LLMClient(ModelSettings(model="openai/x", base_url=server.base_url))
    server.enqueue("hello")
    assert run_async(client.complete([{"role": "user", "content": "hi"}])).text == "hello"
    assert sightings(server, OPERATOR_KEY) == 0


def test_the_app_sends_the_judge_the_key_typed_for_it_and_never_the_operators(server, demo, monkeypatch):
    """The judge's own endpoint in the app (base URL and key fields, from the settings
    schema): the key typed for the judge goes to the judge's address, and only there."""
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    at = new_app()
    at.button(key="preset_nlp-astronomy").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select("Scripted demo model (tests and demos, no real model)").run()
    at.session_state["num_reviewers"] = 0
    at.session_state["loop_candidates"] = 2
    at.session_state["loop_rounds"] = 0
    at.text_input(key="loop_judge_model").input("openai/judge").run()
    at.text_input(key="judge_base_url").input(server.base_url).run()
    at.button(key="run_start").click().run()
    assert "no API key for model 'openai/judge'" in everything_rendered(at), "refused before any call"
    assert server.requests == []
    at.text_input(key="judge_key").input(TYPED_KEY).run()
    job = start_and_wait(at)
    sent = server.chat_requests()
    assert sent, job.run.errors
    assert {r["headers"]["authorization"] for r in sent} == {f"Bearer {TYPED_KEY}"}
    assert sightings(server, OPERATOR_KEY) == 0 and job.run.tournament.judge_model == "openai/judge"


def test_the_semantic_scholar_key_comes_from_the_resolver_environment_then_secrets(monkeypatch):
    monkeypatch.delenv("S2_API_KEY", raising=False)
    secrets = keys.Secrets("the test's secrets", {"S2_API_KEY": "s2-from-secrets"}.get)
    assert keys.service_key("semantic_scholar") == keys.Key()
    assert keys.service_key("semantic_scholar", secrets).value == "s2-from-secrets"
    monkeypatch.setenv("S2_API_KEY", "s2-from-env")
    held = keys.service_key("semantic_scholar", secrets)
    assert (held.value, held.source, held.server) == ("s2-from-env", "environment variable S2_API_KEY", True)
