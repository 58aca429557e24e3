"""Offline text that claims nothing false (issue 26, point 4): a base model's review line
that reports results, numbers, data sets or prior tests the material never states is not
kept; points land under the heading they lean to; no line is cut inside an abbreviation."""
from __future__ import annotations

import asyncio

from rt_core.config import LOCAL_EMBEDDER
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.embed import Embedder
from rt_core.run.styles import context, grounding, stem, stem_checks, stem_line
from rt_core.run.styles.review_heading import heading
from rt_core.run.styles.stem_claims import Evidence, unsupported
from rt_core.text import ended_sentences, first_sentence
from rt_core.types import Proposal, Review

PROPOSAL = Proposal(q1="How can language agents classify stellar spectra?",
                    q2="This matters because surveys are large.", q3="It is hard because labels are rare.",
                    q4="Earlier work has not solved it because fields are apart.",
                    q5="We will label spectra from 3 surveys and report classification accuracy.")
INVENTED = " has been tested on multiple data sets in the past and works well, with an accuracy of 98%."


def stem_ctx():
    client = LLMClient(ModelSettings(model="scripted/base", prompt_style="stem"))
    g = grounding.Grounding([], embedder=Embedder(LOCAL_EMBEDDER))
    return context.StageContext(client, max_reasks=2, grounding=g)


def planted(strengths, weaknesses):
    """A base model that finishes each heading's line with that heading's lines in turn (a
    score when the grammar asks for one). By heading, not by the order of the calls: a
    review asks for both headings at once."""
    said = {"Strengths": iter(strengths), "Weaknesses": iter(weaknesses)}

    def answer(messages, params):
        if params.get("grammar"):
            return " 6"
        return next(said[_heading(messages)])
    return answer


def _heading(messages) -> str:
    """The heading a stem review's call asks for: its prompt's last line, up to the colon."""
    return messages[-1]["content"].rsplit("\n", 1)[-1].partition(":")[0]


def test_a_review_line_reporting_invented_results_is_asked_again(scripted):
    scripted.responder = planted([INVENTED, " labels survey spectra with language agents."],
                                 [" never says which survey data the agents read."])
    rev = asyncio.run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."
    assert rev.weaknesses == "- However, the proposal never says which survey data the agents read."
    assert "98" not in rev.strengths + rev.weaknesses and "tested" not in rev.strengths
    asks = [h for h in scripted.history if not h["params"].get("grammar")]
    assert len(asks) == 3  # the invented line cost one more question, nothing else


