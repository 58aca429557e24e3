import pytest

from rt_core import fiveq
from rt_core.errors import ConfigError
from rt_core.run import prompts


@pytest.mark.parametrize("name", ["chat", "stem", "study", "novelty"])
def test_bundled_prompt_sets_load(name):
    ps = prompts.load(name)
    assert ps.templates


def test_stem_set_has_a_stem_for_every_review_part():
    stems = prompts.load("stem").stems
    # (The stem meta-review makes no model call: it clusters the reviewers' points.)
    assert set(stems) >= {"strengths", "weaknesses", "score"}


def test_undeclared_placeholder_fails_at_load():
    with pytest.raises(ConfigError, match="placeholders"):
        prompts.parse_prompt_set("bad", "x:\n  variables: [a]\n  user: 'hello {a} {b}'\n")


def test_declared_but_unused_variable_fails_at_load():
    with pytest.raises(ConfigError):
        prompts.parse_prompt_set("bad", "x:\n  variables: [a, b]\n  user: 'hello {a}'\n")


def test_missing_value_fails_at_render():
    ps = prompts.parse_prompt_set("ok", "x:\n  variables: [a]\n  system: ''\n  user: 'hi {a}'\n")
    with pytest.raises(ConfigError, match="needs"):
        ps["x"].messages()
    assert ps["x"].messages(a="there") == [{"role": "user", "content": "hi there"}]


def test_unknown_prompt_name_is_a_clear_error():
    with pytest.raises(ConfigError, match="no prompt"):
        prompts.load("chat")["nope"]


def test_an_unknown_key_in_a_prompt_fails_at_load():
    with pytest.raises(ConfigError, match=r"unknown keys \['sytem'\]"):
        prompts.parse_prompt_set("bad", "x:\n  variables: [a]\n  sytem: 'be brief'\n  user: 'hi {a}'\n")


def test_a_positional_placeholder_fails_at_load():
    with pytest.raises(ConfigError, match="positional"):
        prompts.parse_prompt_set("bad", "x:\n  variables: []\n  user: 'hello {}'\n")


def test_a_prompt_that_is_not_a_mapping_fails_at_load():
    with pytest.raises(ConfigError, match="mapping"):
        prompts.parse_prompt_set("bad", "x: 'just text'\n")


def test_a_bundled_set_must_hold_exactly_the_prompts_the_code_asks_for():
    ps = prompts.parse_prompt_set("stem", "draft_header:\n  text: 'x'\nreference_header:\n  text: 'y'\n")
    with pytest.raises(ConfigError, match=r"unknown prompts \['reference_header'\]"):
        ps.check_names(frozenset({"draft_header"}), frozenset())
    with pytest.raises(ConfigError, match=r"missing prompts \['review_header'\]"):
        ps.check_names(frozenset({"draft_header", "reference_header", "review_header"}), frozenset())


def test_seed_variants_follow_the_fiveq_stem_lead_and_never_repeat_it():
    """The leads ("How can", "We will", ...) are written once, in fiveq; a variant that
    spells its lead again would give the model "How can How can ..."."""
    ps = prompts.load("stem")
    for q in fiveq.QUESTIONS:
        variants = [v for v in ps[f"seed_{q.key}"].render(a="A", b="B")["text"].splitlines() if v.strip()]
        assert variants, q.key
        for v in variants:
            assert not v.lower().startswith(q.stem_lead.lower()), (q.key, v)
            assert "A" in v or "B" in v, (q.key, v)  # each variant carries a concept


def test_seeded_stems_start_with_the_question_stem_lead():
    from rt_core.models.client import LLMClient, ModelSettings
    from rt_core.run.styles import context, stem_write

    ctx = context.StageContext(LLMClient(ModelSettings(model="scripted/x", prompt_style="stem")))
    for qi, q in enumerate(fiveq.QUESTIONS):
        stems = stem_write.seeded_stems(ctx, q, [("stellar spectra", "language agents")], qi, 3)
        assert len(stems) == 3 and len(set(stems)) == 3
        assert all(s.startswith(q.stem_lead + " ") for s in stems), stems
    plain = stem_write.seeded_stems(ctx, fiveq.BY_KEY["q5"], [], 4, 2)
    assert plain == [fiveq.BY_KEY["q5"].stem_lead] * 2
