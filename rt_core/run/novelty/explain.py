"""An instruction model's reading of one facet against the retrieved papers.

Why the labels: a model asked "has this been done?" readily names papers from memory,
some of which do not exist. Here the model sees the retrieved papers as [P1], [P2]...,
and its answer may cite those labels and nothing else: a bracketed citation that is not
one of them, or an author-year reference ("Smith et al."), is refused; the model is asked
once more, and if it cites something unretrieved again the explanation is dropped and
the note says so. Only instruction models are asked (the registry decides, through the
stage context's style); the embedded base model cannot do this, so it is never asked.
"""
from __future__ import annotations

import re

from ...types import NearPaper
from .. import prompts
from ..styles.chat import ask
from ..styles.context import StageContext

FACET_NAMES = {"q1": "problem", "q5": "method"}
_BRACKETS = re.compile(r"\[([^\[\]]{1,80})\]")
_AUTHOR_YEAR = re.compile(r"\bet\s+al\b|\b[A-Z][a-z]+\s*\(\s*(?:19|20)\d\d\s*\)")


def labels(papers: list[NearPaper]) -> list[str]:
    return [f"P{i}" for i in range(1, len(papers) + 1)]


def paper_list(papers: list[NearPaper]) -> str:
    return "\n".join(f"[{label}] {p.title}" + (f" ({p.year})" if p.year else "") +
                     f", similarity {p.similarity:.2f}"
                     for label, p in zip(labels(papers), papers, strict=True))


def unretrieved(text: str, allowed: list[str]) -> list[str]:
    """What the text cites that is not a retrieved paper's label (empty: it cites only those)."""
    bad = []
    for inside in _BRACKETS.findall(text):
        for part in re.split(r"[,;]|\band\b", inside):
            part = part.strip()
            if part and part not in allowed:
                bad.append(f"[{part}]")
    bad += [m.group(0) for m in _AUTHOR_YEAR.finditer(text)]
    return list(dict.fromkeys(bad))


async def explain(ctx: StageContext, facet: str, answer: str,
                  papers: list[NearPaper]) -> tuple[str, str]:
    """(explanation, note): the explanation cites only retrieved papers, else it is ''
    and the note says why. No papers: nothing to explain against, no call."""
    if not papers or not ctx.traits.follows_instructions:
        return "", ""
    allowed = labels(papers)
    ps = prompts.load("novelty")
    msgs = ps["explain"].messages(facet=FACET_NAMES.get(facet, facet), answer=answer,
                                  papers=paper_list(papers))
    reply = (await ask(ctx, msgs, max_tokens=400)).strip()
    wrong = unretrieved(reply, allowed)
    if not wrong:
        return reply, ""
    again = msgs + [{"role": "assistant", "content": reply}] + ps["only_labels"].messages(
        wrong=", ".join(wrong), labels=", ".join(f"[{x}]" for x in allowed))
    reply = (await ask(ctx, again, max_tokens=400, extra={"seed": 1})).strip()
    still = unretrieved(reply, allowed)
    if not still:
        return reply, ""
    return "", (f"the {FACET_NAMES.get(facet, facet)} explanation was dropped: the model cited "
                f"{', '.join(still)}, which the search did not retrieve, even when asked again")