def test_a_reviews_two_headings_are_asked_at_once(scripted):
    """The strength's first line and the weakness's are both asked before either reply is
    in, so an engine that batches decodes them together: each call waits here until the
    other heading has been asked (a review that asked one after the other never gets
    there, and the wait runs out)."""
    scripted.responder = planted([" labels survey spectra with language agents."],
                                 [" never says which survey data the agents read."])
    ctx = stem_ctx()
    real = ctx.client.complete
    asked = {"Strengths": asyncio.Event(), "Weaknesses": asyncio.Event()}

    async def meet_then_call(messages, **kw):
        heading = _heading(messages)
        if heading in asked:
            asked[heading].set()
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in asked.values())), 10)
        return await real(messages, **kw)

    ctx.client.complete = meet_then_call
    rev = asyncio.run(stem.review(ctx, "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."
    assert rev.weaknesses == "- However, the proposal never says which survey data the agents read."
    assert [h.lower() for h in asked] == list(stem.REVIEW_HEADINGS)  # what the estimate counts


def test_a_weakness_that_restates_the_strength_is_asked_again_knowing_it(scripted):
    """Asked at once, the weakness cannot see the strength: one that restates it is asked
    again, from the report with the strength in it."""
    same = " labels survey spectra with language agents."
    scripted.responder = planted([same], [same, " never says which survey data the agents read."])
    rev = asyncio.run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.weaknesses == "- However, the proposal never says which survey data the agents read."
    weak = [h["messages"][-1]["content"] for h in scripted.history if _heading(h["messages"]) == "Weaknesses"]
    assert len(weak) == 2 and "Strengths: The proposal labels survey spectra" in weak[1]


def test_an_invented_claim_after_a_sound_sentence_is_cut_alone(scripted):
    scripted.responder = planted([" labels survey spectra with language agents. It achieved 98% on"
                                  " five data sets."], [" never says which survey data the agents read."])
    rev = asyncio.run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."


def test_praise_asked_as_a_weakness_and_criticism_asked_as_a_strength_are_asked_again(scripted):
    scripted.responder = planted([" is not a language agents proposal.",
                                  " labels survey spectra with language agents."],
                                 [" has a lot of potential for stellar spectra.",
                                  " does not say which survey spectra the agents read."])
    rev = asyncio.run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."
    assert rev.weaknesses == "- However, the proposal does not say which survey spectra the agents read."
    assert stem_checks.AUTO_CHECK not in rev.strengths + rev.weaknesses


def test_a_basis_the_proposal_never_states_is_asked_again_whoever_else_names_it(scripted):
    """A base model says what a proposal rests on when the proposal says nothing of the kind
    ("The proposal is based on a deep learning model.", under Strengths in a browser walk).
    The reviewer's persona names deep learning models; only the proposal counts."""
    scripted.responder = planted([" is based on a deep learning model of stellar spectra.",
                                  " builds on stellar spectra from large surveys."],
                                 [" never says which survey data the agents read."])
    rev = asyncio.run(stem.review(stem_ctx(), "r1", "Works on deep learning models for images.",
                                  PROPOSAL, []))
    assert rev.strengths == "- The proposal builds on stellar spectra from large surveys."
    assert "deep learning" not in rev.strengths + rev.weaknesses


def test_meta_review_points_land_under_the_heading_they_lean_to():
    reviews = [Review("a", "- The proposal is not an LLM proposal.",
                      "- However, the proposal has a lot of potential.", 6),
               Review("b", "- The proposal labels survey spectra with language agents.",
                      "- However, the proposal ignores the cost of labelling spectra.", 7)]
    meta = asyncio.run(stem.meta_review(stem_ctx(), PROPOSAL, reviews))
    assert "potential" in meta.strengths and "potential" not in meta.weaknesses
    assert "not an LLM proposal" in meta.weaknesses and "LLM" not in meta.strengths
    # A point that leans neither way keeps the heading it was asked for.
    assert "labels survey spectra" in meta.strengths and "cost of labelling" in meta.weaknesses


def test_a_claim_is_supported_only_by_the_same_claim_in_the_material():
    ev = Evidence.of("5. We will label spectra from 3 surveys and report accuracy.\n"
                     "Our classifier outperforms baselines on stellar spectra with an accuracy of 91%.")
    assert unsupported("The proposal uses spectra from 3 surveys.", ev) == []
    assert unsupported("The proposal will be tested on survey spectra.", ev) == []  # a plan
    assert unsupported("The classifier outperforms baselines on stellar spectra.", ev) == []
    assert unsupported("It reaches an accuracy of 91% on stellar spectra.", ev) == []
    assert unsupported(INVENTED.strip(), ev) == ["98", "data sets", "prior test", "result"]
    assert unsupported("It was validated on ten thousand spectra.", ev) == ["prior test"]
    assert unsupported("The work has been published in Nature.", ev) == ["prior test"]


def test_what_a_proposal_rests_on_must_be_in_the_proposal():
    ev = Evidence.of("How can language agents classify stellar spectra? Reviewer: works on deep "
                     "learning models.", about=PROPOSAL.q1 + " " + PROPOSAL.q5)
    assert unsupported("The proposal is based on a deep learning model.", ev) == ["basis"]
    assert unsupported("The proposal is based on a thesis, and it is clear.", ev) == ["basis"]
    assert unsupported("The proposal builds on language agents and survey spectra.", ev) == []
    assert unsupported("It relies on labels (from surveys) and is clear.", ev) == []  # "labels": "label"
    assert unsupported("The proposal is clear and well based.", ev) == []  # rests on nothing named
    assert heading("The proposal is a good idea.", "weaknesses") == "strengths"


def test_no_line_is_cut_inside_an_abbreviation_or_a_bracket():
    clean = stem_line.clean_line
    assert clean(" is a data analysis project (e.g. using Gaia") == "is a data analysis project"
    assert clean(" is a data analysis project (e.") == "is a data analysis project"
    assert clean(" is clear. It is a data analysis project (e.g. using") == "is clear."
    assert clean(" uses Gaia (Fig. 2) and SDSS. It") == "uses Gaia (Fig. 2) and SDSS."
    assert clean(" builds on Smith et al. and on Gaia.") == "builds on Smith et al. and on Gaia."
    assert clean(" helps with data, e.") == "helps with data"
    assert first_sentence("We use e.g. Gaia spectra. Then more.") == "We use e.g. Gaia spectra."


def test_a_line_may_stop_only_where_a_sentence_has_surely_ended():
    """The embedded model stops a review line at its first sentence end after some words
    (text.ended_sentences): never inside "e.g.", "Fig. 2" or "3.5", never before the next
    sentence has begun (only then is a full stop known to end one), and never short."""
    def kept(line, words):
        at = ended_sentences(line, words)
        return None if at is None else line[:at].strip()

    assert kept(" is new. The", 8) is None  # 2 words: go on
    assert kept(" is new. It reads survey catalogues with language models. It", 8) == (
        "is new. It reads survey catalogues with language models.")
    assert kept(" reads survey catalogues with language models and more.", 8) is None  # no next one yet
    assert kept(" uses version 3.5 of the catalogue for every survey it reads. The", 8) == (
        "uses version 3.5 of the catalogue for every survey it reads.")
    assert kept(" uses version 3.", 2) is None and kept(" uses version 3. 5 of", 2) is None
    assert kept(" reads many catalogues (e.g. Gaia and SDSS) with models. It", 4) == (
        "reads many catalogues (e.g. Gaia and SDSS) with models.")
    assert kept(" reads many catalogues (e. g. Gaia and SDSS", 2) is None
    assert kept(" reads Gaia (see Fig. 2) with models. It", 4) == "reads Gaia (see Fig. 2) with models."
    assert kept(' says "it reads the catalogues with models." Then', 4) == (
        'says "it reads the catalogues with models."')


def test_a_proposals_headline_is_its_question_when_q1_opens_with_context():
    """Q1 from facets opens with its bridge ("Both fields work with images."), which titled every
    candidate card and run the same; the headline is the question Q1 asks."""
    from rt_core.text import headline
    q1 = "Both fields work with images. Can a deep network on knee X-rays be used on vision-language models?"
    assert headline(q1) == "Can a deep network on knee X-rays be used on vision-language models?"
    assert headline("How do stars form? We ask it twice.") == "How do stars form?"
    assert headline("A statement without a question. And another.") == "A statement without a question."
    assert headline("") == ""
