from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ... import fiveq
from ...errors import InputError
from ...models.client import LLMClient, ModelSettings, run_async
from ...models.embed import Embedder
from ...store.comparisons import Comparison
from ...store.references import paper_text_hash
from ...types import QUESTION_KEYS, Paper, Proposal, Run, RunRequest, Similarity
from ..styles import parse
from ..styles.chat import format_proposal, reference_to_5q
from ..styles.context import StageContext

# Boilerplate both sides may share without sharing content: "[Question 2]" headings, the
# question titles, the base model's stem labels ("Why it matters:") and leads ("How can").
_HEADING = re.compile(r"\[\s*question\s*[1-5]\s*\]|^\s*(?:question|q)\s*[1-5]\s*[:.)-]", re.I | re.M)
_TITLES = re.compile("|".join(re.escape(q.title) for q in fiveq.QUESTIONS), re.I)
_LABELS = re.compile(r"^\s*(?:[1-5][.)]\s*)?(?:" + "|".join(re.escape(q.stem_label)
                     for q in fiveq.QUESTIONS) + r")\s*:", re.I | re.M)
_LEADS = sorted(fiveq.stem_prefixes(), key=len, reverse=True)


def content_text(text: str) -> str:
    """An answer without headings, question titles and sentence stems, so two answers are
    similar for what they say, not for the frame they share. Applied to both sides."""
    text = _HEADING.sub(" ", text or "")
    text = _TITLES.sub(" ", text)
    text = _LABELS.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" -–—:*_#`")
    changed = True
    while changed:
        changed = False
        for lead in _LEADS:
            if text.lower().startswith(lead.lower() + " ") or text.lower() == lead.lower():
                text = text[len(lead):].strip(" ,:")
                changed = True
    return text


def _labels(embedder: Embedder, source: str) -> str:
    return f"{embedder.name}; reference: {source}" if source else embedder.name


def proposal_similarity(embedder: Embedder, generated: Proposal, reference: Proposal,
                        source: str = "") -> Similarity:
    """Per-question cosine of the content of each answer, and the mean over every question
    the reference answers: a question the proposal left out scores 0 there and is listed
    in `missing`, so answering one question perfectly is worth 1/5, not 1."""
    ref = {k: content_text(getattr(reference, k)) for k in QUESTION_KEYS}
    asked = [k for k in QUESTION_KEYS if ref[k]]
    if not asked:
        raise InputError("the reference has no answered question to compare with",
                         "Give the reference in the five-question format.")
    gen = {k: content_text(getattr(generated, k)) for k in asked}
    answered = [k for k in asked if gen[k]]
    per: dict[str, float] = {}
    if answered:
        vecs = embedder.encode([gen[k] for k in answered] + [ref[k] for k in answered])
        n = len(answered)
        per = {k: round(float(np.dot(vecs[i], vecs[n + i])), 4) for i, k in enumerate(answered)}
    mean = round(sum(per.values()) / len(asked), 4)
    return Similarity(per_question=per, mean=mean, embedder=embedder.name, reference=reference,
                      missing=[k for k in asked if k not in per], reference_source=source,
                      evaluator=_labels(embedder, source))


ABSTRACT_SOURCE = "abstract, whole text (no five-question reference)"


def whole_text_similarity(embedder: Embedder, generated: Proposal, paper: Paper) -> Similarity:
    """The last resort when no five answers exist for the reference: the whole proposal
    against the title and abstract, labelled as such (not comparable with per-question scores)."""
    body = " ".join(t for t in (content_text(v) for v in generated.answers().values()) if t)
    if not (paper.abstract or "").strip():
        raise InputError(f"the reference paper '{paper.title}' has no abstract and no "
                         "five-question answers", "Paste its five answers, or import its abstract.")
    missing = [k for k in QUESTION_KEYS if not content_text(getattr(generated, k))]
    mean = 0.0
    if body:
        vecs = embedder.encode([body, f"{paper.title}. {paper.abstract}"])
        mean = round(float(np.dot(vecs[0], vecs[1])), 4)
    return Similarity(per_question={}, mean=mean, embedder=embedder.name, reference=None,
                      missing=missing, kind="whole-text", reference_source=ABSTRACT_SOURCE,
                      evaluator=_labels(embedder, ABSTRACT_SOURCE))


# -- where a reference's own five answers come from -------------------------------------

PASTED = "pasted five-question text"
SHIPPED = "shipped summary (written for this app, not the authors' text)"


