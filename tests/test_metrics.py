"""Property tests for the numbers the app reports: the five-question mean, declared scores,
re-asked answers, what similarity embeds, profile keys, and the reference's sources."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rt_core import fiveq
from rt_core.errors import InputError
from rt_core.models.embed import Embedder
from rt_core.run.evidence import evaluate
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import parse
from rt_core.store.references import paper_text_hash
from rt_core.types import QUESTION_KEYS, Paper, Proposal, RunConfig, RunRequest

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9).filter(
    lambda w: w not in {"how", "can", "will", "score", "rating"})
sentence = st.lists(word, min_size=2, max_size=12).map(" ".join)


class HashEmbedder(Embedder):
    """Texts to deterministic unit vectors: equal texts give cosine 1, others less."""

    def __init__(self):
        super().__init__("test/hash")
        self.seen: list[str] = []

    def _compute(self, texts):
        self.seen += texts
        out = []
        for t in texts:
            rng = np.random.default_rng(abs(hash(t)) % 2**32)
            out.append(rng.normal(size=32))
        return np.array(out, dtype=np.float32)


@settings(max_examples=60, deadline=None)
@given(answers=st.lists(sentence, min_size=5, max_size=5), answered=st.sets(st.sampled_from(QUESTION_KEYS)))
def test_mean_is_over_all_five_and_missing_answers_count_zero(answers, answered):
    ref = Proposal(**dict(zip(QUESTION_KEYS, answers, strict=True)))
    gen = Proposal(**{k: getattr(ref, k) for k in answered})
    if not answered:
        sim = evaluate.proposal_similarity(HashEmbedder(), gen, ref)
        assert sim.mean == 0 and sim.missing == list(QUESTION_KEYS)
        return
    sim = evaluate.proposal_similarity(HashEmbedder(), gen, ref)
    assert sim.mean == pytest.approx(len(answered) / 5, abs=1e-3)
    assert sim.missing == [k for k in QUESTION_KEYS if k not in answered]
    assert set(sim.per_question) == set(answered)


@settings(max_examples=60, deadline=None)
@given(answer=sentence, q=st.sampled_from(fiveq.QUESTIONS), heading=st.booleans())
def test_similarity_embeds_content_not_stems_or_headings(answer, q, heading):
    framed = (f"{q.heading}\n" if heading else "") + f"{q.stem_lead} {answer}"
    assert evaluate.content_text(framed) == answer
    assert evaluate.content_text(f"{q.number}. {q.stem_label}: {q.stem_lead} {answer}") == answer


def test_two_answers_sharing_only_the_stem_are_not_similar():
    emb = HashEmbedder()
    gen = Proposal(**{q.key: f"{q.stem_lead} apples" for q in fiveq.QUESTIONS})
    ref = Proposal(**{q.key: f"{q.stem_lead} galaxies" for q in fiveq.QUESTIONS})
    evaluate.proposal_similarity(emb, gen, ref)
    assert set(emb.seen) == {"apples", "galaxies"}


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 10), fmt=st.sampled_from(["Score: {}", "**Score**: {}/10", "Rating - {}",
                                                  "Overall score (1-10): {}", "Score:\n{}", "{}",
                                                  "{}/10", "Final score: {} (out of 10)"]),
       before=st.lists(sentence, max_size=3))
def test_a_declared_score_is_read(n, fmt, before):
    if fmt.startswith("{}"):  # a bare number is a declaration only as the whole reply
        before = []
    lines = [f"- {s}" for s in before] + [fmt.format(n)]
    assert parse.parse_score("\n".join(lines)) == n


@settings(max_examples=80, deadline=None)
@given(text=st.lists(st.one_of(sentence, st.integers(0, 20).map(str)), min_size=2, max_size=8)
       .map(" ".join), k=st.integers(1, 5))
def test_numbers_that_are_not_declared_are_never_a_score(text, k):
    # Prose with numbers in it, and headings that carry a number, declare no score.
    assert parse.parse_score(f"I think {text}") is None
    assert parse.parse_score(f"[Question {k}] {text}\nmore text") is None


@settings(max_examples=60, deadline=None)
@given(items=st.lists(sentence, min_size=2, max_size=6), q=st.sampled_from(fiveq.QUESTIONS),
       style=st.sampled_from(["{h}", "Q{n}:", "**{h}**", ""]))
def test_a_reasked_numbered_list_is_kept_whole(items, q, style):
    body = "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))
    head = style.format(h=q.heading, n=q.number)
    got = parse.strip_heading(f"{head}\n{body}" if head else body)
    assert got == body


def _sim(store, **cfg):
    """A started run's state (its reader is built when the run starts)."""
    return Simulation(RunRequest(RunConfig(**{"model": "scripted/x", "researcher_ids": ["r-ada"],
                                              **cfg})), store).start()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Up to 1.95: the changed temperature (+0.05) must still be one a run accepts (0 to 2).
@given(abstract=sentence, temperature=st.floats(0, 1.95).map(lambda t: round(t, 2)))
def test_profile_key_changes_with_everything_the_profile_depends_on(community, abstract, temperature):
    pubs = community.corpus.publications("r-ada")
    base = _sim(community, temperature=temperature)
    key = base.reader.profile_key(pubs)
    assert key == _sim(community, temperature=temperature).reader.profile_key(pubs)  # stable
    edited = [Paper.from_dict({**p.to_dict(), "abstract": p.abstract + " " + abstract}) for p in pubs]
    assert base.reader.profile_key(edited) != key  # the text it read
    assert _sim(community, temperature=temperature + 0.05).reader.profile_key(pubs) != key
    other_style = _sim(community, temperature=temperature, prompt_style="stem")
    assert other_style.reader.profile_key(pubs) != key  # another prompt template and style


def test_reference_sources_in_order(community, scripted):
    paper = community.corpus.get_paper("p-llm")

    def ref(**kw):
        return asyncio.run(evaluate.reference_answers(community, paper, **kw))

    assert ref().answers is None and ref().source == evaluate.ABSTRACT_SOURCE
    community.references.put("p-llm", "summary", Proposal(q1="shipped answer"))
    assert ref().source == evaluate.SHIPPED and ref().answers.q1 == "shipped answer"
    # A restating model (an instruction model) writes once; the restatement is stored.
    from rt_core.models.client import LLMClient, ModelSettings

    scripted.enqueue("\n".join(f"{q.heading}\nrestated {q.number}" for q in fiveq.QUESTIONS))
    restater = LLMClient(ModelSettings(model="scripted/judge", temperature=0.0))
    got = ref(restater=restater)
    assert got.source == "restated by scripted/judge" and got.answers.q2 == "restated 2"
    assert ref().source == "restated by scripted/judge"  # later: from the store, no call
    assert len(scripted.history) == 1
    # The restatement belongs to the text it read: a new abstract is not covered by it.
    assert community.references.restated(paper) is not None
    changed = Paper.from_dict({**paper.to_dict(), "abstract": "A different abstract."})
    assert paper_text_hash(changed) != paper_text_hash(paper)
    assert community.references.restated(changed) is None
    # A pasted five-question text wins over everything.
    assert ref(pasted="[Question 1] pasted one\n[Question 2] two").source == evaluate.PASTED
    with pytest.raises(InputError):
        ref(pasted="no questions here")


def test_the_small_base_model_may_not_restate(community):
    from rt_core.models.client import LLMClient, ModelSettings

    paper = community.corpus.get_paper("p-llm")
    with pytest.raises(InputError, match="not fit"):
        asyncio.run(evaluate.reference_answers(
            community, paper, restater=LLMClient(ModelSettings(model="local/gemma-3-270m"))))
