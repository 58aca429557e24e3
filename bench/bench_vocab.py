"""The bundled model's Latin-script copy against the published GGUF (rt_core/models/bundled.py):
the time of a decode step by rows sampled, in a context made like the batch decoder's, and
how much of a one-row step is the output layer (the same token decoded with and without
its logits).

    .venv/bin/python bench/bench_vocab.py [--rows 1,2,4,6,8,12] [--history 300]

Each figure is the minimum and median of 40 steps after `history` tokens per sequence
(docs/PERFORMANCE.md, stop 46).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models import bundled  # noqa: E402

TEXT = "The proposal studies how language models can help astronomers read galaxy surveys. " * 12


def probe(path: Path, rows_list: list[int], history: int) -> None:
    import llama_cpp as ll
    from llama_cpp import Llama, _internals

    llm = Llama(model_path=str(path), n_ctx=4096, n_threads=2, n_threads_batch=2, n_batch=512,
                flash_attn=True, verbose=False, seed=0)
    params = ll.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx, params.n_batch, params.n_ubatch, params.n_seq_max = 12288, 512, 512, 17
    params.kv_unified = params.swa_full = True  # as models/local_batch.py makes its context
    ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    memory, batch = ll.llama_get_memory(ctx.ctx), ll.llama_batch_init(512, 0, 1)
    tokens = llm.tokenize(TEXT.encode())

    def decode(items: list[tuple[int, int, int, bool]]) -> float:
        batch.n_tokens = len(items)
        for i, (seq, pos, tok, logits) in enumerate(items):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = tok, pos, 1
            batch.seq_id[i][0], batch.logits[i] = seq, logits
        started = time.perf_counter()
        assert ll.llama_decode(ctx.ctx, batch) == 0
        return time.perf_counter() - started

    def fill(rows: int) -> None:
        ll.llama_memory_clear(memory, True)
        for seq in range(rows):
            decode([(seq, i, tokens[i % len(tokens)], False) for i in range(history)])

    print(path.name)
    for rows in rows_list:
        fill(rows)
        steps = [decode([(s, history + k, tokens[s], True) for s in range(rows)]) for k in range(40)]
        print(f"  {rows:2d} rows sampled: min {1000 * min(steps):5.1f} ms, "
              f"median {1000 * statistics.median(steps):5.1f} ms")
    fill(1)
    with_head = [decode([(0, history + k, tokens[0], True)]) for k in range(40)]
    fill(1)
    without = [decode([(0, history + k, tokens[0], False)]) for k in range(40)]
    print(f"  one row, median: {1000 * statistics.median(with_head):.1f} ms with its logits, "
          f"{1000 * statistics.median(without):.1f} ms without (the output layer's share)")
    ll.llama_batch_free(batch)
    ctx.close()
    llm.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1,2,4,6,8,12")
    ap.add_argument("--history", type=int, default=300)
    args = ap.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    for path in (bundled.original_path(), bundled.run_path()):
        probe(path, rows, args.history)


if __name__ == "__main__":
    main()
