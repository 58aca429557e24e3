"""A revised run's rounds as Markdown for the run's export: each round's mean score and
reviewers' scores, why the rounds stopped, and every rewritten answer with the weakness
it answers and its word-level diff (run/diff.py), in a code block so that a Markdown
viewer shows the model's text literally. `stop_words` is the one place a round's stop
(rt_core/stops.py) becomes words: the app, the CLI and this export all show it."""
from __future__ import annotations

from collections.abc import Callable

from ...fiveq import BY_KEY
from ...types import Round, StopReason
from .diff import diff_lines, proposal_diff


def _scores(before: float | None, after: float | None) -> str:
    return f"({before:.2f} before, {after:.2f} now)" if before is not None and after is not None else ""


def stop_words(rnd: Round) -> str:
    """Why no round came after `rnd`, in words ("" when one may)."""
    stop = rnd.stopped
    if stop is None:
        return ""
    if stop.words:
        return stop.words
    reason, scores = stop.reason, _scores(stop.before, stop.after)
    if reason is StopReason.CHANGED_NOTHING:
        return (f"Round {rnd.number + 1} changed nothing: no answer was rewritten, so there was "
                "nothing new to review.")
    if stop.reopened:
        why = ("There was no mean score to compare with the round before" if reason is StopReason.NO_SCORE
               else f"The mean score did not improve {scores}")
        return f"{why}; a further round was asked for after this stop, so the revision went on."
    if reason is StopReason.NO_SCORE:
        return "No mean score to compare with the round before, so no further round."
    if reason is StopReason.NOT_IMPROVED:
        return (f"The mean score did not improve {scores}, so the revision stopped here; the run "
                f"keeps round {stop.kept}, the best-scored.")
    n = rnd.number
    return f"The last of the {n} revision round{'s' * (n > 1)} asked for."


def rounds_markdown(rounds: list[Round], person: Callable[[str], str] = str) -> list[str]:
    """Markdown lines (none without rounds)."""
    if not rounds:
        return []
    lines = ["## Revision rounds", ""]
    for rnd in rounds:
        mean = rnd.meta_review.score if rnd.meta_review else None
        scores = ", ".join(f"{person(r.reviewer_id)} {r.score}" for r in rnd.reviews) or "not reviewed"
        lines.append(f"- round {rnd.number}: mean score {mean if mean is not None else '-'} ({scores})")
    stops = [stop_words(r) for r in rounds if r.stopped]
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
