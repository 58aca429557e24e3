"""The pieces `LLMClient.complete` is made of, each tested without the others: the cache
of replies, the accounting of usage, the retries on litellm's typed errors and the call
sharing (in this process and, through the store's claims, across processes)."""
from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from rt_core.errors import CancelledRun, ProviderError, RateLimitError, Unreachable
from rt_core.models import accounting, call_retry, call_sharing
from rt_core.models.call_cache import CallCache, cache_key
from rt_core.models.completion import Completion, cut_short, refused
from rt_core.models.registry import CHAT, STEM, STYLES, litellm
from rt_core.models.retry import RetryPolicy
from rt_core.models.settings import ModelSettings
from rt_core.models.translate import EmptyReply
from rt_core.types import Usage

MSGS = [{"role": "user", "content": "Name one open problem in galaxy dynamics."}]
SETTINGS = ModelSettings(model="openai/m", base_url="http://127.0.0.1:9/v1", api_key="sk-one",
                         retry=RetryPolicy(max_retries=3, base=1.0))


def reply(text="An answer.", finish="stop", logprobs=None) -> Completion:
    return Completion(text, False, 11, 7, 0.25, finish, logprobs)


# -- the cache ----------------------------------------------------------------------------

def test_the_cache_key_covers_the_question_but_not_the_key():
    key = cache_key(SETTINGS, MSGS, {"max_tokens": 10})
    other_key = ModelSettings(model="openai/m", base_url="http://127.0.0.1:9/v1/", api_key="sk-two")
    assert cache_key(other_key, MSGS, {"max_tokens": 10}) == key  # key and a trailing slash: same
    assert cache_key(SETTINGS, MSGS, {"max_tokens": 11}) != key
    assert cache_key(SETTINGS, [{"role": "user", "content": "Another."}], {"max_tokens": 10}) != key
    elsewhere = ModelSettings(model="openai/m", base_url="http://127.0.0.1:8/v1")
    assert cache_key(elsewhere, MSGS, {"max_tokens": 10}) != key


def test_a_usable_reply_is_kept_and_found_as_cached(store):
    cache = CallCache(store)
    assert cache.get("k") is None
    assert cache.keep("k", "openai/m", reply(logprobs=(("An", -0.5),)))
    found = cache.get("k", with_logprobs=True)
    assert (found.text, found.cached, found.prompt_tokens, found.completion_tokens) == \
        ("An answer.", True, 11, 7)
    assert found.logprobs == (("An", -0.5),)
    assert cache.get("k").logprobs is None  # asked without them


@pytest.mark.parametrize("bad, short", [(reply("  "), False), (reply("No.", "content_filter"), False),
                                        (reply("Half an ans", "length"), True)])
def test_an_empty_refused_or_cut_short_reply_is_not_kept(store, bad, short):
    cache = CallCache(store)
    assert not cache.keep("k", "openai/m", bad, cut_short=short)
    assert cache.get("k") is None


def test_without_a_store_nothing_is_found_or_kept():
    cache = CallCache(None)
    assert not cache.keep("k", "openai/m", reply())
    assert cache.get("k") is None


def test_a_refusal_and_a_reply_cut_short_are_told_apart():
    assert refused(reply("", "content_filter")) and not refused(reply("Some text.", "content_filter"))
    chat, stem = STYLES[CHAT], STYLES[STEM]
    assert cut_short(reply(finish="length"), chat)
    assert not cut_short(reply(finish="length"), stem)  # a base model stops at its budget
    assert not cut_short(reply(), chat)


# -- accounting ---------------------------------------------------------------------------

def test_a_call_counts_its_tokens_and_cost_and_tells_the_agent():
    usage, calls = Usage(), [0]
    token = accounting.agent_calls.set(calls)
    try:
        accounting.count_call(usage, reply())
        accounting.count_call(usage, reply())
    finally:
        accounting.agent_calls.reset(token)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost) == (2, 22, 14, 0.5)
    assert calls == [2] and usage.cache_hits == 0


