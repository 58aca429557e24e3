"""Facet precision on the hand-labelled bundled abstracts (tests/fixtures/facet_labels.json):
shared by tests/test_facets.py and the figures in the README."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rt_core.run.facets import extract as X
from rt_core.text import sentences
from rt_core.types import Paper

LABELS = Path(__file__).parent / "fixtures" / "facet_labels.json"
ROOT = Path(__file__).resolve().parents[1]


def labelled(part: str = "papers") -> list[tuple[Paper, dict[str, list[str]]]]:
    """The labelled papers of one part: "papers" (read while tuning) or "held_out"."""
    papers = {p["id"]: Paper.from_dict(p) for p in
              json.loads((ROOT / "assets" / "community" / "papers.json").read_text("utf-8"))}
    return [(papers[rec["paper_id"]], rec) for rec in json.loads(LABELS.read_text("utf-8"))[part]]


def measure(embedder=None, use_cues: bool = True, use_position: bool = True,
            part: str = "papers") -> dict[str, dict]:
    """Per facet: predictions made, how many were right (the sentence opens like a labelled
    one; a prediction where none is labelled is wrong), and the labelled facets found."""
    described = X.describe(embedder) if embedder is not None else None
    out = {k: {"made": 0, "right": 0, "labelled": 0, "found": 0} for k in X.KINDS}
    for paper, labels in labelled(part):
        sents = sentences(paper.abstract)
        vecs = np.asarray(embedder.encode(sents)) if embedder is not None else None
        picked = X.choose(X.sentence_scores(sents, vecs, described, use_cues, use_position))
        for kind in X.KINDS:
            ok = labels[kind]
            out[kind]["labelled"] += bool(ok)
            if kind in picked:
                out[kind]["made"] += 1
                right = any(sents[picked[kind]].startswith(o[:30]) for o in ok)
                out[kind]["right"] += right
                out[kind]["found"] += right
    return out


def precision(result: dict[str, dict]) -> float:
    made = sum(r["made"] for r in result.values())
    return sum(r["right"] for r in result.values()) / made if made else 0.0


def recall(result: dict[str, dict]) -> float:
    labelled = sum(r["labelled"] for r in result.values())
    return sum(r["found"] for r in result.values()) / labelled if labelled else 0.0
