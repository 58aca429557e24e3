"""What one llama.cpp decode step costs by the rows it samples: the model's body against its
output layer.

A generation step of the batch decoder (rt_core/models/local_batch.py) advances several
sequences by a token and asks logits of each. This probe decodes `rows` sequences (each
holding --prompt tokens) and asks logits of none, of one, or of every row: the difference
is what the output layer (164,149 rows of the Latin-script vocabulary) costs per sampled
row, the part batching cannot share.

    .venv/bin/python bench/probe_logits.py [--prompt 600] [--steps 24]

Run it on a quiet machine: it times CPU work. Medians of the steps, in milliseconds.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from probe_batch import one  # noqa: E402

from rt_core.models.local import BUNDLED_NAME, engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", type=int, default=600, help="prompt tokens each sequence holds")
    ap.add_argument("--steps", type=int, default=24)
    args = ap.parse_args()
    eng = engine(BUNDLED_NAME)
    text = "The survey measured the light of distant galaxies and the model read it. " * 80
    prompt = eng.tokens(text)[: args.prompt]
    for rows in (1, 2, 4, 6):
        cells = " | ".join(f"logits of {n}: {one(eng, True, rows, prompt, args.steps, n):5.1f} ms"
                           for n in sorted({0, 1, rows}))
        print(f"{rows} rows: {cells}", flush=True)


if __name__ == "__main__":
    main()