def test_a_cache_hit_counts_nothing_but_itself():
    usage, calls = Usage(), [0]
    token = accounting.agent_calls.set(calls)
    try:
        accounting.count_hit(usage)
    finally:
        accounting.agent_calls.reset(token)
    assert usage.cache_hits == 1 and (usage.calls, usage.prompt_tokens, usage.cost) == (0, 0, 0.0)
    assert calls == [0]


# -- retries ------------------------------------------------------------------------------

def failing(*errors, answer="done"):
    """A call raising `errors` in turn, then answering; counts its tries."""
    tries = []

    async def call():
        tries.append(1)
        if len(tries) <= len(errors):
            raise errors[len(tries) - 1]
        return answer

    return call, tries


def rate_limited(retry_after: str | None = None):
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://127.0.0.1:9"))
    return litellm().RateLimitError("slow down", "openai", "m", response=response)


def test_transient_errors_are_retried_with_backoff_and_retry_after(sleeps):
    lm = litellm()
    call, tries = failing(rate_limited("7"), lm.InternalServerError("oops", "openai", "m"),
                          EmptyReply("no choices"))
    assert asyncio.run(call_retry.with_retries(call, SETTINGS, sleeps)) == "done"
    assert len(tries) == 4 and sleeps.waits == [7.0, 2.0, 4.0]


def test_retries_stop_at_the_policy_with_the_rt_core_error(sleeps):
    call, tries = failing(*[rate_limited() for _ in range(5)])
    with pytest.raises(RateLimitError):
        asyncio.run(call_retry.with_retries(call, SETTINGS, sleeps))
    assert len(tries) == 4 and sleeps.waits == [1.0, 2.0, 4.0]


def test_a_request_the_provider_refuses_is_not_retried(sleeps):
    call, tries = failing(litellm().BadRequestError("bad request", "m", "openai"))
    with pytest.raises(ProviderError):
        asyncio.run(call_retry.with_retries(call, SETTINGS, sleeps))
    assert len(tries) == 1 and sleeps.waits == []


def test_a_refused_connection_is_not_retried(sleeps):
    err = litellm().APIConnectionError(message="cannot connect", llm_provider="openai", model="m")
    err.__cause__ = ConnectionRefusedError("refused")
    call, tries = failing(err)
    with pytest.raises(Unreachable):
        asyncio.run(call_retry.with_retries(call, SETTINGS, sleeps))
    assert len(tries) == 1


def test_a_wait_longer_than_the_policy_allows_fails_at_once(sleeps):
    call, tries = failing(rate_limited("3600"))
    with pytest.raises(RateLimitError, match="3600"):
        asyncio.run(call_retry.with_retries(call, SETTINGS, sleeps))
    assert len(tries) == 1 and sleeps.waits == []


def test_a_cancel_cuts_the_backoff_short():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledRun):
        asyncio.run(call_retry.sleep_unless_cancelled(cancel)(30))
    asyncio.run(call_retry.sleep_unless_cancelled(threading.Event())(0))  # nothing to cut


# -- call sharing -------------------------------------------------------------------------

class Maker:
    """make() for call_sharing: counts its calls and answers once released."""

    def __init__(self, answer: Completion | Exception):
        self.answer, self.calls = answer, 0
        self.release = asyncio.Event()

    async def __call__(self) -> Completion:
        self.calls += 1
        await self.release.wait()
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


async def until(cond, limit: float = 60) -> None:
    """Let the other tasks run until cond() holds (failing after `limit` seconds, not hanging)."""
    async def poll():
        while not cond():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(poll(), limit)


def test_identical_calls_share_one_and_the_followers_pay_nothing():
    async def go():
        make = Maker(reply())
        calls = [asyncio.create_task(call_sharing.share(("", "same"), make)) for _ in range(3)]
        await until(lambda: call_sharing.FLIGHTS.count() == (1, 2))
        make.release.set()
        return make, await asyncio.gather(*calls)

    make, answers = asyncio.run(go())
    assert make.calls == 1
    assert [(a.text, a.cached, a.cost) for a in answers] == \
        [("An answer.", False, 0.25)] + [("An answer.", True, 0.0)] * 2
    assert call_sharing.FLIGHTS.count() == (0, 0)