@dataclass
class Reference:
    paper: Paper
    answers: Proposal | None  # None: only the abstract is left (whole-text similarity)
    source: str


def restater_for(request: RunRequest, store) -> LLMClient | None:
    """The evaluator's restating model, separate from the run's model (None when unset)."""
    settings = ModelSettings.for_evaluator(request)
    return LLMClient(settings, store=store) if settings is not None else None


async def reference_answers(store, paper: Paper, pasted: str = "",
                            restater: LLMClient | None = None) -> Reference:
    """The reference's five answers, in order of trust: a text the user pasted or uploaded;
    a restatement stored for this paper (written once by a capable model); one written now
    by the evaluator's model (and stored); the summary shipped with the starter community.
    With none of these the answers are None and the caller compares whole texts."""
    if pasted.strip():
        answers, missing = parse.parse_five_questions(pasted)
        if len(missing) == len(QUESTION_KEYS):
            raise InputError("the pasted reference has no recognisable questions",
                             "Use headings such as '[Question 1]', 'Q1' or '1.' for the five answers.")
        return Reference(paper, Proposal(**answers, missing=missing), PASTED)
    stored = store.references.restated(paper)
    if stored is not None:
        return Reference(paper, stored.answers, f"restated by {stored.model}")
    if restater is not None:
        if not restater.settings.traits.follows_instructions:
            raise InputError(f"'{restater.settings.model}' is a small base model, not fit to "
                             "restate a paper", "Choose an instruction model (e.g. gpt-4o) as "
                             "the evaluator, or paste the paper's five answers.")
        answers = await reference_to_5q(StageContext(restater), paper)
        if len(answers.missing) < len(QUESTION_KEYS):
            store.references.put(paper.id, "restated", answers, model=restater.settings.model,
                                 text_hash=paper_text_hash(paper))
            return Reference(paper, answers, f"restated by {restater.settings.model}")
    summary = store.references.summary(paper.id)
    if summary is not None:
        return Reference(paper, summary.answers, SHIPPED)
    return Reference(paper, None, ABSTRACT_SOURCE)


def compare(embedder: Embedder, proposal: Proposal, reference: Reference) -> Similarity:
    if reference.answers is None:
        return whole_text_similarity(embedder, proposal, reference.paper)
    return proposal_similarity(embedder, proposal, reference.answers, reference.source)


def bullet_recall(embedder: Embedder, generated: list[str], reference: list[str]) -> float | None:
    """Mean over reference points of the best cosine to any generated point."""
    if not generated or not reference:
        return None
    vecs = embedder.encode(reference + generated)
    ref, gen = vecs[:len(reference)], vecs[len(reference):]
    return round(float(np.mean(np.max(ref @ gen.T, axis=1))), 4)


async def to_bullets(ctx: StageContext | None, text: str) -> list[str]:
    """Rewrite review text as separate points (with the model when one is given)."""
    if ctx is not None and ctx.traits.follows_instructions and text.strip():
        reply = await ctx.client.complete(ctx.prompts["bullets"].messages(text=text), max_tokens=800)
        reply = reply.text
        points = parse.split_bullets(reply)
        if points:
            return points
    return parse.split_bullets(text)


async def review_similarity(ctx: StageContext | None, embedder: Embedder,
                            generated: dict, reference: dict) -> dict:
    """generated/reference: {'strengths': str, 'weaknesses': str, 'score': number|None}."""
    out: dict[str, float | None] = {}
    for part in ("strengths", "weaknesses"):
        gen = await to_bullets(ctx, str(generated.get(part) or ""))
        ref = await to_bullets(ctx, str(reference.get(part) or ""))
        out[part] = bullet_recall(embedder, gen, ref)
    gs, rs = generated.get("score"), reference.get("score")
    out["delta_s"] = round(abs(float(gs) - float(rs)), 3) if gs is not None and rs is not None else None
    return out


JUDGE_KEYS = ("topic", "method", "factual", "claim", "application_context", "overall",
              "novelty_reference", "feasibility_reference", "novelty_generated",
              "feasibility_generated")


