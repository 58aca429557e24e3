"""A scripted model whose answers depend on who is present (tests of provenance and credit).

Each author's persona names them; each draft carries its author's own sentence in
every answer; the editor keeps the drafts' sentences, cites each by its label, and
Ada's sentence lifts the review score. So leaving Ada out must move the proposal and
the score, and leaving anyone else out only a little.
"""
from __future__ import annotations

import re

from rt_core import fiveq

OWN = {"Ada Astro": "Stellar kinematics benchmarks calibrate every transfer test.",
       "Nia Lang": "Language agents narrate each galactic map for auditors.",
       "Cole Crim": "Policing records supply the comparison cohort."}
KEY = "Stellar kinematics"


def _fiveq(answers: list[str]) -> str:
    return "\n".join(f"{q.heading}\n{a}" for q, a in zip(fiveq.QUESTIONS, answers, strict=True))


def responder(messages: list, params: dict) -> str:
    system = str(messages[0].get("content", ""))
    user = str(messages[-1].get("content", ""))
    if "These are publications by" in user:
        name = re.search(r"publications by (.+?), newest", user).group(1)
        return f"I am {name}. I study careful measurement and methods that travel across fields."
    if "team members' drafts" in user:
        drafts = re.split(r"Draft \d+: \[A(\d+)\]", user)[1:]
        parts = []
        for label, body in zip(drafts[::2], drafts[1::2], strict=True):
            own = [s for s in OWN.values() if s in body]
            parts += [f"{s} [A{label}]" for s in own]
        n = len(drafts) // 2
        read = re.search(r"An answer from [^.]*\.", user)
        return _fiveq([f"A merged question from {n} drafts. {read.group(0) if read else ''} "
                       + " ".join(parts)] * 5)
    if "You are reviewing" in user:
        score = 8 if KEY in user else 4
        return f"Strengths:\n- Clear.\nWeaknesses:\n- Thin data.\nScore: {score}"
    if "Summarise the reviews" in user or "area chair" in system:
        return "Strengths:\n- Clear.\nWeaknesses:\n- Thin data."
    if fiveq.QUESTIONS[0].heading in user:  # a draft: the persona names its author
        name = next((n for n in OWN if n in system), "")
        papers = "; ".join(re.findall(r"Title: ([^\n(]+)", user))
        return _fiveq([f"An answer from {papers}. {OWN.get(name, '')}"] * 5)
    return "I study things."
