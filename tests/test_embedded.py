"""End to end on the real embedded defaults: Gemma 3 270M in llama.cpp + MiniLM in numpy.

No network, no key. Slow (tens of seconds on 2 cores), so kept to one small run.
"""
import re

import pytest

from rt_core import community
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL
from rt_core.fiveq import QUESTION_KEYS
from rt_core.models.client import ModelSettings
from rt_core.models.embed import Embedder
from rt_core.run.evidence.evaluate import content_text
from rt_core.run.facets import rubric
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import stem_checks, stem_names
from rt_core.types import RunConfig, RunRequest


@pytest.mark.slow
def test_full_run_on_the_embedded_model_and_a_free_rerun(store):
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    # One researcher and two papers from each field of the case study (NLP, then astronomy).
    cfg = dict(researcher_ids=[preset["researcher_ids"][0], preset["researcher_ids"][4]],
               paper_ids=preset["paper_ids"][:2] + preset["paper_ids"][4:6],
               # a 2025 replay target: its shipped summary is the reference, and the authors'
               # papers (up to 2024) are all readable before it
               num_reviewers=1, reference_paper_id="arxiv:2412.17767", model=LOCAL_MODEL,
               embedder=LOCAL_EMBEDDER)
    assert store.call_speeds.recent(LOCAL_MODEL, 10) == []  # this machine's speed: not measured yet
    run = Simulation(RunRequest(RunConfig(**cfg)), store).run_sync()
    assert run.status == "done", run.errors
    # Nothing timed the model before the start (the app's Start does not): the run timed it
    # before its first stage, and keeps that estimate beside the time it took.
    estimate, wall = store.runs.wall_times([run.id])[run.id]
    assert estimate is not None and estimate > 0 and wall > 0
    # On the facets path it makes no model call, so nothing was timed: no calibration, no call.
    assert run.usage.calls == 0 and store.call_speeds.recent(LOCAL_MODEL, 500) == []
    answered = [k for k in QUESTION_KEYS if getattr(run.proposal, k)]
    assert sorted(answered + run.proposal.missing) == list(QUESTION_KEYS)
    assert len(answered) >= 4
    assert all(len(getattr(run.proposal, k).split()) >= 4 for k in answered)
    assert run.reviews and (run.reviews[0].score is None or 1 <= run.reviews[0].score <= 10)
    # The similarity is MiniLM's cosine of each answer with the reference's, as measured
    # here independently, and the mean counts every question the reference answers.
    sim, minilm = run.similarity, Embedder(LOCAL_EMBEDDER, store=store)
    assert sim.kind == "five-question" and sim.embedder == LOCAL_EMBEDDER and sim.per_question
    for key, cosine in sim.per_question.items():
        mine, ref = minilm.encode([content_text(getattr(run.proposal, key)),
                                   content_text(getattr(sim.reference, key))])
        assert cosine == pytest.approx(float(mine @ ref), abs=1e-3), key
    assert sim.mean == pytest.approx(sum(sim.per_question.values())
                                     / (len(sim.per_question) + len(sim.missing)), abs=1e-3)
    assert sim.mean > 0.05  # the proposal is about the reference's topic, not unrelated text
    assert run.usage.cost == 0.0
    # What a newcomer should read: Q1 pairs a method of one chosen field with a problem of
    # the other, each a facet its papers state, and every answer keeps its sentences...
    assert {g.field for g in run.proposal.grounds["q1"]} == {"astronomy", "nlp"}
    abstracts = " ".join(" ".join(p.abstract.split()) for p in store.corpus.search_papers("", limit=500))
    assert all(g.sentence in abstracts for gs in run.proposal.grounds.values() for g in gs)
    # ...reviews with something in every section, and a meta-review made of their points.
    for review in run.reviews:
        assert not stem_checks.section_empty(review.strengths)
        assert not stem_checks.section_empty(review.weaknesses)
    # No review names a parenthesised acronym found in none of the material: the chosen
    # papers, the authors' and reviewers' papers, the proposal (acronyms everyone knows aside).
    people = cfg["researcher_ids"] + [r.reviewer_id for r in run.reviews]
    known = [*store.corpus.get_papers(cfg["paper_ids"]),
             *(p for rid in people for p in store.corpus.publications(rid))]
    material = stem_names.material_text(" ".join(run.proposal.answers().values()), known)
    for review in run.reviews:
        for acronym in re.findall(r"\(([a-z]?[A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\)",
                                  review.strengths + " " + review.weaknesses):
            assert not stem_names.invented(acronym, material), (acronym, review)
    # ...and a meta-review that counts the reviewers whose rubric check came out so.
    assert all(r.rubric and r.basis for r in run.reviews)
    for holds, section in ((True, run.meta_review.strengths), (False, run.meta_review.weaknesses)):
        for line in section.splitlines():
            k = int(re.search(r"\((\d+) of \d+ reviewers?\)", line).group(1))
            key = next(key for (key, h), said in rubric.SUMMARY.items() if h == holds and said in line)
            assert k == sum(r.rubric.get(key) is holds for r in run.reviews), line

    again = Simulation(RunRequest(RunConfig(**cfg)), store).run_sync()
    assert again.usage.calls == 0
    assert again.proposal.answers() == run.proposal.answers()


