"""Where to put the near-duplicate threshold: the candidates' similarity (mean cosine,
question by question, bundled MiniLM; run/candidates/stages.py) measured on a few pairs.

- reworded: the same five answers said in other words (written for this bench);
- demo frame: the demo model's candidates, one sentence frame with two other concepts;
- distinct: two ideas on unrelated topics in the same frame (tests/ideas.py);
- embedded: candidates of a stored run of the embedded model (--store PATH --run ID).

    .venv/bin/python bench/bench_merge_threshold.py [--store PATH --run RUN_ID]
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.run.candidates.stages import MERGE_THRESHOLD, answer_vectors, similarity  # noqa: E402
from rt_core.run.styles.parse import parse_five_questions  # noqa: E402
from rt_core.types import Candidate, Proposal  # noqa: E402
from tests.ideas import proposal  # noqa: E402

REWORDED = [
    (["Can language-model agents plan telescope observing nights better than schedulers?",
      "Observing time is scarce and a better plan yields more science per night.",
      "Weather, targets and instrument limits change through the night.",
      "Schedulers are hand-tuned rules and agents have not been tried on them.",
      "We let an agent propose nightly plans in a simulator and compare the science returned."],
     ["Could agents built on language models schedule a telescope's night more effectively "
      "than current schedulers?",
      "Time on a telescope is limited, so a better schedule returns more science each night.",
      "Targets, instruments and the weather all shift during a night.",
      "Scheduling has relied on hand-written rules; nobody has tested agents on it.",
      "An agent drafts each night's plan in a simulated observatory and we measure the science "
      "it returns against the scheduler's."]),
    (["How do prison sentences affect the schooling of prisoners' children?",
      "Millions of children have a parent in prison, and schooling shapes their future.",
      "School records and prison records are held apart and rarely linked.",
      "Studies looked at families or at schools, not at both together.",
      "We link court and school records and compare children before and after a sentence."],
     ["What happens to the education of children whose parent is sent to prison?",
      "A great many children have an imprisoned parent, and school decides much of their future.",
      "Records of schools and of prisons are kept separately and are seldom joined.",
      "Research has studied either the families or the schools, never the two at once.",
      "Linking school and court records, we compare the children before and after the sentence."]),
]


def cand(cid: str, answers: list[str]) -> Candidate:
    return Candidate(cid, Proposal(**{f"q{i}": a for i, a in enumerate(answers, 1)}))


def from_text(cid: str, text: str) -> Candidate:
    answers, _ = parse_five_questions(text)
    return Candidate(cid, Proposal(**answers))


def demo_frame(a: str, b: str) -> list[str]:  # the demo responder's frame (models/scripted.py)
    return [f"How can methods from {a} and {b} be combined to answer a new question?",
            f"It links communities around {a} and {b}.",
            "The fields use different data, scales and standards of evidence.",
            "Prior work stayed inside one field.",
            f"We build a shared benchmark on {a} and {b} and measure transfer."]


def sims(emb, pairs: list[tuple[Candidate, Candidate]]) -> list[float]:
    out = []
    for a, b in pairs:
        v = answer_vectors(emb, [a, b])
        out.append(round(similarity(v[a.id], v[b.id]), 3))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store")
    ap.add_argument("--run")
    args = ap.parse_args()
    emb = Embedder()
    groups = {
        "reworded": sims(emb, [(cand("a", x), cand("b", y)) for x, y in REWORDED]),
        "demo frame": sims(emb, [(cand("a", demo_frame("WebArena", "Gaia Data Release")),
                                  cand("b", demo_frame("synthetic pages", "astrophysical parameters"))),
                                 (cand("a", demo_frame("stellar kinematics", "incarceration")),
                                  cand("b", demo_frame("language models", "incarceration")))]),
        "distinct": sims(emb, [(from_text("a", proposal(i)), from_text("b", proposal(j)))
                               for i, j in ((1, 2), (3, 4), (5, 6))]),
    }
    if args.store and args.run:
        from rt_core.store import Store

        run = Store(args.store).runs.load(args.run)
        cs = [c for c in run.candidates if any(c.proposal.answers().values())]
        groups["embedded"] = sims(emb, list(itertools.combinations(cs, 2)))
    for name, vals in groups.items():
        print(f"{name:12s} n={len(vals)} min {min(vals):.3f} median {statistics.median(vals):.3f} "
              f"max {max(vals):.3f}: {vals}")
    print(f"threshold in use: {MERGE_THRESHOLD}")


if __name__ == "__main__":
    main()