async def judge(ctx: StageContext, reference: Proposal, generated: Proposal) -> dict:
    """LLM-judge scores (1-10) in one JSON reply; keys it left out come back as None.
    Needs an instruction-following model: the tiny base model cannot answer in JSON."""
    if not ctx.traits.follows_instructions:
        raise InputError("the LLM judge needs an instruction-following model",
                         "Choose a hosted or Ollama model (e.g. gpt-4o-mini) for the judge.")
    msgs = ctx.prompts["judge"].messages(reference=format_proposal(reference),
                                         generated=format_proposal(generated))
    data = None
    for attempt in range(ctx.max_reasks + 1):
        reply = (await ctx.client.complete(msgs, max_tokens=500, extra={
            "seed": attempt, "response_format": {"type": "json_object"}})).text
        data = parse.parse_judge(reply)
        if data:
            break
    data = data or {}
    scores = {}
    for k in JUDGE_KEYS:
        v = parse.parse_score(str(data.get(k))) if data.get(k) is not None else None
        scores[k] = v
    scores["rationale"] = str(data.get("rationale") or "")
    scores["evaluator"] = ctx.client.settings.model  # judge scores are comparable per judge
    return scores


# -- on a stored run ---------------------------------------------------------------------

def check_masked(run: Run, paper: Paper, names: dict[str, str] | None = None) -> None:
    """Refuse a reference the run could see: as a paper the writers read, or inside a
    profile. Comparing with it would measure copying, not prediction. `names`: researchers
    by id, so the refusal names people, not ids."""
    if paper.id in run.config.paper_ids:
        raise InputError(f"'{paper.title}' was one of the papers this run's writers read",
                         "Pick a reference outside the neighbourhood, or replay the paper "
                         "(which hides it first).")
    seen = [p.researcher_id for p in run.profiles.values() if paper.id in p.paper_ids]
    if seen:
        who = ", ".join((names or {}).get(r, r) for r in seen)
        raise InputError(f"'{paper.title}' went into the profile of {who}",
                         "Replay the paper (which hides it), or set a cut-off year before it.")


def evaluate_against(run: Run, paper_id: str, request: RunRequest, store,
                     embedder: Embedder | None = None, pasted: str = "") -> Comparison:
    """Compare a finished run's proposal with a paper afterwards and store the comparison
    beside the run (store.comparisons). The run is not touched: its reference is the one
    it was started with, so neither its similarity nor a study's real-paper arm can come
    from a paper compared later. `pasted` is that paper's own five answers and is kept
    with this comparison only."""
    if run.proposal is None:
        raise InputError("this run has no proposal to compare", "Run the simulation first.")
    paper = store.corpus.get_paper(paper_id)
    check_masked(run, paper, store.corpus.researcher_names(p.researcher_id for p in run.profiles.values()))
    embedder = embedder or Embedder.for_request(request, store)
    reference = run_async(reference_answers(store, paper, pasted, restater_for(request, store)))
    return store.comparisons.add(run.id, paper.id, compare(embedder, run.proposal, reference))


def judge_run(run: Run, settings: ModelSettings, store) -> Run:
    """Ask an LLM judge to compare the run's proposal with its reference; saves the run.
    Needs an instruction-following model (the tiny base model cannot answer in JSON)."""
    if run.proposal is None or run.similarity is None or run.similarity.reference is None:
        raise InputError("the run has no reference to judge against",
                         "Compute the similarity to a reference paper first.")
    client = LLMClient(settings, store=store, usage=run.usage)
    run.judge = run_async(judge(StageContext(client), run.similarity.reference, run.proposal))
    store.runs.save(run)
    return run


def compare_reviews(run: Run, real_review_text: str, store, embedder: Embedder | None = None) -> Run:
    """Compare the run's reviews with a real review of the reference paper (text with
    Strengths/Weaknesses/Score parts): bullet recall per part and Delta S; saves the run.

    The generated side is all reviewers' points together and their mean score.
    """
    if not run.reviews:
        raise InputError("this run has no reviews to compare", "Run with at least one reviewer.")
    real, missing = parse.parse_review(real_review_text)
    if "strengths" in missing and "weaknesses" in missing:
        raise InputError("the real review has no Strengths or Weaknesses part",
                         "Label the parts 'Strengths:' and 'Weaknesses:' (and 'Score:').")
    generated = {"strengths": "\n".join(r.strengths for r in run.reviews),
                 "weaknesses": "\n".join(r.weaknesses for r in run.reviews),
                 "score": run.meta_review.score if run.meta_review else None}
    embedder = embedder or Embedder(run.config.embedder, store=store)
    run.review_similarity = run_async(review_similarity(None, embedder, generated, real))
    store.runs.save(run)
    return run
