"""Several completions decoded together on one llama.cpp context, each in its own sequence.

A 270M model on a CPU spends a generated token's time mostly moving weights, not
computing: one decode of six sequences' tokens cost little more than one sequence's
(docs/PERFORMANCE.md). So calls that arrive together (the authors of a run writing their
drafts, the reviewers reviewing) are decoded in one batch, one sequence id per call, the
way llama.cpp's own server serves parallel requests. Each call keeps its own sampler
chain (the chain llama-cpp-python builds, seeded per call): alone, on a cache holding
only its own head, a call gives exactly the tokens llama-cpp-python's create_completion
gives. Two things change the order llama.cpp adds up in, and so can change the odd token
(the same distribution; every call is cached by the client, so a re-run reads the same
text): a batch of several rows takes other CPU kernels, and cells other sequences hold
change where a call's new cells land. The same seed on a cache with another history is
not the same text (tests/test_embedded.py compares calls from the same cold state).

The key/value cache is shared by all sequences, and a new call starts from the longest
prefix any sequence already holds (copied by sequence id, not recomputed): the material
every author's document opens with is read once per run, not once per author.

One call's own record and the rules that end its text are in models/local_request.py.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .local_request import Request, common_prefix, ended

SLOTS = 6  # sequences decoded at once; asyncio's default thread pool on 2 cores holds 6 calls
# Sequences the cache keeps, idle ones included. A call that shares nothing with a held
# sequence takes the longest idle one and its cells are dropped; with only SLOTS of them,
# the app's default run (12 reviews, 4 candidates' documents, the authors' drafts) read
# about 10,300 prompt tokens where a cache of every prefix reads 6,700 (docs/PERFORMANCE.md).
# More ids keep more heads while the cells allow (`_make_room` still drops the longest idle).
SEQUENCES = 16
WAIT_FOR = 16  # prompt tokens a request would share with a sequence still reading: worth a step's wait
# What one more sampled row adds to a generation step, as a share of a one-row step: a
# six-row decode measured 96 ms against 35 ms for one row here (docs/PERFORMANCE.md).
ROW_COST = 0.35


def row_equivalents(rows: int) -> float:
    """A generation step of `rows` sampled sequences, in one-row steps' time: what the
    thread chooser (models/local.py) compares, so that steps of different widths count alike."""
    return 1.0 + ROW_COST * max(0, rows - 1)


class BatchDecoder:
    """Owns one llama.cpp context holding SEQUENCES sequences, at most SLOTS of them decoded
    at once, and a thread that decodes them.

    `submit` is called from any thread and blocks until its request is done; only the
    decoder's own thread touches the context (llama.cpp contexts are not thread-safe)."""

    def __init__(self, model, vocab, base_params, n_ctx: int, threads: int, slots: int = SLOTS,
                 choose_threads: Callable[[], int] | None = None,
                 record: Callable[[int, float, int], None] | None = None, sequences: int | None = None):
        import llama_cpp  # noqa: PLC0415
        from llama_cpp import _internals  # noqa: PLC0415

        self._ll = llama_cpp
        params = llama_cpp.llama_context_params.from_buffer_copy(base_params)  # the same
        # attention and cache types as the Llama object's own context, so the same logits
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = 512
        sequences = max(slots, sequences or SEQUENCES)
        params.n_seq_max = sequences + 1  # and the pad row's own sequence (`_pad`)
        params.kv_unified = True  # sequences share the cells of a common prefix
        params.swa_full = True  # a sequence can be cut back to any prefix
        params.n_threads = params.n_threads_batch = threads
        self.ctx = _internals.LlamaContext(model=model, params=params, verbose=False)
        self.memory = llama_cpp.llama_get_memory(self.ctx.ctx)
        self.vocab = vocab
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        self.n_ctx = n_ctx
        self.n_batch = 512
        self.slots = slots  # decoded at once
        self.sequences = sequences  # held, idle ones included
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, slots)
        self.pad_seq = sequences  # the sequence id of the pad row, never a call's
        self.pad_token = llama_cpp.llama_vocab_bos(vocab)  # any token would do: never read
        self.padded = 0  # decodes given a pad row (for tests and benches)
        self.cells: list[list[int]] = [[] for _ in range(sequences)]  # tokens each sequence holds
        self.last_used = [0.0] * sequences
        self.active: list[Request | None] = [None] * sequences  # by sequence id, at most `slots` set
        self.waiting: list[Request] = []
        self.threads = threads
        self._choose = choose_threads
        self._record = record
        self._cond = threading.Condition()
        self._closed = False
        self._steps: list = [0.0, 0]  # ms and count of generation steps not yet recorded
        self.reused = 0  # prompt tokens not decoded because a sequence held them (for benches)
        self.decoded = 0
        # for benches: per number of sequences sampled in one decode, [decodes, seconds,
        # tokens], pure generation steps apart from those that also read prompt tokens
        self.steps: dict[tuple[int, bool], list[float]] = {}
        self._thread = threading.Thread(target=self._loop, name="llama-batch", daemon=True)
        self._thread.start()

    # -- callers' side --------------------------------------------------------------------
    def submit(self, req: Request) -> Request:
        with self._cond:
            if self._closed:
                raise RuntimeError("the model was closed")
            self.waiting.append(req)
            self._cond.notify_all()
        req.done.wait()
        if req.error is not None:
            raise req.error
        return req

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=10)
        if self.batch is not None:
            self._ll.llama_batch_free(self.batch)
            self.batch = None
        self.ctx.close()

    # -- the decoder's thread -------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self.waiting or any(self.active))
                if self._closed:
                    self._fail_all(RuntimeError("the model was closed"))
                    return
                admitted = self._admit()
            try:
                if admitted:
                    self._set_threads()
                self._step()
            except Exception as exc:  # a decode failed: every call in flight hears it
                with self._cond:
                    self._fail_all(exc)

    def _fail_all(self, exc: BaseException) -> None:
        for i, r in enumerate(self.active):
            if r is not None:
                self._finish(r, "error", exc)
                self.active[i] = None
                self._drop(i)
        for r in self.waiting:
            self._finish(r, "error", exc)
        self.waiting.clear()

    def _set_threads(self) -> None:
        if self._choose is None:
            return
        n = self._choose()
        if n != self.threads:
            self._steps = [0.0, 0]  # steps timed at the old count say nothing of the new
            self._ll.llama_set_n_threads(self.ctx.ctx, n, n)
            self.threads = n

    def _admit(self) -> bool:
        """Move waiting requests into free sequences while the cache has room."""
        admitted = False
        while self.waiting:
            free = [i for i, r in enumerate(self.active) if r is None]
            if len(free) <= self.sequences - self.slots:
                break  # `slots` sequences are being decoded
            req = self.waiting[0]
            need = len(req.prompt) + req.max_tokens
            busy = sum(len(r.prompt) + r.max_tokens for r in self.active if r)
            if busy and busy + need > self.n_ctx:
                break  # wait for a sequence to finish
            if self._worth_waiting(req):
                break  # a sequence is reading this request's head: copy it next step
            self.waiting.pop(0)
            try:
                self._place(req, free)
            except Exception as exc:  # e.g. its sampler could not be built
                # This call fails alone: raised here, the error would end the decoder's
                # thread, and every caller waiting in `submit` would wait for ever.
                self._finish(req, "error", exc)
                continue
            admitted = True
        return admitted

    def _worth_waiting(self, req: Request) -> bool:
        """Whether a sequence still reading its prompt will soon hold a longer head of req's
        prompt than any sequence holds now. Calls that arrive together (a run's authors,
        its reviewers) share their material; without this wait each would read it beside
        the others in the same batches, and the copy `_place` makes would find nothing."""
        keep = len(req.prompt) - 1
        held = max(min(common_prefix(c, req.prompt), keep) for c in self.cells)
        for r in self.active:
            if r is not None and r.feed:
                soon = min(common_prefix(self.cells[r.slot] + r.feed, req.prompt), keep)
                if soon >= held + WAIT_FOR:
                    return True
        return False

    def _place(self, req: Request, free: list[int]) -> None:
        """Start req in a free sequence from the longest prefix any sequence holds."""
        keep = len(req.prompt) - 1  # the last prompt token is decoded again for its logits
        shared = [min(common_prefix(c, req.prompt), keep) for c in self.cells]
        slot = max(free, key=lambda i: (shared[i], -self.last_used[i]))
        source = max(range(self.sequences), key=lambda i: shared[i])
        if shared[slot] < WAIT_FOR or shared[slot] < shared[source]:
            # Next to nothing is shared (every prompt opens with the same BOS token), or the
            # longest head is in a sequence being decoded (it is copied below): start in an
            # empty sequence, else the longest idle, so that the heads other idle sequences
            # hold stay for the calls that will want them.
            slot = min(free, key=lambda i: (bool(self.cells[i]), self.last_used[i]))
        own = shared[slot]
        if shared[source] > own:
            self._drop(slot)
            self._ll.llama_memory_seq_cp(self.memory, source, slot, 0, shared[source])
            own = shared[source]
        else:
            self._ll.llama_memory_seq_rm(self.memory, slot, own, -1)
        self._make_room(slot, len(req.prompt) - own + req.max_tokens)
        self.cells[slot] = req.prompt[:own]
        self.reused += own
        req.slot, req.feed = slot, req.prompt[own:]
        req.sampler = req.make_sampler()
        self.active[slot] = req

    def _make_room(self, slot: int, need: int) -> None:
        """Forget idle sequences (the longest idle first) while the cache could overflow. A
        sequence being decoded counts all it will hold (its prompt, some of it not read yet,
        and its longest answer); an idle one, the cells it holds."""
        def used() -> int:
            return sum(len(c) if r is None else len(r.prompt) + r.max_tokens
                       for c, r in zip(self.cells, self.active, strict=True))

        for i in sorted(range(self.sequences), key=lambda j: self.last_used[j]):
            if used() + need <= self.n_ctx:
                return
            if i != slot and self.active[i] is None and self.cells[i]:
                self._drop(i)

    def _drop(self, slot: int) -> None:
        self._ll.llama_memory_seq_rm(self.memory, slot, 0, -1)
        self.cells[slot] = []

    def _step(self) -> None:
        """One llama_decode: every generating sequence's last token, then prompt tokens of
        the sequences still reading theirs, up to the batch size; then one token sampled
        for each sequence whose prompt is all read."""
        b = self.batch
        n = 0
        outputs: list[tuple[int, Request]] = []
        order = sorted((r for r in self.active if r), key=lambda r: len(r.feed))
        for r in order:
            take = r.feed[: self.n_batch - n]
            if not take:
                continue
            pos = len(self.cells[r.slot])
            for k, tok in enumerate(take):
                b.token[n] = tok
                b.pos[n] = pos + k
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = r.slot
                b.logits[n] = False
                n += 1
            self.cells[r.slot].extend(take)
            del r.feed[: len(take)]
            if not r.feed:
                b.logits[n - 1] = True
                outputs.append((n - 1, r))
            if n >= self.n_batch:
                break
        if n == 0:
            return
        pad = self._pad(b, n, len(outputs))
        b.n_tokens = n + pad
        started = time.perf_counter()
        rc = self._ll.llama_decode(self.ctx.ctx, b)
        if pad:
            self._ll.llama_memory_seq_rm(self.memory, self.pad_seq, 0, -1)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc} (the cache is full or the batch is bad)")
        self.decoded += n
        seconds = time.perf_counter() - started
        tally = self.steps.setdefault((len(outputs), n == len(outputs)), [0, 0.0, 0])
        tally[0] += 1
        tally[1] += seconds
        tally[2] += n
        if outputs and n == len(outputs):  # a pure generation step: timed for the chooser
            self._timed(seconds / row_equivalents(n))
        for idx, r in outputs:
            self._sample(idx, r)

    def _pad(self, b, n: int, outputs: int) -> int:
        """One more row asking for logits when `outputs` is odd and at least 3; how many rows
        were added (0 or 1). On this CPU llama.cpp computes the logits of an odd number of
        rows slower than of one more: on two threads three rows took 67 ms a step, three and
        a pad row 54 ms, four 55 ms; five 81 ms, five and a pad 72 ms; on one thread alike
        (124 against 103 ms; docs/PERFORMANCE.md). One row alone is not padded (28 ms
        against 39 ms). The pad is a token in a sequence of its own at position 0, removed
        after the decode; its logits are never read. It is left out when the batch or the
        cache might lack the one place it takes."""
        if (outputs < 3 or outputs % 2 == 0 or n + 1 > self.n_batch
                or sum(len(c) for c in self.cells) + n + 1 > self.n_ctx):
            return 0
        b.token[n], b.pos[n], b.n_seq_id[n] = self.pad_token, 0, 1
        b.seq_id[n][0], b.logits[n] = self.pad_seq, True
        self.padded += 1
        return 1

    def _timed(self, seconds: float) -> None:
        """Generation steps, each in one-row time, are timed in groups of eight (the chooser
        ignores fewer)."""
        self._steps[0] += seconds * 1000
        self._steps[1] += 1
        if self._steps[1] >= 8 and self._record is not None:
            self._record(self.threads, *self._steps)
            self._steps = [0.0, 0]

    def _sample(self, idx: int, r: Request) -> None:
        import llama_cpp  # noqa: PLC0415

        tok = llama_cpp.llama_sampler_sample(r.sampler.sampler, self.ctx.ctx, idx)
        if r.logprobs:
            r.values.append(self._logprob(idx, tok))
        if llama_cpp.llama_vocab_is_eog(self.vocab, tok):
            return self._end(r, "stop")
        r.tokens.append(tok)
        r.text = self._detokenize(r.tokens)
        reason = ended(r)
        if reason:
            return self._end(r, reason)
        r.feed = [tok]

    def _logprob(self, idx: int, tok: int) -> float:
        """The raw log-probability of the sampled token (before penalties and cuts)."""
        import numpy as np  # noqa: PLC0415

        row = np.ctypeslib.as_array(self._ll.llama_get_logits_ith(self.ctx.ctx, idx), shape=(self.n_vocab,))
        top = float(row.max())
        return float(row[tok]) - (top + float(np.log(np.exp(row - top).sum())))

    def _detokenize(self, tokens: list[int]) -> bytes:
        import ctypes  # noqa: PLC0415

        size = 32 * len(tokens) + 16
        buf = (ctypes.c_char * size)()
        arr = (self._ll.llama_token * len(tokens))(*tokens)
        n = self._ll.llama_detokenize(self.vocab, arr, len(tokens), buf, size, False, False)
        return bytes(buf[:max(0, n)])

    def _end(self, r: Request, reason: str) -> None:
        # The last sampled token's value is not kept: a line's end, cut as a stop.
        if r.values:
            r.values.pop()
        self.last_used[r.slot] = time.monotonic()
        with self._cond:
            self.active[r.slot] = None
        self._finish(r, reason)

    @staticmethod
    def _finish(r: Request, reason: str, error: BaseException | None = None) -> None:
        r.finish_reason = reason
        r.error = error
        if r.sampler is not None:
            r.sampler.close()
            r.sampler = None
        r.done.set()
