"""The embedded model's batch decoder (rt_core/models/local_batch.py) on the real model:
a call reads llama-cpp-python's own tokens, cold and from a head another call left, and a
shared batch completes every call (its text may differ in the odd token: several rows take
other CPU kernels, and other sequences' cells change where a call's cells land)."""
import threading

import pytest

from rt_core.models.local import BUNDLED_NAME, CAPABILITIES, engine
from rt_core.models.local_batch import BatchDecoder, Request
from rt_core.text import sentences, whole

pytestmark = pytest.mark.slow

HEAD = ("Joint research proposal bridging Astronomy and Computation and Language.\n"
        "Key concepts in Astronomy: stellar spectra; galaxy surveys; dark matter halos.\n"
        "Key concepts in Computation and Language: parsing; machine translation.\n")
PARAMS = {**CAPABILITIES.sampling, "temperature": 0.8, "seed": 7}


@pytest.fixture(scope="module")
def eng():
    return engine(BUNDLED_NAME)


def decoder(eng, n_ctx=2048, slots=4, sequences=None):
    llm = eng.llm
    return BatchDecoder(llm._model, llm._model.vocab, llm.context_params, n_ctx, 2, slots, sequences=sequences)


def ask(eng, dec, text, seed=7, max_tokens=24, greedy=False):
    params = {**PARAMS, "seed": seed, **({"temperature": 0.0} if greedy else {})}
    req = Request(eng.tokens(text), max_tokens, lambda: eng._sampler(params), stop=(b"\n",))
    return dec.submit(req)


def arrive_together(dec, reqs) -> None:
    """Put the requests in the queue in one instant (under the decoder's lock, so no thread
    timing decides which meet) and wait for all of them."""
    with dec._cond:
        dec.waiting.extend(reqs)
        dec._cond.notify_all()
    for r in reqs:
        r.done.wait()


def reference(eng, text, seed=7, max_tokens=24, greedy=False):
    """llama-cpp-python's own create_completion from a cold context."""
    eng.llm.reset()
    return eng.llm.create_completion(
        text, max_tokens=max_tokens, temperature=0.0 if greedy else 0.8, top_p=PARAMS["top_p"], top_k=40,
        repeat_penalty=PARAMS["repeat_penalty"], frequency_penalty=PARAMS["frequency_penalty"],
        seed=seed, stop=["\n"])["choices"][0]["text"]


def test_a_call_reads_the_same_text_cold_and_from_a_held_prefix(eng):
    """Exactly llama-cpp-python's own text, cold and after another author's document (whose
    head it then reuses, as llama-cpp-python does from its last prompt)."""
    q1 = HEAD + "Author: an astronomer\n1. Research question: How can"
    q2 = HEAD + "Author: a linguist\n1. Research question: How can"
    cold = reference(eng, q1)
    eng.llm.create_completion(q2, max_tokens=24, temperature=0.8, seed=1, stop=["\n"])
    held = eng.llm.create_completion(q1, max_tokens=24, temperature=0.8, seed=7, stop=["\n"],
                                     top_p=PARAMS["top_p"], top_k=40,
                                     repeat_penalty=PARAMS["repeat_penalty"],
                                     frequency_penalty=PARAMS["frequency_penalty"])["choices"][0]["text"]
    dec = decoder(eng)
    try:
        assert ask(eng, dec, q1).text.decode() == cold  # nothing held
        ask(eng, dec, q2, seed=1)
        before = dec.reused
        assert ask(eng, dec, q1).text.decode() == held
        assert dec.reused - before >= len(eng.tokens(HEAD)) - 1  # the head was not read again
    finally:
        dec.close()


@pytest.mark.parametrize("sequences", [4, 16])
def test_calls_that_overflow_the_cache_wait_their_turn(eng, sequences):
    """Four calls of ~230 tokens in a 512-token cache: at most two at a time get in, and an
    idle sequence's cells are given up for them (whether the cache keeps four sequences or
    sixteen, counting the prompt a call has not read yet)."""
    dec = decoder(eng, n_ctx=512, slots=4, sequences=sequences)
    # Different from their first token: no prefix to share.
    texts = [f"Draft {i}.\n" + HEAD * 5 + "1. Research question: How can" for i in range(4)]
    assert all(200 < len(eng.tokens(t)) < 235 for t in texts)
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


