"""All 13 starter presets on the embedded model: is each proposal grounded in every chosen
field, are the Q1s distinct, do reviewers share a field with the neighbourhood, are any
review sections empty, and how long does each run take.

    .venv/bin/python bench/bench_presets.py [--presets nlp-astronomy,...] [--json out.json]

Definitions (kept in this one file so a "before" tree can be measured with the same rules):
- a preset's *chosen fields* are the primary (first-listed) fields of its chosen papers;
- a field's *specific words* are the words (4+ letters, not stop words) of the preset's
  chosen papers in that field that occur in at most one store paper outside that field;
- a proposal is *grounded* in a field when its text uses at least one of those words
  (reported for the whole proposal and for Q1 alone);
- a review section is *empty* when, without its sentence stem, it has fewer than three
  words or ends in a colon ("The proposal is strong in the following areas:").
Each preset runs on a fresh store (cold: no cached calls or profiles); the model is loaded
once before the first run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core import community  # noqa: E402
from rt_core.models.local import BUNDLED_NAME, engine  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402

STOP = frozenset(str.split("""about above after again against also among because been before being below between
both cannot could does doing down during each every from further have having here into itself
just more most much must only other over same should some such than that their them then there
these they this those through under until very what when where which while whom with within
without would your using used use uses based across well show shows shown paper papers study
studies work works many first second three make makes made take takes allow allows provide
provides give gives find finds found large larger small smaller high higher lower less often
approach approaches method methods result results model models data new also around three
four five several known whose those along authors argue argues"""))
WORD = re.compile(r"[a-z][a-z\-]{3,}")
STEM_LEADS = ("however, the proposal", "the proposal")


def words(text: str) -> set[str]:
    return {w.strip("-") for w in WORD.findall((text or "").lower())} - STOP


def specific_words(store: Store, preset: dict) -> dict[str, set[str]]:
    papers = store.corpus.get_papers(preset["paper_ids"])
    chosen = list(dict.fromkeys(p.fields[0] for p in papers if p.fields))
    everyone = store.corpus.search_papers("", limit=100000)
    out = {}
    for f in chosen:
        mine = set().union(*(words(p.title + " " + p.abstract) for p in papers if f in p.fields))
        df = Counter(w for p in everyone if f not in p.fields for w in words(p.title + " " + p.abstract))
        out[f] = {w for w in mine if df[w] <= 1}
    return out


def section_empty(text: str) -> bool:
    t = re.sub(r"^\s*-\s*", "", (text or "").strip()).lower()
    for lead in STEM_LEADS:
        if t.startswith(lead):
            t = t[len(lead):]
            break
    return len(t.split()) < 3 or t.rstrip().endswith(":")


def measure(store: Store, preset: dict, run) -> dict:
    spec = specific_words(store, preset)
    prop = run.proposal
    text = " ".join(prop.answers().values()) if prop else ""
    q1 = prop.q1 if prop else ""
    grounded = {f: sorted(words(text) & ws)[:6] for f, ws in spec.items()}
    q1_grounded = {f: sorted(words(q1) & ws)[:6] for f, ws in spec.items()}
    chosen = set(spec)
    reviewers = [store.corpus.get_researcher(r.reviewer_id) for r in run.reviews
                 if store.corpus.researcher_exists(r.reviewer_id)]
    in_fields = sum(1 for r in reviewers if chosen & set(r.fields))
    empty = sum(section_empty(r.strengths) + section_empty(r.weaknesses) for r in run.reviews)
    sections = 2 * len(run.reviews)
    if run.meta_review is not None:
        empty += section_empty(run.meta_review.strengths) + section_empty(run.meta_review.weaknesses)
        sections += 2
    return {"preset": preset["id"], "status": run.status, "fields": sorted(chosen),
            "grounded_all": all(grounded.values()), "grounded": grounded,
            "q1_grounded_all": all(q1_grounded.values()), "q1_grounded": q1_grounded,
            "q1": q1, "reviewers": len(reviewers), "reviewers_in_fields": in_fields,
            "reviewer_fields": [r.fields for r in reviewers],
            "empty_sections": empty, "sections": sections,
            "calls": run.usage.calls, "timings": run.timings,
            "errors": [e.message for e in run.errors]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="", help="comma-separated ids (default: all)")
    ap.add_argument("--reviewers", type=int, default=3)
    ap.add_argument("--json", default="", help="write the per-preset figures here")
    args = ap.parse_args()
    t = time.perf_counter()
    engine(BUNDLED_NAME)
    print(f"model load {time.perf_counter() - t:.1f}s; load average {os.getloadavg()[0]:.2f}")
    tmp = Path(tempfile.mkdtemp())
    wanted = [p for p in args.presets.split(",") if p]
    rows = []
    for preset in community.presets():
        if wanted and preset["id"] not in wanted:
            continue
        store = Store(tmp / f"{preset['id']}.sqlite3")
        community.ensure_loaded(store)
        cfg = RunConfig(researcher_ids=preset["researcher_ids"], paper_ids=preset["paper_ids"],
                        num_reviewers=args.reviewers)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        run = Simulation(RunRequest(cfg), store).run_sync()
        wall = time.perf_counter() - t
        row = measure(store, preset, run) | {"wall_s": round(wall, 1), "load": round(load, 2)}
        rows.append(row)
        print(f"{preset['id']:36s} {wall:6.1f}s grounded={row['grounded_all']!s:5s} "
              f"q1={row['q1_grounded_all']!s:5s} reviewers {row['reviewers_in_fields']}/{row['reviewers']} "
              f"empty {row['empty_sections']}/{row['sections']} load {load:.1f}\n    Q1: {row['q1']}",
              flush=True)
        store.close()
        if args.json:  # after every preset, so a long sweep that is stopped keeps its figures
            Path(args.json).write_text(json.dumps(rows, indent=1))
    q1s = {re.sub(r"\W+", " ", r["q1"].lower()).strip() for r in rows}
    rev = sum(r["reviewers"] for r in rows)
    print(f"\n{len(rows)} presets: grounded in all fields {sum(r['grounded_all'] for r in rows)}; "
          f"Q1 names every field {sum(r['q1_grounded_all'] for r in rows)}; distinct Q1s {len(q1s)}; "
          f"reviewers sharing a field {sum(r['reviewers_in_fields'] for r in rows)}/{rev}; "
          f"empty sections {sum(r['empty_sections'] for r in rows)}/{sum(r['sections'] for r in rows)}; "
          f"wall median {statistics.median(r['wall_s'] for r in rows):.1f}s "
          f"(max {max(r['wall_s'] for r in rows):.1f}s)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