def test_different_calls_and_different_stores_do_not_share():
    async def go():
        make = Maker(reply())
        make.release.set()
        await asyncio.gather(call_sharing.share(("", "a"), make), call_sharing.share(("", "b"), make),
                             call_sharing.share(("other.sqlite3", "a"), make))
        return make.calls

    assert asyncio.run(go()) == 3


def test_the_leaders_error_reaches_the_followers_and_the_next_caller_asks_again():
    async def go():
        make = Maker(ProviderError("the provider failed"))
        calls = [asyncio.create_task(call_sharing.share(("", "k"), make)) for _ in range(2)]
        await until(lambda: call_sharing.FLIGHTS.count() == (1, 1))
        make.release.set()
        errors = await asyncio.gather(*calls, return_exceptions=True)
        again = Maker(reply())
        again.release.set()
        return errors, await call_sharing.share(("", "k"), again), again.calls

    errors, answer, calls = asyncio.run(go())
    assert all(isinstance(e, ProviderError) for e in errors)
    assert answer.text == "An answer." and calls == 1


def test_a_follower_makes_the_call_itself_when_only_the_leader_was_cancelled():
    async def go(follower_cancelled: bool):
        leader, follower = Maker(CancelledRun("the leader's run was cancelled")), Maker(reply())
        follower.release.set()
        first = asyncio.create_task(call_sharing.share(("", "k"), leader))
        await until(lambda: call_sharing.FLIGHTS.count() == (1, 0))
        second = asyncio.create_task(call_sharing.share(("", "k"), follower,
                                                        cancelled=lambda: follower_cancelled))
        await until(lambda: call_sharing.FLIGHTS.count() == (1, 1))
        leader.release.set()
        results = await asyncio.gather(first, second, return_exceptions=True)
        return results, follower.calls

    (first, second), calls = asyncio.run(go(False))
    assert isinstance(first, CancelledRun) and second.text == "An answer." and calls == 1
    (_, second), calls = asyncio.run(go(True))
    assert isinstance(second, CancelledRun) and calls == 0


def test_a_stored_answer_is_read_instead_of_calling():
    async def go():
        make = Maker(reply())
        hit = Completion("Stored.", True)
        return await call_sharing.share(("", "k"), make, cached=lambda: hit), make.calls

    answer, calls = asyncio.run(go())
    assert answer.text == "Stored." and calls == 0


def test_another_process_holding_the_call_is_waited_for(store):
    claims, cache = store.call_claims, CallCache(store)
    assert claims.claim("k", "another-host:1:a")  # another machine is making this call

    async def go():
        make = Maker(reply())
        make.release.set()
        waiting = asyncio.create_task(call_sharing.share(
            (str(store.path), "k"), make, cached=lambda: cache.get("k"), claims=claims))
        await until(lambda: claims.waiters("k") == 1)
        cache.keep("k", "openai/m", reply("Their answer."))  # the other process's answer lands
        return await waiting, make.calls

    answer, calls = asyncio.run(go())
    assert answer.text == "Their answer." and answer.cached and calls == 0


@pytest.mark.parametrize("kept", [True, False])
def test_an_answer_not_kept_frees_the_claim_for_other_processes(store, kept):
    claims = store.call_claims

    async def go():
        make = Maker(reply())
        make.release.set()
        return await call_sharing.share((str(store.path), "k"), make, keep=lambda answer: kept,
                                        claims=claims)

    asyncio.run(go())
    # `keep` returning True stands for the answer stored, which ends the claim itself
    # (store/caches.py); here nothing was stored, so the claim stays only then.
    assert claims.claim("k", "another-host:1:b") is not kept


def test_a_failed_call_frees_the_claim(store):
    claims = store.call_claims

    async def go():
        make = Maker(ProviderError("failed"))
        make.release.set()
        await call_sharing.share((str(store.path), "k"), make, claims=claims)

    with pytest.raises(ProviderError):
        asyncio.run(go())
    assert claims.claim("k", "another-host:1:b")
