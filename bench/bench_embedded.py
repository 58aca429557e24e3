"""The embedded default on this machine: the default run (the NLP + Astronomy case study
as the preset loads it: 6 authors, 7 papers, 3 reviewers) on the bundled Gemma 3 270M,
against raw llama.cpp speed for the same model measured in the same minute.

Prints, per run: wall and CPU time, the load average, the calls, prompt and completion
tokens; how many prompt tokens were unique (a prefix tree over every prompt: what a
cache of every prefix would still have to read), how many llama.cpp actually decoded and
how many it took from a sequence that already held them; and the normalised figure of
issue 26: wall x raw single-stream generation speed = the run's cost in "tokens' worth"
of plain generation (the machine's load divides out, mostly).

    .venv/bin/python bench/bench_embedded.py [--repeats 3] [--app-default]

--app-default also times the app's default run (4 candidates, novelty, one revision round).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core import community  # noqa: E402
from rt_core.models import local  # noqa: E402
from rt_core.models.local import BUNDLED_NAME, engine  # noqa: E402

try:
    from rt_core.run.pipeline.simulation import Simulation
except ImportError:  # a checkout from before run/ was split by concept (to measure "before")
    from rt_core.run.simulation import Simulation
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402


def raw_speed(repeats: int = 3) -> tuple[float, float]:
    """llama-cpp-python's own create_completion, one stream, no prefix reuse: prompt
    tokens read per second and tokens generated per second (medians)."""
    llm = engine(BUNDLED_NAME).llm
    prompt = "The history of astronomy " * 70
    pp, tg = [], []
    for i in range(repeats):
        llm.reset()  # no prefix reuse between repeats
        t = time.perf_counter()
        out = llm.create_completion(prompt + str(i), max_tokens=1, temperature=0)
        pp.append(out["usage"]["prompt_tokens"] / (time.perf_counter() - t))
        llm.reset()
        t = time.perf_counter()
        out = llm.create_completion("Once upon a time", max_tokens=128, temperature=0.7, seed=i)
        tg.append(out["usage"]["completion_tokens"] / (time.perf_counter() - t))
    return statistics.median(pp), statistics.median(tg)


class PromptLog:
    """Every prompt the engine is asked to complete, as tokens. Wraps _Engine.tokens, or,
    on an engine from before the batch decoder (to measure "before"), _Engine.complete."""

    def __init__(self) -> None:
        self.prompts: list[list[int]] = []
        self._name = "tokens" if hasattr(local._Engine, "tokens") else "complete"
        self._orig = getattr(local._Engine, self._name)
        log = self.prompts

        def tokens(eng, text: str) -> list[int]:
            out = self._orig(eng, text)
            log.append(out)
            return out

        def complete(eng, prompt: str, params: dict) -> dict:
            log.append(eng.llm.tokenize(prompt.encode("utf-8"), add_bos=True))
            return self._orig(eng, prompt, params)

        setattr(local._Engine, self._name, tokens if self._name == "tokens" else complete)

    def restore(self) -> None:
        setattr(local._Engine, self._name, self._orig)

    def unique(self) -> int:
        """Nodes of the prefix tree over the prompts: tokens no prefix cache could spare."""
        root: dict = {}
        n = 0
        for toks in self.prompts:
            node = root
            for t in toks:
                if t not in node:
                    node[t] = {}
                    n += 1
                node = node[t]
        return n


def config_for(app_default: bool) -> RunConfig:
    p = community.preset("nlp-astronomy")
    extra = {"candidates": 4, "check_novelty": True, "revision_rounds": 1} if app_default else {}
    return RunConfig(researcher_ids=p["researcher_ids"], paper_ids=p["paper_ids"], num_reviewers=3,
                     **extra)


def one_run(tmp: Path, name: str, app_default: bool) -> dict:
    store = Store(tmp / f"{name}.sqlite3")  # a fresh store: no cached calls or profiles
    community.ensure_loaded(store)
    log = PromptLog()
    # main before the batch decoder has no decoder: its counts read as 0 (to measure "before")
    dec = getattr(engine(BUNDLED_NAME), "decoder", None)
    reused, decoded = (dec.reused, dec.decoded) if dec else (0, 0)
    steps_before = {k: list(v) for k, v in getattr(dec, "steps", {}).items()}
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    try:
        run = Simulation(RunRequest(config_for(app_default)), store).run_sync()
    finally:
        log.restore()
    wall = time.perf_counter() - t
    return {"wall": wall, "cpu": time.process_time() - c, "load": load, "run": run,
            "unique": log.unique(), "decoded": (dec.decoded - decoded) if dec else 0,
            "reused": (dec.reused - reused) if dec else 0,
            "steps": _steps_since(getattr(dec, "steps", {}), steps_before)}


def _steps_since(now: dict, before: dict) -> dict:
    return {k: [a - b for a, b in zip(v, before.get(k, [0, 0.0, 0]), strict=True)]
            for k, v in now.items() if v[0] != before.get(k, [0])[0]}


def report_steps(steps: dict) -> None:
    """How many sequences each llama_decode sampled, and what a decode cost by that
    number: whether calls overlap in practice, and whether a decode of several rows costs
    less than the rows one after another (the batch decoder's whole premise)."""
    if not steps:
        return
    print("    decodes by sequences sampled (pure generation | also reading prompt tokens):")
    for rows in sorted({k[0] for k in steps}):
        parts = []
        for pure in (True, False):
            n, sec, toks = steps.get((rows, pure), [0, 0.0, 0])
            if n:
                parts.append(f"{int(n)} decodes, {1000 * sec / n:.1f} ms each, {toks / n:.0f} tokens each, "
                             f"{sec:.1f}s in all")
            else:
                parts.append("-")
        print(f"      {rows} sampled: " + " | ".join(parts))


def report(label: str, r: dict, tg: float) -> None:
    run = r["run"]
    print(f"  {label}: {r['wall']:.1f}s wall, {r['cpu']:.1f}s CPU, load {r['load']:.1f}; "
          f"status={run.status} calls={run.usage.calls} "
          f"prompt={run.usage.prompt_tokens} (unique {r['unique']}, decoded {r['decoded']} "
          f"incl. completions, reused {r['reused']}) completion={run.usage.completion_tokens}; "
          f"wall x raw = {r['wall'] * tg:.0f} tokens' worth; stages={run.timings}")
    report_steps(r.get("steps", {}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--app-default", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    engine(BUNDLED_NAME)
    print(f"model load {time.perf_counter() - t:.1f}s")
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for i in range(args.repeats):
        pp, tg = raw_speed()  # the same minute as the run it normalises
        r = one_run(tmp, f"run-{i}", False)
        pp2, tg2 = raw_speed()
        tg = (tg + tg2) / 2
        print(f"raw llama.cpp around run {i}: prompt {pp:.0f}/{pp2:.0f} tok/s, "
              f"generation {tg:.1f} tok/s")
        report(f"default run {i}", r, tg)
        rows.append((r["wall"] * tg, r))
    if rows:  # --repeats 0 with --app-default: the app's default alone
        med = statistics.median(w for w, _ in rows)
        print(f"CLI default run: median wall x raw generation speed = {med:.0f} tokens' worth "
              f"(issue 26: 1,310 before, goal <= 655); median wall "
              f"{statistics.median(r['wall'] for _, r in rows):.1f}s")
    if args.app_default:
        _, tg = raw_speed()
        r = one_run(tmp, "app-default", True)
        _, tg2 = raw_speed()
        report("app default (4 candidates, novelty, 1 revision round)", r, (tg + tg2) / 2)


if __name__ == "__main__":
    main()
