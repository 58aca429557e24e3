"""What one llama.cpp decode of k sequences costs on this CPU, against k decodes of one.

The batch decoder (rt_core/models/local_batch.py) rests on one premise: a decode that
advances several sequences by a token costs much less than advancing them one at a time.
This probe measures it on the bundled Gemma 3 270M, apart from any run: k sequences
(1..--max-rows) each hold a prompt of --prompt tokens, then --steps generation steps
advance all k together; the figure is milliseconds per step and per generated token.

It does so for both layouts of llama.cpp's key/value cache:
- unified (what the decoder uses, so a new call can start from a prefix another sequence
  holds): every sequence's attention runs over the cells of all of them and throws the
  other sequences' part away;
- split (kv_unified off, one stream per sequence): each attends to its own cells only,
  but a prefix can be shared only by copying a whole sequence.

    .venv/bin/python bench/probe_batch.py [--prompt 600] [--steps 32] [--max-rows 6]

Run it on a quiet machine: it times CPU work.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.local import BUNDLED_NAME, engine  # noqa: E402


def context(eng, unified: bool, rows: int, cells: int):
    import llama_cpp
    from llama_cpp import _internals

    params = llama_cpp.llama_context_params.from_buffer_copy(eng.llm.context_params)
    params.n_seq_max = rows
    params.kv_unified = unified
    params.swa_full = True
    # a split cache gives each sequence n_ctx / n_seq_max cells: the same room per sequence
    # in both layouts
    params.n_ctx = cells * rows
    params.n_batch = params.n_ubatch = 512
    threads = os.cpu_count() or 2
    params.n_threads = params.n_threads_batch = threads
    return _internals.LlamaContext(model=eng.llm._model, params=params, verbose=False)


def decode(ll, ctx, batch, items: list[tuple[int, int, int, bool]]) -> None:
    """items: (token, position, sequence, wants logits)."""
    for n, (tok, pos, seq, logits) in enumerate(items):
        batch.token[n], batch.pos[n], batch.n_seq_id[n] = tok, pos, 1
        batch.seq_id[n][0], batch.logits[n] = seq, logits
    batch.n_tokens = len(items)
    if ll.llama_decode(ctx.ctx, batch) != 0:
        raise SystemExit("llama_decode failed (the cache is too small for these settings)")


def one(eng, unified: bool, rows: int, prompt: list[int], steps: int, with_logits: int | None = None) -> float:
    """Milliseconds per generation step of `rows` sequences (median of the steps), the first
    `with_logits` of them asking for logits (all by default, as a sampling step does)."""
    with_logits = rows if with_logits is None else with_logits
    import llama_cpp as ll

    cells = len(prompt) + steps + 64
    ctx = context(eng, unified, rows, cells)
    batch = ll.llama_batch_init(512, 0, rows)
    try:
        for seq in range(rows):  # each sequence reads its own copy of the prompt
            for start in range(0, len(prompt), 512):
                part = prompt[start:start + 512]
                decode(ll, ctx, batch, [(t, start + i, seq, False) for i, t in enumerate(part)])
        times = []
        tok = prompt[-1]
        for s in range(steps):
            t = time.perf_counter()
            decode(ll, ctx, batch, [(tok, len(prompt) + s, seq, seq < with_logits) for seq in range(rows)])
            times.append(1000 * (time.perf_counter() - t))
        return statistics.median(times)
    finally:
        ll.llama_batch_free(batch)
        ctx.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", type=int, default=600, help="prompt tokens each sequence holds")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--max-rows", type=int, default=6)
    args = ap.parse_args()
    eng = engine(BUNDLED_NAME)
    text = "The survey measured the light of distant galaxies and the model read it. " * 80
    prompt = eng.tokens(text)[: args.prompt]
    print(f"prompt {len(prompt)} tokens per sequence, {args.steps} steps, load "
          f"{os.getloadavg()[0]:.2f}")
    base = {}
    for unified in (True, False):
        for rows in range(1, args.max_rows + 1):
            ms = one(eng, unified, rows, prompt, args.steps)
            base.setdefault(unified, ms)
            print(f"{'unified' if unified else 'split  '} cache, {rows} sequences: {ms:6.1f} ms a step, "
                  f"{ms / rows:6.1f} ms a token; a step costs {ms / base[unified]:.2f}x one sequence's "
                  f"(the same tokens one at a time: {rows:.2f}x)")


if __name__ == "__main__":
    main()
