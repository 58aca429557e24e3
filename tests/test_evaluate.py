import asyncio

import numpy as np
import pytest

from rt_core.errors import InputError
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.embed import Embedder
from rt_core.run.evidence import evaluate
from rt_core.run.styles import context
from rt_core.types import Proposal


class WordEmbedder(Embedder):
    """Bag-of-words vectors: enough to test the arithmetic around embeddings."""

    VOCAB = ["stars", "agents", "crime", "language", "maps", "data", "noise"]

    def __init__(self):
        super().__init__("test/bow")

    def _compute(self, texts):
        return np.array([[t.lower().count(w) + 1e-3 for w in self.VOCAB] for t in texts], dtype=np.float32)


def test_identical_proposals_score_one_and_a_missing_answer_counts_zero():
    p = Proposal(q1="stars maps", q2="agents", q3="crime data", q4="noise", q5="language")
    sim = evaluate.proposal_similarity(WordEmbedder(), p, p)
    assert sim.mean == pytest.approx(1.0, abs=1e-4) and sim.missing == []
    partial = Proposal(q1="stars maps", q2="", q3="crime", q4="noise", q5="language")
    sim = evaluate.proposal_similarity(WordEmbedder(), partial, p)
    assert set(sim.per_question) == {"q1", "q3", "q4", "q5"} and sim.missing == ["q2"]
    assert sim.per_question["q3"] < 1.0
    assert sim.mean == pytest.approx(sum(sim.per_question.values()) / 5, abs=1e-4)


def test_one_perfect_answer_out_of_five_is_worth_a_fifth():
    ref = Proposal(q1="stars maps", q2="agents", q3="crime data", q4="noise", q5="language")
    sim = evaluate.proposal_similarity(WordEmbedder(), Proposal(q1="stars maps"), ref)
    assert sim.mean == pytest.approx(0.2, abs=1e-3)
    assert sim.missing == ["q2", "q3", "q4", "q5"]


def test_a_reference_with_no_answers_is_an_input_error():
    with pytest.raises(InputError):
        evaluate.proposal_similarity(WordEmbedder(), Proposal(q1="a"), Proposal())


def test_bullet_recall_is_mean_best_match_over_reference_points():
    emb = WordEmbedder()
    assert evaluate.bullet_recall(emb, ["stars", "crime"], ["stars", "crime"]) == pytest.approx(1.0, abs=1e-3)
    half = evaluate.bullet_recall(emb, ["stars"], ["stars", "crime"])
    assert 0.4 < half < 0.8
    assert evaluate.bullet_recall(emb, [], ["x"]) is None


def test_review_similarity_rewrites_as_bullets_with_the_model_and_reports_delta_s(scripted):
    scripted.enqueue("- stars\n- maps", "- stars", "- noise", "- noise\n- crime")
    ctx = context.StageContext(LLMClient(ModelSettings(model="scripted/x")))
    out = asyncio.run(evaluate.review_similarity(
        ctx, WordEmbedder(), {"strengths": "Stars and maps.", "weaknesses": "Noise.", "score": 6},
        {"strengths": "Stars.", "weaknesses": "Noise and crime.", "score": 4}))
    assert out["delta_s"] == 2.0
    assert out["strengths"] == pytest.approx(1.0, abs=1e-3)
    assert 0.4 < out["weaknesses"] < 1.0
    assert len(scripted.history) == 4


def test_judge_reads_json_and_leaves_missing_keys_empty(scripted):
    scripted.enqueue('Here: {"topic": 8, "method": "6/10", "overall": 7, "rationale": "close"}')
    ctx = context.StageContext(LLMClient(ModelSettings(model="scripted/x")))
    scores = asyncio.run(evaluate.judge(ctx, Proposal(q1="a"), Proposal(q1="b")))
    assert scores["topic"] == 8 and scores["method"] == 6 and scores["factual"] is None
    assert scores["rationale"] == "close" and scores["evaluator"] == "scripted/x"
