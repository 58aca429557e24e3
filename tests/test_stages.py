"""Stage logic against the scripted model: what is asked, what is parsed, what is re-asked."""
import asyncio

from rt_core import fiveq
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.run.styles import chat, context, stem
from rt_core.types import Paper, Proposal

PAPERS = [Paper(id="a", title="Star maps from kinematics", abstract="We map stars. More text.", year=2020),
          Paper(id="b", title="Agents on the web", abstract="Agents browse. They act.", year=2023)]
# Replies are built from fiveq, the one place the questions are written.
HEADINGS = {q.number: q.heading for q in fiveq.QUESTIONS}
LEAD = {q.key: q.stem_lead for q in fiveq.QUESTIONS}
FULL = "\n".join(f"{h}\nAnswer {i}." for i, h in HEADINGS.items())


def ctx_for(style="chat", max_reasks=2):
    client = LLMClient(ModelSettings(model="scripted/x", prompt_style=style))
    return context.StageContext(client, max_reasks=max_reasks)


def run(coro):
    return asyncio.run(coro)


def test_draft_is_one_call_with_persona_and_all_papers(scripted):
    scripted.enqueue(FULL)
    draft = run(chat.write_draft(ctx_for(), "I study stars.", PAPERS, "r1"))
    assert draft.q1 == "Answer 1." and draft.missing == [] and draft.author_id == "r1"
    assert len(scripted.history) == 1
    msgs = scripted.history[0]["messages"]
    assert msgs[0] == {"role": "system", "content": "I study stars."}
    assert "Star maps from kinematics" in msgs[1]["content"] and "Agents on the web" in msgs[1]["content"]


def test_a_missing_part_is_asked_for_alone(scripted):
    partial = "\n".join(f"{HEADINGS[i]}\nAnswer {i}." for i in (1, 2, 4, 5))
    scripted.enqueue(partial, f"{HEADINGS[3]}\nBecause of noise.")
    draft = run(chat.write_draft(ctx_for(), None, PAPERS))
    assert draft.q3 == "Because of noise." and draft.missing == []
    follow_up = scripted.history[1]["messages"]
    assert follow_up[-2] == {"role": "assistant", "content": partial}
    assert "Question 3" in follow_up[-1]["content"]


def test_a_part_that_never_comes_is_marked_missing(scripted):
    partial = "\n".join(f"{HEADINGS[i]}\nAnswer {i}." for i in (1, 2, 3, 4))
    scripted.enqueue(partial, "", "   ")
    draft = run(chat.write_draft(ctx_for(max_reasks=2), None, PAPERS))
    assert draft.missing == ["q5"] and draft.q5 == ""
    assert len(scripted.history) == 3  # one ask, two bounded re-asks


def test_aggregate_skips_the_call_for_a_single_draft(scripted):
    d = Proposal(q1="a", q2="b", q3="c", q4="d", q5="e", author_id="r1")
    merged = run(chat.aggregate(ctx_for(), [d]))
    assert merged.q1 == "a" and merged.drafts == [d] and scripted.history == []


def test_aggregate_sends_every_draft(scripted):
    drafts = [Proposal(q1=f"idea {i}", q2="b", q3="c", q4="d", q5="e") for i in range(3)]
    scripted.enqueue(FULL)
    merged = run(chat.aggregate(ctx_for(), drafts))
    prompt = scripted.history[0]["messages"][-1]["content"]
    assert all(f"idea {i}" in prompt for i in range(3))
    assert len(merged.drafts) == 3


def test_review_missing_score_is_reasked(scripted):
    # "I would say 4" declares nothing, so it is asked again; "Score: 4" declares it.
    scripted.enqueue("Strengths:\n- clear\nWeaknesses:\n- thin", "I would say 4", "Score: 4")
    review = run(chat.review(ctx_for(), "r9", "I review.", Proposal(q1="x"), PAPERS))
    assert review.score == 4 and review.strengths == "- clear" and review.missing == []
    assert len(scripted.history) == 3


def test_review_score_never_declared_is_missing_not_guessed(scripted):
    scripted.enqueue("Strengths:\n- clear\nWeaknesses:\n- 2 issues", "[Question 1] fine",
                     "There are 2 issues, so I give 4")
    review = run(chat.review(ctx_for(), "r9", "I review.", Proposal(q1="x"), PAPERS))
    assert review.score is None and review.missing == ["score"]


def test_meta_review_score_is_the_mean(scripted):
    from rt_core.types import Review

    scripted.enqueue("Strengths:\n- s\nWeaknesses:\n- w")
    proposal = Proposal(q1="Can maps of stars be drawn from noisy spectra?")
    meta = run(chat.meta_review(ctx_for(), proposal, [Review("a", "x", "y", 4), Review("b", "x", "y", 7),
                                                        Review("c", "x", "y", None, ["score"])]))
    assert meta.score == 5.5 and meta.strengths == "- s" and meta.missing == []
    # The chair reads the proposal itself, not only what the reviewers said about it.
    assert proposal.q1 in scripted.history[-1]["messages"][-1]["content"]


