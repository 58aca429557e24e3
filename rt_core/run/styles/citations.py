"""The labels an instruction-model aggregator cites its drafts by, checked and taken out.

The aggregate prompt, and each candidate's led merge when a run writes several
(run/candidates/writing.py), shows each draft under a label ([A1], [A2], ...) and asks
the editor to put the label after what it takes from that draft. The editor reads only the
drafts, so a draft label is the only thing it can honestly cite; a label that names no
draft (an [A9] of three drafts, or a paper label [P3] it was never shown) is fabricated:
it is dropped and the run says so in a note.

The labels are taken out of the answer text before anything else reads it. Reviewer
choice, the reviewers and the similarity to the reference all read the answers; a
bracketed label in them would change what is measured, and would make an instruction
model's answers differ in form from a base model's. What was cited is kept on the run's
provenance (`Source.cited`), where the Results page shows it beside each answer.
"""
from __future__ import annotations

import re

from ...types import QUESTION_KEYS, Proposal, Provenance, Source

# One bracket may hold several labels: [A1], [A1, A3], [A2; P1].
_BRACKET = re.compile(r"\s*\[\s*([AP]\d+(?:\s*[,;]\s*[AP]?\d+)*)\s*\]", re.I)
_LABEL = re.compile(r"([AP])?(\d+)", re.I)


def draft_label(i: int) -> str:
    """The label of the i-th draft (1-based) in the aggregate prompt's material."""
    return f"A{i}"


def labels_in(text: str) -> list[str]:
    """Every label cited in a text, in order, upper-cased ('A1', 'P3'); a bare number in a
    list takes the letter before it ([A1, 3] cites A1 and A3)."""
    out: list[str] = []
    for m in _BRACKET.finditer(text or ""):
        letter = "A"
        for lm in _LABEL.finditer(m.group(1)):
            letter = (lm.group(1) or letter).upper()
            out.append(f"{letter}{int(lm.group(2))}")
    return out


def strip_labels(text: str) -> str:
    """The text without its citation brackets (spacing before punctuation tidied)."""
    text = _BRACKET.sub("", text or "")
    return re.sub(r"\s+([.,;:!?])", r"\1", text).strip()


def take_citations(proposal: Proposal, notes: list[str],
                   who: str = "The aggregator") -> tuple[Proposal, Provenance]:
    """The proposal with its labels taken out, and the drafts each answer cites (as
    `cited` sources, scores filled in later by the provenance stage). Each fabricated
    label adds one note, naming `who` cited it (several candidates' editors share the
    run's notes, so a note says whose merge it was)."""
    by_label = {draft_label(i): d.author_id for i, d in enumerate(proposal.drafts, 1) if d.author_id}
    answers: dict[str, list[Source]] = {}
    for key in QUESTION_KEYS:
        text = getattr(proposal, key)
        cited: list[str] = []
        for label in labels_in(text):
            if label in by_label:
                cited.append(by_label[label])
            else:
                notes.append(f"{who} cited [{label}] in {key.upper()}, which names no "
                             f"draft it was shown; the citation was dropped.")
        setattr(proposal, key, strip_labels(text))
        answers[key] = [Source("author", a, 0.0, True) for a in dict.fromkeys(cited)]
    notes[:] = list(dict.fromkeys(notes))
    return proposal, Provenance(answers={k: v for k, v in answers.items() if v})