def test_calls_that_arrive_together_read_their_shared_head_once(eng):
    """Four authors arrive in the same instant (put in the queue under the decoder's lock,
    so no thread timing decides it): the first reads the shared head, the other three wait
    a step and copy it, and every sequence's cache holds exactly the positions the decoder
    thinks it holds. Without the wait all four read the head side by side."""
    import llama_cpp

    texts = [HEAD + f"Author: {who}\n1. Research question: How can"
             for who in ("an astronomer", "a linguist", "a statistician", "a historian")]
    dec = decoder(eng)
    params = [{**PARAMS, "seed": i} for i in range(4)]
    reqs = [Request(eng.tokens(t), 24, (lambda p=p: eng._sampler(p)), stop=(b"\n",))
            for t, p in zip(texts, params, strict=True)]
    try:
        arrive_together(dec, reqs)
        assert not [r.error for r in reqs if r.error]
        assert dec.reused >= 3 * (len(eng.tokens(HEAD)) - 1)  # the head read once
        held = [(llama_cpp.llama_memory_seq_pos_min(dec.memory, i),
                 llama_cpp.llama_memory_seq_pos_max(dec.memory, i)) for i in range(dec.sequences)]
        assert held == [(0, len(c) - 1) if c else (-1, -1) for c in dec.cells]
    finally:
        dec.close()
    assert all(r.text.decode().strip() for r in reqs)


def test_three_rows_sampled_together_get_a_pad_row_that_leaves_no_cell(eng):
    """llama.cpp computes the logits of three rows slower than of four on this CPU, so a
    step that samples three sequences gets a fourth row, in a sequence of its own that
    holds nothing afterwards; a call alone is never padded (one row is faster than two)."""
    import llama_cpp

    dec = decoder(eng)
    try:
        ask(eng, dec, HEAD + "Author: an astronomer\n1. Research question: How can", max_tokens=8)
        assert dec.padded == 0
        reqs = [Request(eng.tokens(HEAD + f"Reviewer {i}: The proposal"), 12,
                        (lambda p={**PARAMS, "seed": i}: eng._sampler(p))) for i in range(3)]
        arrive_together(dec, reqs)
        assert not [r.error for r in reqs if r.error]
        assert all(r.tokens for r in reqs)
        assert dec.padded > 0
        assert llama_cpp.llama_memory_seq_pos_max(dec.memory, dec.pad_seq) == -1
        held = [(llama_cpp.llama_memory_seq_pos_min(dec.memory, i),
                 llama_cpp.llama_memory_seq_pos_max(dec.memory, i)) for i in range(dec.sequences)]
        assert held == [(0, len(c) - 1) if c else (-1, -1) for c in dec.cells]
    finally:
        dec.close()


def test_the_thread_chooser_hears_each_generation_step_in_one_row_time(eng):
    """Steps that sample several sequences cost more than one-row steps (2.7x for six); the
    chooser must hear them in one-row time, or a probe of one thread that met one-row steps
    beats two threads timed on wide ones. What the decoder reports adds up to its own tally
    of pure generation steps, each divided by `row_equivalents` of its rows."""
    from rt_core.models.local_batch import row_equivalents

    heard: list[float] = []
    llm = eng.llm
    dec = BatchDecoder(llm._model, llm._model.vocab, llm.context_params, 2048, 2, 4,
                       record=lambda threads, ms, steps: heard.append(ms))
    texts = [HEAD + f"Author: {who}\n1. Research question: How can"
             for who in ("an astronomer", "a linguist", "a statistician")]
    reqs = [Request(eng.tokens(t), 12, (lambda i=i: eng._sampler({**PARAMS, "seed": i})))
            for i, t in enumerate(texts)]
    try:
        arrive_together(dec, reqs)
        pending = dec._steps[0]
    finally:
        dec.close()
    wide = {rows: tally for (rows, pure), tally in dec.steps.items() if pure}
    assert max(wide) >= 2  # some steps did sample several sequences
    expected = sum(1000 * seconds / row_equivalents(rows) for rows, (_, seconds, _) in wide.items())
    assert sum(heard) + pending == pytest.approx(expected, rel=1e-6)


def test_the_engine_attends_with_flash_attention(eng):
    """On the CPU, flash attention skips the cells a row may not see (other sequences', those
    past a sliding window), which the batch decoder's shared cache is full of; the decoder
    copies the engine's parameters, and `reference` above reads the same context's kind."""
    import llama_cpp

    assert eng.llm.context_params.flash_attn_type == llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED


def _candidates_after(chain, history: list[int], n_vocab: int) -> list[tuple[int, float]]:
    """Apply a sampler chain to made-up logits after it has seen `history`: the candidates
    left, in order, with their probabilities (the draw reads them in that order)."""
    import ctypes

    import llama_cpp

    data = (llama_cpp.llama_token_data * n_vocab)()
    for i in range(n_vocab):  # 80 leading tokens, distinct logits; the rest far behind
        data[i].id, data[i].p = i, 0.0
        data[i].logit = 10.0 - 0.01 * i if i < 80 else -((i * 7919) % 1000) / 100.0
    arr = llama_cpp.llama_token_data_array(data, n_vocab, -1, False)
    for t in history:
        llama_cpp.llama_sampler_accept(chain.sampler, t)
    llama_cpp.llama_sampler_apply(chain.sampler, ctypes.byref(arr))
    return [(data[i].id, round(data[i].p, 6)) for i in range(arr.size)]


