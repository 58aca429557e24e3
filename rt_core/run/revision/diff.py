"""What changed between two rounds of a proposal, question by question.

A revision round keeps or rewrites each of the five answers; the reader wants to see
exactly which ones moved and how. Two answers count as the same when they differ only
in spacing (a model that re-wraps a line has not revised it). The word-level diff is
plain text with `[-removed-]` and `{+added+}` markers, so the app shows it as text and
never as HTML, and an export can carry it unchanged.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from ...fiveq import QUESTIONS
from ...types import Proposal


@dataclass(frozen=True)
class QuestionDiff:
    question: str  # "q1".."q5"
    before: str
    after: str
    text: str  # the word-level diff, plain text


def _same(a: str, b: str) -> bool:
    return " ".join((a or "").split()) == " ".join((b or "").split())


def changed_questions(before: Proposal, after: Proposal) -> list[str]:
    """The keys of the answers that differ (not only in spacing), in question order."""
    return [q.key for q in QUESTIONS
            if not _same(getattr(before, q.key), getattr(after, q.key))]


def word_diff(before: str, after: str) -> str:
    """Words kept as they are, removed ones as [-...-], added ones as {+...+}."""
    a, b = (before or "").split(), (after or "").split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out += a[i1:i2]
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def proposal_diff(before: Proposal, after: Proposal) -> list[QuestionDiff]:
    """One QuestionDiff per changed answer, in question order; none for kept answers."""
    return [QuestionDiff(k, getattr(before, k), getattr(after, k),
                         word_diff(getattr(before, k), getattr(after, k)))
            for k in changed_questions(before, after)]


def diff_lines(diff: QuestionDiff) -> str:
    """A changed answer as unified-diff-like text: '- ' the old answer, '+ ' the new one,
    then the word-level diff (what st.code shows)."""
    return f"- {diff.before}\n+ {diff.after}\n\nwords: {diff.text}"
