"""A revised run's rounds as Markdown for the run's export: each round's mean score and
reviewers' scores, why the rounds stopped, and every rewritten answer with the weakness
it answers and its word-level diff (run/diff.py), in a code block so that a Markdown
viewer shows the model's text literally."""
from __future__ import annotations

from collections.abc import Callable

from ...fiveq import BY_KEY
from ...types import Round
from .diff import diff_lines, proposal_diff


def rounds_markdown(rounds: list[Round], person: Callable[[str], str] = str) -> list[str]:
    """Markdown lines (none without rounds)."""
    if not rounds:
        return []
    lines = ["## Revision rounds", ""]
    for rnd in rounds:
        mean = rnd.meta_review.score if rnd.meta_review else None
        scores = ", ".join(f"{person(r.reviewer_id)} {r.score}" for r in rnd.reviews) or "not reviewed"
        lines.append(f"- round {rnd.number}: mean score {mean if mean is not None else '-'} ({scores})")
    stops = [r.stopped for r in rounds if r.stopped]
    if stops:
        lines += ["", f"_{stops[-1]}_"]
    for before, rnd in zip(rounds, rounds[1:], strict=False):
        why = {c.question: c for c in rnd.changes}
        lines += ["", f"### Round {rnd.number}: what changed", ""]
        for d in proposal_diff(before.proposal, rnd.proposal):
            c = why.get(d.question)
            answers = (f"answers ({'an automatic check' if c.source == 'check' else 'a review'}): "
                       f"{c.answers}") if c and c.answers else "names no weakness found in the reviews"
            lines += [f"**Q{BY_KEY[d.question].number}** {answers}", "", "```text", diff_lines(d), "```", ""]
    return [*lines, ""]