def test_the_shortlisted_chain_leaves_the_same_candidates_as_llama_cpp_pythons(eng):
    """The engine's chain cuts the vocabulary to TOP_K + the penalty window before the
    penalties (2.0 ms a sampled token against 0.6 ms). The 40 leading tokens are all
    penalised here, so the 40 after them must take their place, as in llama-cpp-python's
    own chain (penalties over the whole vocabulary, then top-k 40), in the same order."""
    from llama_cpp import _internals

    llm = eng.llm
    params = {**PARAMS, "temperature": 0.8, "seed": 3}
    own = _internals.LlamaSampler()  # what llama-cpp-python's create_completion builds
    own.add_penalties(n_vocab=llm.n_vocab(), penalty_last_n=llm.last_n_tokens_size,
                      penalty_repeat=params["repeat_penalty"], penalty_freq=params["frequency_penalty"],
                      penalty_present=0.0)
    own.add_top_k(40)
    own.add_typical(1.0, 1)
    own.add_top_p(params["top_p"], 1)
    own.add_min_p(0.05, 1)
    own.add_temp(0.8)
    own.add_dist(3)
    history = list(range(40)) * 2
    expected = _candidates_after(own, history, llm.n_vocab())
    assert min(t for t, _ in expected) >= 40  # the case is one where the penalties reorder
    assert _candidates_after(eng._sampler(params), history, llm.n_vocab()) == expected


def test_an_idle_head_outlives_calls_that_share_nothing_with_it(eng):
    """The cache keeps more sequences than it decodes at once: a call that shares nothing
    starts in an empty sequence, so the head an earlier document left is still there for
    the next call that continues it (the app's default run read a third more prompt tokens
    when every new call took over the longest idle sequence)."""
    llm = eng.llm
    dec = BatchDecoder(llm._model, llm._model.vocab, llm.context_params, 4096, 2, 2, sequences=6)
    author = HEAD + "Author: an astronomer\n1. Research question: How can"
    others = [f"Review {i}.\n" + HEAD.replace("Joint", "Separate") + "Strengths: The proposal" for i in range(3)]
    try:
        ask(eng, dec, author, max_tokens=4)
        for i, text in enumerate(others):
            ask(eng, dec, text, seed=i, max_tokens=4)
        before = dec.reused
        ask(eng, dec, author + " stars help with parsing?\n2. Why it matters:", max_tokens=4)
        assert dec.reused - before >= len(eng.tokens(author)) - 1
    finally:
        dec.close()


REVIEWS = ("Reviews of a joint research proposal on galaxy surveys and language models.\n"
           "Review 1: The proposal is clear. It names the survey catalogues it will read. It says how "
           "the models are tested. The plan is short.\n"
           "Review 2: The proposal is ambitious. It joins two fields that rarely meet. The data are "
           "public. The timeline is tight.\n"
           "Review 3: The proposal")


@pytest.mark.parametrize("seed", [0, 1])
def test_a_line_asked_to_stop_at_a_sentence_end_stops_there(eng, seed):
    """Asked for `sentence_words`, the decoder stops once the line's whole sentences hold
    that many words and the next has begun: the same tokens up to there as a line written
    on, cut at a whole sentence, and fewer tokens written."""
    params = {**PARAMS, "seed": seed, **({"temperature": 0.0} if seed == 0 else {})}

    def line(words):
        dec = decoder(eng)
        try:
            return dec.submit(Request(eng.tokens(REVIEWS), 60, lambda: eng._sampler(params),
                                      stop=(b"\n",), sentence_words=words))
        finally:
            dec.close()

    free, stopped = line(0), line(2)
    text, whole_text = stopped.text.decode(), free.text.decode()
    assert len(sentences(whole_text)) >= 2, whole_text  # the line written on has more to cut
    assert stopped.finish_reason == "stop" and len(stopped.tokens) < len(free.tokens)
    assert whole_text.startswith(text) and whole(text) and len(text.split()) >= 2
    assert len(sentences(text)) < len(sentences(whole_text))


@pytest.mark.timeout(120)  # the defect this guards against is a hang: fail, do not wait 900 s
def test_a_call_whose_sampler_cannot_be_built_fails_alone_and_the_decoder_serves_on(eng):
    """A request's sampler chain is built on the decoder's thread when the request gets a
    sequence. If building it raises, that caller hears the error; the thread lives on and
    the next call is answered (before, the thread died and every caller waited for ever)."""
    dec = decoder(eng)
    try:
        def broken():
            raise ValueError("no sampler today")

        with pytest.raises(ValueError, match="no sampler today"):
            dec.submit(Request(eng.tokens(HEAD), 8, broken))
        after = ask(eng, dec, HEAD + "Shared method:", max_tokens=8)
        assert after.finish_reason in {"stop", "length"} and after.error is None
        assert dec.active.count(None) == dec.sequences  # nothing left holding a sequence
    finally:
        dec.close()
