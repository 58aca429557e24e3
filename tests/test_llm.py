"""The one LLM module, through litellm's real dispatch: the scripted provider, and a
real OpenAI-compatible HTTP server on 127.0.0.1 for the hosted-provider path."""
import asyncio

import pytest

from rt_core.errors import AuthError, ProviderError, ProviderTimeout, RateLimitError
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.retry import RetryPolicy
from tests.loopback import Sleeps
from tests.openai_server import HANG

MSG = [{"role": "user", "content": "Say hello"}]
SECRET = "sk-test-secret-0123456789"


def call(client, messages=MSG, **kw):
    return asyncio.run(client.complete(messages, **kw))


def remote(server, store=None, sleeps=None, max_retries=4, **kw):
    settings = ModelSettings(model="openai/test-model", api_key=SECRET, base_url=server.base_url,
                             retry=RetryPolicy(max_retries=max_retries, base=1.0), **kw)
    return LLMClient(settings, store=store, sleep=sleeps or Sleeps())


# -- scripted provider ------------------------------------------------------------------

def test_scripted_reply_and_what_the_model_was_sent(scripted):
    scripted.enqueue("Hello there")
    client = LLMClient(ModelSettings(model="scripted/x"))
    out = call(client, max_tokens=50, stop=["\n"])
    assert out.text == "Hello there" and not out.cached
    sent = scripted.history[-1]
    assert sent["model"] == "x" or sent["model"].endswith("x")
    assert sent["messages"] == MSG
    assert sent["params"]["max_tokens"] == 50 and sent["params"]["stop"] == ["\n"]
    assert client.usage.calls == 1 and client.usage.completion_tokens == 2


def test_cache_makes_an_identical_call_free(scripted, store):
    scripted.enqueue("first", "second")
    client = LLMClient(ModelSettings(model="scripted/x"), store=store)
    assert call(client).text == "first"
    again = call(client)
    assert again.text == "first" and again.cached
    assert len(scripted.history) == 1
    assert client.usage.calls == 1 and client.usage.cache_hits == 1
    # a different parameter is a different question
    assert call(client, temperature=0.5).text == "second"
    assert len(scripted.history) == 2


def test_cache_survives_a_new_client_and_ignores_the_key(scripted, store):
    scripted.enqueue("cached answer")
    call(LLMClient(ModelSettings(model="scripted/x", api_key="one"), store=store))
    other = LLMClient(ModelSettings(model="scripted/x", api_key="two"), store=store)
    assert call(other).text == "cached answer"
    assert other.usage.calls == 0


# -- hosted provider over real HTTP -----------------------------------------------------

def test_openai_compatible_server_round_trip(openai_server, store):
    openai_server.enqueue("Hi from the server")
    client = remote(openai_server, store=store)
    out = call(client, max_tokens=20)
    assert out.text == "Hi from the server"
    req = openai_server.chat_requests()[-1]
    assert req["body"]["model"] == "test-model"
    assert req["body"]["messages"] == MSG
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"
    assert client.usage.prompt_tokens == 2 and client.usage.completion_tokens == 4


def test_rate_limit_honours_retry_after(openai_server, sleeps):
    openai_server.enqueue((429, {"Retry-After": "7"}, {"error": {"message": "slow down",
                                                                  "type": "rate_limit"}}), "ok")
    out = call(remote(openai_server, sleeps=sleeps))
    assert out.text == "ok"
    assert sleeps.waits == [7.0]
    assert len(openai_server.chat_requests()) == 2


def test_server_errors_back_off_exponentially_then_succeed(openai_server, sleeps):
    err = (500, {}, {"error": {"message": "boom", "type": "server_error"}})
    openai_server.enqueue(err, err, "recovered")
    assert call(remote(openai_server, sleeps=sleeps)).text == "recovered"
    assert sleeps.waits == [1.0, 2.0]


def test_persistent_server_error_gives_up_after_bounded_retries(openai_server):
    err = (503, {}, {"error": {"message": "down", "type": "server_error"}})
    openai_server.enqueue(*[err] * 10)
    with pytest.raises(ProviderError) as info:
        call(remote(openai_server, max_retries=2))
    assert len(openai_server.chat_requests()) == 3
    assert info.value.hint


def test_rate_limit_that_never_ends_is_a_rate_limit_error(openai_server):
    openai_server.enqueue(*[(429, {"Retry-After": "1"}, {"error": {"message": "no"}})] * 5)
    with pytest.raises(RateLimitError):
        call(remote(openai_server, max_retries=1))


