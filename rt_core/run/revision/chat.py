"""A revision round's rewrite on an instruction model: one reply, checked.

The authors see their proposal, the meta-review, every weakness the reviewers listed
(and the nearest prior work, when the novelty check found some) and rewrite the answers
a weakness concerns, copying the rest. For each rewritten answer they name the
weakness it answers; that claim is kept only when the quote is found in the reviews
(run/quotes.py), in the reviewer's words. Which answers changed is measured by
comparing the texts (run/diff.py), never taken from the model's list. An answer the
reply leaves out keeps its previous text: a revision never loses an answer.
"""
from __future__ import annotations

import re

from ... import fiveq
from ...types import Change, MetaReview, Proposal, Review
from .. import prompts
from ..styles import parse
from ..styles.chat import ask, format_proposal
from ..styles.context import StageContext
from .diff import changed_questions
from .quotes import find_weakness, points

_CHANGES = re.compile(r"^\W*changes\W*$", re.I | re.M)
_CLAIM = re.compile(r"^\W*Q(?:uestion)?\s*([1-5])\W+(.+)$", re.I)
REPLY_TOKENS = 1600


def split_reply(reply: str) -> tuple[str, dict[str, str]]:
    """The five answers' part of the reply, and the stated weakness per question key."""
    m = _CHANGES.search(reply or "")
    if not m:
        return reply or "", {}
    claims: dict[str, str] = {}
    for line in reply[m.end():].splitlines():
        c = _CLAIM.match(line.strip())
        if c:
            claims.setdefault(f"q{c.group(1)}", c.group(2).strip().strip('"“”').strip())
    return reply[:m.start()], claims


def prior_work_text(titles: list[str]) -> str:
    if not titles:
        return ""
    lines = "\n".join(f"- {t}" for t in titles)
    return ("The nearest prior work found for this idea (say how yours differs where it "
            f"matters):\n{lines}")


def meta_text(meta: MetaReview | None) -> str:
    if meta is None:
        return "(no meta-review)"
    return f"Strengths:\n{meta.strengths or '-'}\n\nWeaknesses:\n{meta.weaknesses or '-'}"


def changes_for(before: Proposal, after: Proposal, claims: dict[str, str],
                weaknesses: list[str]) -> list[Change]:
    """One Change per answer that differs, each with the real weakness it answers or ""."""
    out = []
    for k in changed_questions(before, after):
        quote = find_weakness(claims.get(k, ""), weaknesses)
        out.append(Change(k, quote, "review" if quote else ""))
    return out


async def revise(ctx: StageContext, proposal: Proposal, reviews: list[Review],
                 meta: MetaReview | None, prior_titles: list[str]) -> tuple[Proposal, list[Change]]:
    weaknesses = points(reviews)
    msgs = prompts.load("revise")["revise"].messages(
        proposal=format_proposal(proposal), meta_review=meta_text(meta),
        weaknesses="\n".join(f"- {w}" for w in weaknesses) or "(none listed)",
        prior_work=prior_work_text(prior_titles), questions=fiveq.headings(with_guidance=True))
    reply = await ask(ctx, msgs, max_tokens=REPLY_TOKENS)
    body, claims = split_reply(reply)
    answers, _missing = parse.parse_five_questions(body)
    kept = {k: (answers[k].strip() or getattr(proposal, k)) for k in fiveq.QUESTION_KEYS}
    revised = Proposal(**kept, missing=[k for k in fiveq.QUESTION_KEYS if not kept[k]])
    return revised, changes_for(proposal, revised, claims, weaknesses)