def test_stem_style_completes_one_line_per_question_keeping_earlier_answers(scripted):
    scripted.enqueue(" we align star maps with agents?", " it joins two fields.", " the data differ a lot.",
                     " nobody tried it yet.", " build a benchmark and test it.")
    draft = run(stem.write_draft(ctx_for("stem"), "I study stars.", PAPERS))
    assert draft.q1 == f"{LEAD['q1']} we align star maps with agents?"
    assert draft.q5 == f"{LEAD['q5']} build a benchmark and test it."
    prompts = [h["messages"][-1]["content"] for h in scripted.history]
    assert len(prompts) == 5
    assert prompts[0].endswith(fiveq.BY_KEY["q1"].stem)
    assert draft.q1 in prompts[1]  # earlier answer kept
    # Each line also stops where it would run on into the next numbered point.
    assert [h["params"]["stop"] for h in scripted.history] == [
        ["\n", " 2. "], ["\n", " 3. "], ["\n", " 4. "], ["\n", " 5. "], ["\n"]]


def test_two_words_finish_a_stem_but_a_bare_mark_or_number_does_not(scripted):
    scripted.enqueue(" data collection?", ".", " 2", " it joins two fields.", " the data differ a lot.",
                     " nobody tried it yet.", " build a benchmark and test it.")
    draft = run(stem.write_draft(ctx_for("stem"), "I study stars.", PAPERS))
    assert draft.q1 == f"{LEAD['q1']} data collection?"
    assert draft.q2.endswith(" it joins two fields.")  # "." and "2" were asked again
    assert len(scripted.history) == 5 + 2


def test_stem_style_cuts_run_on_lines_and_retries_empty_ones(scripted):
    scripted.enqueue(" we map stars? 2. Research question: How can we", "", " it matters a lot.",
                     " it is hard.", " it is still open.", " do it well.")
    draft = run(stem.write_draft(ctx_for("stem"), None, PAPERS))
    assert draft.q1 == f"{LEAD['q1']} we map stars?"
    assert draft.q2 == f"{LEAD['q2']} it matters a lot."
    assert scripted.history[2]["params"]["seed"] == 1  # the retry varies the seed


def test_stem_review_uses_a_grammar_for_the_score(scripted):
    # (Each point names something of the proposal: a point that does not is re-asked.)
    scripted.enqueue(" classifies stellar spectra clearly.", " lacks enough labelled spectra.", " 7")
    proposal = Proposal(q1="How can stellar spectra be classified?", q2="Surveys need labels.")
    review = run(stem.review(ctx_for("stem"), "r1", "I review.", proposal, []))
    assert review.score == 7 and review.missing == []
    assert "grammar" in scripted.history[-1]["params"]


def test_select_publications_respects_cutoff_order_and_exclusion():
    papers = [Paper(id=str(y), title=str(y), year=y) for y in (2018, 2024, 2021, 2022)]
    got = context.select_publications(papers, cutoff_year=2022, exclude={"2021"}, limit=20)
    assert [p.id for p in got] == ["2022", "2018"]
    assert len(context.select_publications(papers, None, set(), limit=2)) == 2


def test_structured_output_is_requested_where_the_provider_supports_it(openai_server):
    import json

    openai_server.enqueue(json.dumps({f"q{i}": f"Answer {i}." for i in range(1, 6)}))
    settings = ModelSettings(model="openai/gpt-4o-mini", api_key="sk-x", base_url=openai_server.base_url)
    ctx = context.StageContext(LLMClient(settings))
    draft = run(chat.write_draft(ctx, "I study stars.", PAPERS))
    assert draft.q4 == "Answer 4." and draft.missing == []
    body = openai_server.chat_requests()[-1]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["q1", "q2", "q3", "q4", "q5"]


def test_no_schema_is_sent_to_models_without_support(scripted):
    scripted.enqueue(FULL)
    run(chat.write_draft(ctx_for(), None, PAPERS))
    assert "response_format" not in scripted.history[0]["params"]


def test_re_asks_are_new_requests_even_with_the_cache(scripted, store):
    partial = "\n".join(f"{HEADINGS[i]}\nAnswer {i}." for i in (1, 2, 3, 4))
    scripted.enqueue(partial, "", "The fifth answer.")
    client = LLMClient(ModelSettings(model="scripted/x"), store=store)
    draft = run(chat.write_draft(context.StageContext(client, max_reasks=2), None, PAPERS))
    assert draft.q5 == "The fifth answer." and draft.missing == []
    assert len(scripted.history) == 3 and client.usage.cache_hits == 0
    assert [h["params"].get("seed") for h in scripted.history] == [None, 1, 2]
