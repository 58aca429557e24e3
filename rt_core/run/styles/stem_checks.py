"""Automatic checks of a proposal, and what makes a review line worth keeping.

A base model's review section is sometimes empty ("The proposal is strong in the
following areas:"). It is then re-asked, and when it stays empty the section is
filled with these checks, each labelled as automatic, so no review is blank and no
check passes for a reviewer's opinion.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ...text import words
from ...types import Proposal
from .grounding import Grounding
from .stem_write import GENERIC

AUTO_CHECK = "Automatic check:"
_METRIC = re.compile(r"\b(accura\w*|error|errors|precision|recall|f1|auc|correlat\w*|rmse|mse|"
                     r"likelihood|bias|variance|rate|rates|score|scores|metric\w*|benchmark\w*|"
                     r"uncertaint\w*|residual\w*|calibrat\w*|perplexity|latency|throughput)\b", re.I)
_DATA = re.compile(r"\b(data|dataset\w*|catalog\w*|catalogue\w*|survey\w*|corpus|corpora|records?|"
                   r"observations?|samples?|measurements?|archives?|logs?|release|cohorts?|"
                   r"sequences?|images?|spectra)\b", re.I)


def section_empty(text: str) -> bool:
    """No real point: fewer than three words after the stem, or a dangling colon
    ('The proposal is strong in the following areas:')."""
    t = re.sub(r"^\s*-\s*", "", (text or "").strip()).lower()
    for lead in ("however, the proposal", "the proposal"):
        if t.startswith(lead):
            t = t[len(lead):]
            break
    return len(t.split()) < 3 or t.rstrip().endswith(":")


class CheckKind(StrEnum):
    """Which automatic check of a proposal: what a failure is carried as, never its words."""
    Q1_CONCEPT = "q1_concept"  # Q1 names a concept of a chosen field (one check per field)
    Q5_DATA_METRIC = "q5_data_metric"  # Q5 names the data and a measure of success
    NO_REPEATS = "no_repeats"  # no two answers largely repeat each other
    ALL_PARTS = "all_parts"  # every part of the proposal is there


@dataclass(frozen=True)
class Check:
    """One automatic check's outcome: which check, whether it passed, for which field (Q1),
    and its words (what a review filled by the checks says)."""
    kind: CheckKind
    passed: bool
    words: str
    field: str = ""


def run_checks(proposal: Proposal, g: Grounding) -> list[Check]:
    """Every automatic check of a proposal, passed or failed."""
    out = []
    q1 = words(proposal.q1)
    for f, fw in g.specific_words().items():
        hit = sorted(q1 & fw)
        if not fw:
            continue
        if hit:
            out.append(Check(CheckKind.Q1_CONCEPT, True,
                             f"Q1 names a concept from {g.name(f)} ({', '.join(hit[:3])}).", f))
        else:
            out.append(Check(CheckKind.Q1_CONCEPT, False, f"Q1 names no concept from {g.name(f)}.", f))
    q5 = proposal.q5 or ""
    has_data, has_metric = bool(_DATA.search(q5)), bool(_METRIC.search(q5))
    if has_data and has_metric:
        out.append(Check(CheckKind.Q5_DATA_METRIC, True, "Q5 names the data and a measure of success."))
    else:
        lacking = " and ".join(x for x, ok in (("the data", has_data), ("a metric", has_metric))
                               if not ok)
        out.append(Check(CheckKind.Q5_DATA_METRIC, False, f"Q5 does not name {lacking}."))
    if _two_answers_repeat(proposal):
        out.append(Check(CheckKind.NO_REPEATS, False, "Two answers largely repeat each other."))
    if proposal.missing:
        out.append(Check(CheckKind.ALL_PARTS, False, f"Parts missing: {', '.join(proposal.missing)}."))
    return out


def failed_checks(proposal: Proposal, g: Grounding) -> list[Check]:
    return [c for c in run_checks(proposal, g) if not c.passed]


def proposal_checks(proposal: Proposal, g: Grounding) -> tuple[list[str], list[str]]:
    """The checks in words, as (passed, failed) sentences: what a review filled by them says."""
    checks = run_checks(proposal, g)
    return [c.words for c in checks if c.passed], [c.words for c in checks if not c.passed]


def _two_answers_repeat(proposal: Proposal) -> bool:
    """Whether some two answers share most of their content words."""
    answers = [words(a) for a in proposal.answers().values() if a]
    return any(wa and wb and len(wa & wb) / min(len(wa), len(wb)) > 0.6
               for i, wa in enumerate(answers) for wb in answers[i + 1:])


def review_line_score(text: str, proposal_words: set[str]) -> float:
    """Higher for a review line about this proposal (its words) and not generic filler;
    -10 for an empty one."""
    ws = words(text)
    if section_empty(text) or not ws:
        return -10.0
    grounded = len(ws & proposal_words) / len(ws)
    generic = len(ws & GENERIC) / len(ws)
    return grounded - generic + min(len(ws), 12) / 24
