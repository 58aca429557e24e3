"""The embedded model's batch decoder (rt_core/models/local_batch.py) on the real model:
a call's tokens do not depend on what the cache held, and a shared batch completes
every call (its text may differ in the odd token: several rows take other CPU kernels)."""
import threading

import pytest

from rt_core.models.local import BUNDLED_NAME, CAPABILITIES, engine
from rt_core.models.local_batch import BatchDecoder, Request

pytestmark = pytest.mark.slow

HEAD = ("Joint research proposal bridging Astronomy and Computation and Language.\n"
        "Key concepts in Astronomy: stellar spectra; galaxy surveys; dark matter halos.\n"
        "Key concepts in Computation and Language: parsing; machine translation.\n")
PARAMS = {**CAPABILITIES.sampling, "temperature": 0.8, "seed": 7}


@pytest.fixture(scope="module")
def eng():
    return engine(BUNDLED_NAME)


def decoder(eng, n_ctx=2048, slots=4):
    llm = eng.llm
    return BatchDecoder(llm._model, llm._model.vocab, llm.context_params, n_ctx, 2, slots)


def ask(eng, dec, text, seed=7, max_tokens=24):
    req = Request(eng.tokens(text), max_tokens, lambda: eng._sampler({**PARAMS, "seed": seed}),
                  stop=(b"\n",))
    return dec.submit(req)


def reference(eng, text, seed=7, max_tokens=24):
    """llama-cpp-python's own create_completion from a cold context."""
    eng.llm.reset()
    return eng.llm.create_completion(
        text, max_tokens=max_tokens, temperature=0.8, top_p=PARAMS["top_p"], top_k=40,
        repeat_penalty=PARAMS["repeat_penalty"], frequency_penalty=PARAMS["frequency_penalty"],
        seed=seed, stop=["\n"])["choices"][0]["text"]


def test_a_call_reads_the_same_text_cold_and_from_a_held_prefix(eng):
    q1 = HEAD + "Author: an astronomer\n1. Research question: How can"
    q2 = HEAD + "Author: a linguist\n1. Research question: How can"
    want = reference(eng, q1)
    dec = decoder(eng)
    try:
        assert ask(eng, dec, q1).text.decode() == want  # cold: nothing held
        ask(eng, dec, q2, seed=1)  # another author: the shared head stays in the cache
        before = dec.reused
        assert ask(eng, dec, q1).text.decode() == want
        assert dec.reused - before >= len(eng.tokens(HEAD)) - 1  # the head was not read again
        out: dict[int, bytes] = {}

        def one(i: int, text: str) -> None:
            out[i] = ask(eng, dec, text, seed=7 if i == 0 else i).text

        others = [q2, HEAD + "2. Hypothesis: We will", "A list of stars:\n-"]
        threads = [threading.Thread(target=one, args=(i, t)) for i, t in enumerate([q1, *others])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(out) == [0, 1, 2, 3]  # four at once, each finished
        assert all(len(t.split()) >= 1 for t in out.values())
    finally:
        dec.close()


def test_calls_that_overflow_the_cache_wait_their_turn(eng):
    """Four calls of ~300 tokens in a 700-token cache: at most two at a time get in."""
    dec = decoder(eng, n_ctx=700, slots=4)
    texts = [HEAD * 4 + f"Author {i}\n1. Research question: How can" for i in range(4)]
    assert all(280 < len(eng.tokens(t)) < 330 for t in texts)
    out: dict[int, str] = {}
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            out[i] = ask(eng, dec, texts[i], seed=i, max_tokens=16).finish_reason
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        dec.close()
    assert not errors
    assert sorted(out) == [0, 1, 2, 3] and set(out.values()) <= {"stop", "length"}
