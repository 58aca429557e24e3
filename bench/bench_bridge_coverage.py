"""How many neighbourhoods of two researchers from different fields offer a pairing with a
bridge at all (a method that can run on the other side's data, or units both sides study)?

Why: the offline proposal is planned from what the papers state (run/facets/). Where the
two researchers' papers offer no bridge, the honest proposal is a "long shot" that a blind
reader never finds worth reading, however it is worded. This counts, over every pair of the
bundled researchers whose primary fields differ, which bridge the best pairing uses, so the
share of random neighbourhoods that can give a readable proposal is a measured number.

    .venv/bin/python bench/bench_bridge_coverage.py [--by-field]

The pool of a pair is both researchers' papers (what `run --researchers a,b` reads); the
pairing is the run's own (`pair.pairings` with MiniLM), without the store's kept facets.
"""
from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.run.facets.kept import by_field, facets_of  # noqa: E402
from rt_core.run.facets.pair import pairings  # noqa: E402
from rt_core.types import Paper  # noqa: E402

COMMUNITY = ROOT / "assets" / "community"


def main() -> None:
    researchers = json.loads((COMMUNITY / "researchers.json").read_text("utf-8"))
    papers = {p["id"]: Paper.from_dict(p) for p in json.loads((COMMUNITY / "papers.json").read_text("utf-8"))}
    embedder = Embedder()
    found = facets_of(list(papers.values()), None, embedder)
    outcome: Counter[str] = Counter()
    by_pair: Counter[tuple[str, str, str]] = Counter()
    for a, b in itertools.combinations(researchers, 2):
        if a["fields"][0] == b["fields"][0]:
            continue
        pool = list({pid: papers[pid] for pid in [*a["publication_ids"], *b["publication_ids"]]
                     if pid in papers}.values())
        plans = pairings(by_field(pool, {p.id: found[p.id] for p in pool if p.id in found}), embedder,
                         texts={p.id: f"{p.title}. {p.abstract or ''}" for p in pool},
                         paper_fields={p.id: tuple(p.fields) for p in pool})
        bridge = plans.ranked[0].bridge if plans.ranked else "no pairing"
        outcome[bridge] += 1
        by_pair[(*sorted((a["fields"][0], b["fields"][0])), bridge)] += 1
    total = sum(outcome.values())
    print(f"{total} pairs of researchers from different fields")
    for k, v in outcome.most_common():
        print(f"  {k:12s} {v:4d}  {v / total:.0%}")
    if "--by-field" in sys.argv:
        fields = sorted({k[:2] for k in by_pair})
        for fa, fb in fields:
            row = {g: by_pair[(fa, fb, g)] for g in ("method", "unit", "none", "no pairing")}
            print(f"  {fa:>14s} x {fb:<14s} " + " ".join(f"{g}={n}" for g, n in row.items() if n))


if __name__ == "__main__":
    main()