def test_timeout_is_reported_as_provider_timeout(openai_server):
    openai_server.enqueue(HANG, HANG)
    with pytest.raises(ProviderTimeout):
        call(remote(openai_server, timeout=0.5, max_retries=1))


def test_bad_key_is_an_auth_error_and_not_retried(openai_server):
    openai_server.enqueue((401, {}, {"error": {"message": "bad key", "type": "invalid_request_error"}}))
    with pytest.raises(AuthError):
        call(remote(openai_server))
    assert len(openai_server.chat_requests()) == 1


def test_malformed_body_is_a_provider_error(openai_server):
    openai_server.enqueue((200, {}, b"this is not json"), (200, {}, b"{\"nope\": 1}"))
    with pytest.raises(ProviderError):
        call(remote(openai_server, max_retries=0))


def test_unreachable_server_is_a_clear_error():
    settings = ModelSettings(model="openai/x", api_key="k", base_url="http://127.0.0.1:9/v1",
                             retry=RetryPolicy(max_retries=0), timeout=5)
    with pytest.raises(ProviderError) as info:
        call(LLMClient(settings, sleep=Sleeps()))
    assert "127.0.0.1:9" in str(info.value)


def test_api_key_never_reaches_the_database(openai_server, store):
    openai_server.enqueue("stored answer")
    call(remote(openai_server, store=store))
    if store.dialect == "postgresql":  # every row of every table, as text
        db = store.db.conn
        tables = [r[0] for r in db.execute("SELECT table_name FROM information_schema.tables "
                                           "WHERE table_schema='public'")]
        dump = "".join(str(r[0]) for t in tables for r in db.execute(f"SELECT x::text FROM {t} x"))
        assert "stored answer" in dump and SECRET not in dump
        return
    store.close()
    for path in store.path.parent.glob(store.path.name + "*"):
        assert SECRET.encode() not in path.read_bytes()


def test_remote_embeddings_are_normalised_and_cached(openai_server, store):
    from rt_core.models.embed import Embedder

    emb = Embedder("openai/text-embedding-3-small", store=store, api_key=SECRET,
                   base_url=openai_server.base_url)
    vecs = emb.encode(["alpha", "beta", "alpha"])
    assert vecs.shape == (3, 16)
    assert abs(float((vecs[0] ** 2).sum()) - 1) < 1e-5
    assert (vecs[0] == vecs[2]).all()
    n = len(openai_server.requests)
    emb.encode(["beta", "alpha"])
    assert len(openai_server.requests) == n  # all from the cache


def test_voyage_embeddings_go_through_the_voyageai_client_to_the_configured_server(
        openai_server, store):
    from rt_core.models.embed import Embedder

    # voyage-3 goes through Voyage AI's own client (tests/test_embed_remote.py has a server
    # speaking Voyage's base64 format); any /v1/embeddings server answering lists works too.
    emb = Embedder("voyage/voyage-3", store=store, api_key=SECRET, base_url=openai_server.base_url)
    vecs = emb.encode(["stars", "agents"])
    assert vecs.shape == (2, 16)
    req = openai_server.requests[-1]
    assert req["path"] == "/v1/embeddings" and req["body"]["model"] == "voyage-3"
    assert req["body"]["input"] == ["stars", "agents"]
    assert req["body"]["encoding_format"] == "base64"  # how the voyageai client asks
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"


def test_a_retry_after_longer_than_the_cap_fails_fast_instead_of_hanging(openai_server, sleeps):
    openai_server.enqueue((429, {"Retry-After": "3600"}, {"error": {"message": "come back later"}}))
    with pytest.raises(RateLimitError, match="3600"):
        call(remote(openai_server, sleeps=sleeps))
    assert sleeps.waits == []


def test_a_key_echoed_in_a_provider_error_is_redacted(openai_server):
    openai_server.enqueue((400, {}, {"error": {"message": f"bad request for key {SECRET}",
                                               "type": "invalid_request_error"}}))
    with pytest.raises(ProviderError) as info:
        call(remote(openai_server))
    assert SECRET not in str(info.value) and "***" in str(info.value)


def test_cancel_cuts_a_back_off_short(openai_server):
    import threading

    from rt_core.errors import CancelledRun

    cancel = threading.Event()
    openai_server.enqueue((500, {}, {"error": {"message": "boom"}}), "never needed")
    settings = ModelSettings(model="openai/test-model", api_key=SECRET, base_url=openai_server.base_url,
                             retry=RetryPolicy(base=30.0))
    client = LLMClient(settings, cancel=cancel)
    cancel.set()
    with pytest.raises(CancelledRun):
        call(client)
    assert len(openai_server.chat_requests()) == 1
