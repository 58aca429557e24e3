"""Is a run's JSON export the same before and after a change (apart from ids and times)?

    .venv/bin/python bench/export_identity.py --out DIR [--compare OTHERDIR]

A refactoring that should not change behaviour is checked by running this on the tree
before it (--out before/) and after it (--out after/ --compare before/). Each case runs the
command line of THIS tree (`python -m rt_core --db <fresh sqlite> run ... --out-json`), in a
child process with the scripted model answering like the demo model (RT_SCRIPTED=demo,
--model scripted/demo), so nothing reaches a network and every reply is fixed.

Cases: the 13 starter presets (community.presets(), as bench_presets.py runs them), and on
the first preset a brainstorm (--candidates 3), a revision round in the run
(--revision-rounds 1), more rounds on a finished run (`revise RUN --rounds 1`) and a novelty
check (--novelty). Each case gets its own store and data folder, so no case reads another's
cache.

What is normalised away, and only that (everything else must match):
- the run's id (wherever it occurs, also inside strings) becomes "<run>";
- values under keys that carry a clock reading (created_at and any *_at, timings' seconds,
  wall/duration/elapsed/seconds) become "<time>"; the keys themselves stay, so a stage that
  appears or disappears still shows;
- ISO date-times inside strings become "<time>";
- object keys are written sorted: the order in which parallel calls finish (e.g. which
  profile lands in the dict first) is not behaviour.
With --compare, each case prints "identical" or the first lines of a unified diff, and the
exit status is 1 when any case differs or is missing.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core import community  # noqa: E402

MODEL = "scripted/demo"
TIME_KEYS = re.compile(r"(^|_)(at|time|times|timings|wall|wall_s|duration|elapsed|seconds)$")
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?")
DIFF_LINES = 40


def cases() -> list[tuple[str, list[str], list[str]]]:
    """(name, `run` arguments, follow-up command or []) for every case, in a fixed order."""
    out = []
    presets = community.presets()
    for p in presets:
        out.append((p["id"], _neighbourhood(p), []))
    first = presets[0]
    base = _neighbourhood(first)
    out.append((f"{first['id']}--candidates", base + ["--candidates", "3"], []))
    out.append((f"{first['id']}--revision-round", base + ["--revision-rounds", "1"], []))
    out.append((f"{first['id']}--revise-more", base, ["revise", "{run}", "--rounds", "1"]))
    out.append((f"{first['id']}--novelty", base + ["--novelty"], []))
    return out


def _neighbourhood(preset: dict) -> list[str]:
    return ["--researchers", ",".join(preset["researcher_ids"]),
            "--papers", ",".join(preset["paper_ids"])]


def _cli(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rt_core", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=900)


def run_case(run_args: list[str], follow: list[str], work: Path) -> dict:
    """Run one case in its own store and data folder; the export as loaded JSON."""
    work.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), RT_SCRIPTED="demo", RT_DATA_DIR=str(work / "data"))
    env.pop("RT_DB", None)
    env.pop("RT_ROUTER_CONFIG", None)
    db, out = str(work / "store.sqlite3"), work / "run.json"
    done = _cli(["--db", db, "run", "--model", MODEL, *run_args, "--out-json", str(out)], env)
    if follow:
        run_id = json.loads(out.read_text("utf-8"))["id"]
        done = _cli(["--db", db, *[a.replace("{run}", run_id) for a in follow],
                     "--out-json", str(out)], env)
    if not out.exists():
        raise SystemExit(f"no export written (exit {done.returncode}):\n{done.stderr[-2000:]}")
    data = json.loads(out.read_text("utf-8"))
    data["_exit_status"] = done.returncode  # a run that fails the same way is still the same
    return data


def normalise(value, run_id: str, key: str = ""):
    """The export with ids and clock readings replaced (see the module docstring)."""
    if TIME_KEYS.search(key):
        if isinstance(value, dict):
            return {k: "<time>" for k in value}
        return value if value in (None, "", [], {}) else "<time>"
    if isinstance(value, dict):
        return {k: normalise(v, run_id, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, run_id) for v in value]
    if isinstance(value, str):
        value = ISO_TIME.sub("<time>", value)
        return value.replace(run_id, "<run>") if run_id else value
    return value


def text_of(data: dict) -> str:
    return json.dumps(normalise(data, data.get("id", "")), indent=1, sort_keys=True,
                      ensure_ascii=False) + "\n"


def compare(out: Path, other: Path, names: list[str]) -> int:
    differ = 0
    for name in names:
        mine, theirs = out / f"{name}.json", other / f"{name}.json"
        if not theirs.exists():
            print(f"{name}: missing in {other}")
            differ += 1
            continue
        a, b = theirs.read_text("utf-8").splitlines(), mine.read_text("utf-8").splitlines()
        if a == b:
            print(f"{name}: identical")
            continue
        differ += 1
        diff = list(difflib.unified_diff(a, b, str(theirs), str(mine), n=1, lineterm=""))
        print(f"{name}: differs ({sum(1 for d in diff if d[:1] in '+-') - 2} changed lines)")
        print("\n".join("    " + d for d in diff[:DIFF_LINES]))
    print(f"\n{len(names) - differ} of {len(names)} identical")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for one normalised export per case")
    ap.add_argument("--compare", help="a folder written earlier by this script")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = [c for c in args.cases.split(",") if c]
    todo = [c for c in cases() if not wanted or c[0] in wanted]
    with tempfile.TemporaryDirectory(prefix="export-identity-") as tmp:
        for name, run_args, follow in todo:
            t = time.perf_counter()
            data = run_case(run_args, follow, Path(tmp) / name)
            (out / f"{name}.json").write_text(text_of(data), "utf-8")
            print(f"{name:44s} {data.get('status')} {time.perf_counter() - t:5.1f}s", flush=True)
    if args.compare:
        return compare(out, Path(args.compare), [c[0] for c in todo])
    return 0


if __name__ == "__main__":
    sys.exit(main())
