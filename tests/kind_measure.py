"""Per-kind precision and recall of kinds.py on the hand-labelled bundled papers
(tests/fixtures/kind_labels.json): shared by tests/test_pairing.py and the README's figures."""
from __future__ import annotations

import json
from pathlib import Path

from rt_core.run.facets import kinds as K

LABELS = Path(__file__).parent / "fixtures" / "kind_labels.json"
ROOT = Path(__file__).resolve().parents[1]


def measure(part: str = "papers") -> dict[str, dict[str, int]]:
    """Per kind: how often kinds.py named it, how many of those the label has, and how many
    papers are labelled with it."""
    papers = {p["id"]: p for p in json.loads((ROOT / "assets" / "community" / "papers.json")
                                             .read_text("utf-8"))}
    out = {k: {"made": 0, "right": 0, "labelled": 0} for k in K.KINDS}
    for rec in json.loads(LABELS.read_text("utf-8"))[part]:
        p = papers[rec["paper_id"]]
        found, gold = K.kinds_of(p["title"] + ". " + p["abstract"]), set(rec["kinds"])
        for k in K.KINDS:
            out[k]["made"] += k in found
            out[k]["right"] += k in found and k in gold
            out[k]["labelled"] += k in gold
    return out


def totals(result: dict[str, dict[str, int]]) -> tuple[float, float]:
    """Micro-averaged precision and recall over every kind."""
    made = sum(r["made"] for r in result.values())
    right = sum(r["right"] for r in result.values())
    labelled = sum(r["labelled"] for r in result.values())
    return right / made if made else 0.0, right / labelled if labelled else 0.0
