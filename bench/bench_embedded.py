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
    .venv/bin/python bench/bench_embedded.py --cli [--repeats 3]

--app-default also times the app's default run (4 candidates, novelty, one revision round).
--cli times one-shot `python -m rt_core run` processes instead, as issue 26 measured: the
figure a user meets. Runs in this process share llama.cpp's cache (a later run reads less
afresh) and skip the process's start, so their figure is lower (docs/PERFORMANCE.md).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
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
    """Raw llama.cpp speed, measured in a process of its own: prompt tokens read and tokens
    generated per second (medians).

    Not in this process: with llama.cpp built on OpenMP, a decode on one thread left later
    decodes on another thread 1.1-2.5x slower (each thread keeps its own team of OpenMP
    workers). Measured here on the main thread, the raw figure after a run fell from about
    45 to 26 tok/s and the next run's decoder thread slowed too: both halves of the
    normalised figure were off (docs/PERFORMANCE.md, stop 38)."""
    out = subprocess.run([sys.executable, __file__, "--raw-only", str(repeats)], check=True,
                         capture_output=True, text=True).stdout
    pp, tg = json.loads(out.strip().splitlines()[-1])
    return pp, tg


def _raw_here(repeats: int) -> tuple[float, float]:
    """llama-cpp-python's own create_completion on a plain context, one stream, no prefix
    reuse, on this process's main thread."""
    from llama_cpp import Llama

    # The published GGUF, whole: the yardstick issue 26 measured (the app runs its copy with
    # the Latin-script vocabulary, rt_core/models/bundled.py, which generates faster).
    llm = Llama(model_path=str(_published_gguf()), n_ctx=2048,
                n_threads=os.cpu_count() or 2, n_threads_batch=os.cpu_count() or 2,
                flash_attn=True, verbose=False, seed=0)
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


def _published_gguf() -> Path:
    try:
        from rt_core.models.bundled import original_path
    except ImportError:  # a checkout from before the Latin-script copy (to measure "before")
        return local.resolve_model_path(BUNDLED_NAME)
    return original_path()


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


def cli_runs(repeats: int) -> None:
    """The CLI default as a user starts it: a fresh process and a fresh store per run, the
    wall from launch to exit (imports, the model load and the store's set-up included),
    raw llama.cpp speed measured in its own process just before and after."""
    p = community.preset("nlp-astronomy")
    walls = []
    for i in range(repeats):
        tmp = Path(tempfile.mkdtemp())
        cmd = [sys.executable, "-m", "rt_core", "--db", str(tmp / "cli.sqlite3"), "run",
               "--researchers", ",".join(p["researcher_ids"]), "--papers", ",".join(p["paper_ids"]),
               "--reviewers", "3", "--out-json", str(tmp / "run.json")]
        _, tg = raw_speed()
        load = os.getloadavg()[0]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "RT_DATA_DIR": str(tmp)})
        wall = time.perf_counter() - t
        _, tg2 = raw_speed()
        tg = (tg + tg2) / 2
        usage = json.loads((tmp / "run.json").read_text()).get("usage", {})
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"CLI run {i}: {wall:.1f}s wall, load {load:.1f}, raw generation {tg:.1f} tok/s, "
              f"wall x raw = {wall * tg:.0f} tokens' worth; calls {usage.get('calls')}, "
              f"completion {usage.get('completion_tokens')}")
        walls.append((wall * tg, wall))
    if walls:
        print(f"one-shot CLI: median wall x raw = {statistics.median(w for w, _ in walls):.0f} tokens' "
              f"worth (issue 26: 1,310 before, goal <= 655); median wall "
              f"{statistics.median(w for _, w in walls):.1f}s")


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
    ap.add_argument("--cli", action="store_true",
                    help="time one-shot `python -m rt_core run` processes instead (start-up included)")
    ap.add_argument("--raw-only", type=int, metavar="REPEATS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.raw_only:
        print(json.dumps(_raw_here(args.raw_only)))
        return
    if args.cli:
        return cli_runs(args.repeats)
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
