"""Scripted replies that improve on request, for the revision-round tests (core, app,
browser): a review scores 4 plus the number of answers the authors improved (marked
IMPROVED), up to a ceiling; each revision improves the next answer and names the
weakness it answers (a real one or a made-up one)."""
from __future__ import annotations

from rt_core.errors import ProviderError
from rt_core.models.scripted import demo_responder
from rt_core.run.styles import parse

REAL = "The data plan is vague."
MADE_UP = "The proposal ignores quantum gravity entirely."


def _revise(prompt: str, quote: str, pad: int = 0) -> str:
    mine = prompt.split("read it:", 1)[1].split("The meta-review:", 1)[0]
    answers, _ = parse.parse_five_questions(mine)
    n = mine.count("IMPROVED")
    key = f"q{min(n + 1, 5)}"
    answers[key] = answers[key] + " IMPROVED: we now name the survey data." + " data" * pad
    body = "\n".join(f"[Question {i}]\n{answers[f'q{i}']}" for i in range(1, 6))
    return f"{body}\n\nChanges:\nQ{key[1]}: \"{quote}\""


def improving(ceiling: int, quote: str = REAL, fail_reviews_of=None, pad: int = 0,
              spread: bool = False):
    """Replies that improve one answer per revision; reviews score 4 + improvements, at
    most `ceiling`. fail_reviews_of(prompt) -> True makes that review fail. spread: a
    reviewer's score moves by -1, 0 or +1 with their persona, so lines differ in a chart."""
    def responder(messages, params):
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        prompt = messages[-1]["content"]
        if "The reviews are in" in system:
            return _revise(prompt, quote, pad)
        if "Summarise the reviews" in prompt:
            return demo_responder(messages, params)
        if "Score:" in prompt and "Strengths:" in prompt:
            if fail_reviews_of and fail_reviews_of(prompt):
                raise ProviderError("the reviewer's provider fell over")
            score = min(4 + prompt.count("IMPROVED"), ceiling) + (spread and sum(map(ord, system)) % 3 - 1)
            return (f"Strengths:\n- A clear question.\nWeaknesses:\n- {REAL}\n- Baselines are "
                    f"not named.\nScore: {score}")
        return demo_responder(messages, params)
    return responder


def revised_run(store, rounds: int = 2, ceiling: int = 5, reviewers: tuple[int, int] = (4, 6)):
    """A finished run of the starter community's NLP + Astronomy case study with revision
    rounds, made with the improving scripted model and stored in `store`: with the
    default ceiling, round 1 rises and round 2 stops the revision. The reviewers' scores
    may differ by persona (`spread`), as real reviewers' do. `reviewers`: which of the
    preset's researchers review (a slice), so two tests of one store share no calls."""
    from rt_core import community
    from rt_core.models.scripted import scripted_model
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.types import RunConfig, RunRequest

    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    model = scripted_model()
    old = model.responder
    model.responder = improving(ceiling, spread=True)
    try:
        cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                        paper_ids=preset["paper_ids"][:2], reviewer_ids=preset["researcher_ids"][slice(*reviewers)],
                        revision_rounds=rounds, embedder="local/all-MiniLM-L6-v2")
        return Simulation(RunRequest(cfg, max_retries=0), store).run_sync()
    finally:
        model.responder = old
