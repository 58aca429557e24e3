"""The scripted demo model (RT_SCRIPTED=demo, used by demos and browser tests) must give a
well-formed answer to every prompt in the prompt files: a prompt added without a demo
answer fails here instead of in a browser test."""
from __future__ import annotations

import pytest

from rt_core import fiveq
from rt_core.models.scripted import demo_responder
from rt_core.run import prompts
from rt_core.run.styles import parse


def _chat_ok(name: str, reply: str) -> bool:
    checks = {
        "profile": lambda r: len(r.split()) >= 10,
        "draft": lambda r: parse.parse_five_questions(r)[1] == [],
        "aggregate": lambda r: parse.parse_five_questions(r)[1] == [],
        "reference_5q": lambda r: parse.parse_five_questions(r)[1] == [],
        "review": lambda r: parse.parse_review(r)[1] == [],
        "meta_review": lambda r: parse.parse_review(r)[1] == ["score"],
        "ask_missing": lambda r: bool(r.strip()),
        "bullets": lambda r: len(parse.split_bullets(r)) >= 1,
        "judge": lambda r: parse.parse_judge(r) is not None and "overall" in parse.parse_judge(r),
    }
    assert name in checks, f"no expectation for chat prompt '{name}': add one here"
    return checks[name](reply)


def _values(template) -> dict[str, str]:
    sample = {"questions": fiveq.headings(), "part": "the Score",
              "text": "Strengths: a clear idea. Weaknesses: no data plan.",
              "papers": "Title: Mapping the Milky Way disk\nAbstract: Stellar kinematics.",
              "drafts": "Draft 1:\n" + fiveq.headings(), "proposal": fiveq.headings(),
              "reviews": "Reviewer 1:\nStrengths: clear\nWeaknesses: vague\nScore: 6"}
    return {v: sample.get(v, f"sample {v}") for v in template.variables}


@pytest.mark.parametrize("name", sorted(prompts.load("chat").templates))
def test_demo_model_answers_every_chat_prompt(name):
    template = prompts.load("chat")[name]
    reply = demo_responder(template.messages(**_values(template)), {})
    assert _chat_ok(name, reply), reply


@pytest.mark.parametrize("name", sorted(prompts.load("stem").templates))
def test_demo_model_completes_every_stem_document(name):
    """Base-model prompts are documents the model continues from a stem, one line each."""
    ps = prompts.load("stem")
    doc = ps[name].render(**_values(ps[name]))["text"].rstrip()
    stems = [q.stem for q in fiveq.QUESTIONS] + list(ps.stems.values())
    for stem in stems:
        reply = demo_responder([{"role": "user", "content": doc + "\n" + stem}], {"stop": ["\n"]})
        assert reply.strip() and "\n" not in reply.strip()
        if stem == ps.stems["score"]:
            assert parse.parse_score(reply) is not None
