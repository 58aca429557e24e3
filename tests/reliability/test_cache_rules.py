"""Only complete replies are cached: an empty, refused or cut-off reply never is."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rt_core.errors import ProviderError
from rt_core.models.client import LLMClient, ModelSettings, run_async
from tests.loopback import Sleeps


def body(content, finish):
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


_fresh = itertools.count()


def client(server, store):
    return LLMClient(ModelSettings(model="openai/m", base_url=server.base_url, api_key="k"),
                     store=store, sleep=Sleeps())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.just(""), st.just("  \n"), st.text(min_size=1, max_size=40)),
       finish=st.sampled_from(["stop", "length", "content_filter", None]))
def test_a_reply_is_cached_only_when_complete_and_not_empty(openai_server, store, content, finish):
    openai_server.enqueue((200, {}, body(content, finish)))
    msgs = [{"role": "user", "content": f"question {next(_fresh)}"}]  # never asked before
    before = store.counts()["llm_cache"]
    try:
        reply = run_async(client(openai_server, store).complete(msgs))
    except ProviderError:
        assert finish == "content_filter" and not content.strip()  # a refusal with nothing in it
        reply = None
    cached = store.counts()["llm_cache"] - before
    usable = bool(content.strip()) and finish not in ("length", "content_filter")
    assert cached == (1 if usable else 0)
    if reply is not None:
        assert reply.text == content


def test_a_reply_without_choices_is_retried_and_the_good_answer_cached(openai_server, store):
    no_choices = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    openai_server.enqueue((200, {}, no_choices), "A real answer.")
    c = client(openai_server, store)
    msgs = [{"role": "user", "content": "retry me"}]
    assert run_async(c.complete(msgs)).text == "A real answer."
    again = client(openai_server, store)
    assert run_async(again.complete(msgs)).cached and again.usage.calls == 0


def test_a_cut_off_reply_is_noted(openai_server, store):
    openai_server.enqueue((200, {}, body("half a sent", "length")))
    c = client(openai_server, store)
    run_async(c.complete([{"role": "user", "content": "long"}], max_tokens=5))
    assert any("cut off" in n for n in c.notes)


@pytest.mark.parametrize("chars", [10, 200_000])
def test_prompts_are_fitted_to_the_context_and_the_cut_is_noted(openai_server, store, monkeypatch, chars):
    monkeypatch.setenv("RT_CONTEXT_TOKENS", "2000")
    from rt_core.models import fitting, registry

    registry.context_tokens.cache_clear()
    openai_server.responder = lambda messages: "ok"
    c = client(openai_server, store)
    text = "START " + "word " * (chars // 5) + " END"
    run_async(c.complete([{"role": "system", "content": "be brief"},
                          {"role": "user", "content": text}], max_tokens=300))
    sent = openai_server.chat_requests()[-1]["body"]["messages"]
    total = sum(fitting.estimate_tokens(m["content"]) for m in sent)
    assert total <= 2000 - 300
    if chars > 1000:
        assert sent[1]["content"].startswith("START") and sent[1]["content"].endswith("END")
        assert "characters cut here" in sent[1]["content"] and c.notes
    else:
        assert sent[1]["content"] == text and not c.notes
    registry.context_tokens.cache_clear()