@pytest.mark.parametrize("model", ["local//no/such/model.gguf", "local/not-a-model"])
def test_unknown_local_model_is_a_config_error_not_retried(model, sleeps):
    import asyncio

    from rt_core.errors import ConfigError
    from rt_core.models.client import LLMClient

    client = LLMClient(ModelSettings(model=model), sleep=sleeps)
    with pytest.raises(ConfigError) as info:
        asyncio.run(client.complete([{"role": "user", "content": "hi"}], max_tokens=5))
    assert "local/gemma-3-270m" in info.value.hint
    assert sleeps.waits == []


def test_messages_become_one_plain_document():
    from rt_core.models.local import messages_to_document

    doc = messages_to_document([{"role": "system", "content": " You are X. "},
                                {"role": "user", "content": "1. Research question: How can"}])
    assert doc == "You are X.\n\n1. Research question: How can"


def test_over_long_prompts_keep_their_start_and_their_stem():
    from rt_core.models.local import BUNDLED_NAME, N_CTX, engine

    eng = engine(BUNDLED_NAME)
    prompt = "Research proposal.\n" + "filler words about stars " * 2000 + "\n1. Research question: How can"
    fitted = eng.fit_prompt(prompt, max_tokens=60)
    assert fitted.startswith("Research proposal.")
    assert fitted.endswith("1. Research question: How can")
    assert len(eng.llm.tokenize(fitted.encode())) <= N_CTX - 60


def test_the_embedded_model_reports_its_log_probabilities_without_changing_its_text():
    """Asking for log-probabilities must not change what is sampled. The two calls compared
    each run on a fresh engine (the same cold state): on the process's shared engine the
    cells other tests' sequences left behind change where a call's cells land, and with
    them the order llama.cpp sums attention in, so two calls there can differ in a token
    whatever they ask for (it failed CI that way, 1 run in 4 here after the full run)."""
    from rt_core.models.local import BUNDLED_NAME, _Engine, resolve_model_path

    prompt = "Key concepts in Astronomy: stellar spectra.\n1. Research question: How can"
    params = {"max_tokens": 12, "temperature": 0.8, "seed": 5, "stop": ["\n"]}

    def cold(extra: dict) -> dict:
        eng = _Engine(resolve_model_path(BUNDLED_NAME))
        try:
            return eng.complete(prompt, {**params, **extra})["choices"][0]
        finally:
            eng.close()

    plain, with_lp = cold({}), cold({"logprobs": True})
    assert with_lp["text"] == plain["text"] and plain.get("logprobs") is None
    content = with_lp["logprobs"]["content"]
    assert 1 <= len(content) <= 12 and all(c["logprob"] <= 0.0 for c in content)
    # The tokens spell the start of the text (the last sampled token is not counted).
    assert with_lp["text"].startswith("".join(c["token"] for c in content))


def test_the_sentence_stop_reaches_the_embedded_models_decoder_through_litellm(monkeypatch):
    """A stem line's `sentence_words` travels as a call parameter through litellm's custom
    provider to the decoder (which tests/test_local_batch.py shows stopping there); the
    decoder's requests are watched, not replaced."""
    import asyncio

    from rt_core.models import registry
    from rt_core.models.client import LLMClient
    from rt_core.models.local_batch import BatchDecoder
    from rt_core.run.styles import stem_line
    from rt_core.run.styles.context import StageContext

    seen: list[int] = []
    real_submit = BatchDecoder.submit
    monkeypatch.setattr(BatchDecoder, "submit",
                        lambda self, req: seen.append(req.sentence_words) or real_submit(self, req))
    ctx = StageContext(LLMClient(ModelSettings(model=LOCAL_MODEL)))
    doc = ("Reviews of a proposal on galaxy surveys.\n"
           "Review 1: The proposal is clear. It is short.\nReview 2: The proposal")
    # What the model writes is not asserted: on the shared engine the text depends on the
    # cells earlier tests left (see the log-probability test above); the decoder's own test
    # checks where it stops.
    asyncio.run(stem_line.line(ctx, doc, max_tokens=24, attempt=3, sentence_words=5))
    asyncio.run(stem_line.line(ctx, doc, max_tokens=24, attempt=4))
    assert seen == [5, 0]
    assert registry.capabilities(LOCAL_MODEL).sentence_stop
