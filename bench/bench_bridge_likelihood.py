"""Does the embedded base model's likelihood of a bridging sentence separate plausible from
implausible pairings (issue 49 names it as one available signal)? Measured on the pairings
labelled by hand (tests/fixtures/pairing_labels.json), beside the kinds of data (kinds.py).

    .venv/bin/python bench/bench_bridge_likelihood.py

The signal is pointwise: the mean log-probability of "... can be used to study {problem} in
{field B}." after "{method}, a method from {field A}," minus the same continuation after a
neutral opening ("A method,"), so a problem phrase that is likely anywhere does not win.
Needs the bundled GGUF and llama-cpp-python (scores the tokens of a prompt: logits_all).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.local import BUNDLED_NAME, resolve_model_path  # noqa: E402
from tests.test_pairing import LABELS, auc, kind_scores  # noqa: E402

NAMES = {f["id"]: f["name"] for f in json.loads((ROOT / "assets" / "community" / "fields.json").read_text("utf-8"))}


def logprob(llm, prefix: str, cont: str) -> float:
    """Mean log-probability of `cont`'s tokens after `prefix`."""
    pre = llm.tokenize(prefix.encode("utf-8"), add_bos=True)
    toks = llm.tokenize((prefix + cont).encode("utf-8"), add_bos=True)
    n = len(pre)
    llm.reset()
    llm.eval(toks)
    logits = np.asarray(llm.scores[: len(toks)])
    lp = logits - np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)) \
        - logits.max(axis=1, keepdims=True)
    return float(np.mean([lp[i - 1, toks[i]] for i in range(n, len(toks))]))


def main() -> None:
    from llama_cpp import Llama

    llm = Llama(model_path=str(resolve_model_path(BUNDLED_NAME)), n_ctx=512, logits_all=True, verbose=False)
    for part in ("tuned", "held_out"):
        rows = LABELS[part]
        t = time.perf_counter()
        scores = []
        for r in rows:
            a = NAMES.get(r["mechanism"]["field"], r["mechanism"]["field"])
            b = NAMES.get(r["purpose"]["field"], r["purpose"]["field"])
            cont = f" can be used to study {r['purpose']['phrase']} in {b}."
            scores.append(logprob(llm, f"{r['mechanism']['phrase']}, a method from {a},", cont)
                          - logprob(llm, "A method,", cont))
        took = time.perf_counter() - t
        labels = [r["plausible"] for r in rows]
        kind, _ = kind_scores(part)
        z = (np.asarray(scores) - np.mean(scores)) / (np.std(scores) or 1.0)
        both = list(np.asarray(kind) + 0.1 * z)  # the likelihood breaking the kinds' ties
        print(f"{part}: {len(rows)} pairings; bridging-sentence likelihood AUC {auc(scores, labels):.3f} "
              f"({took / len(rows) * 1000:.0f} ms a pairing); kinds of data AUC {auc(kind, labels):.3f}; "
              f"both {auc(both, labels):.3f}")


if __name__ == "__main__":
    main()
