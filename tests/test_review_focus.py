"""A base model's review line leads with a concept the proposal names (run/styles/stem.py,
`review_focus`): led by "The proposal" alone, most lines were generic and were asked again,
half the review calls of the app's default run."""
from __future__ import annotations

import asyncio

from rt_core.models.client import LLMClient, ModelSettings
from rt_core.run.styles import context, grounding, stem, stem_checks
from rt_core.types import Proposal

PROPOSAL = Proposal(q1="How can crime hotspots help with stellar spectra surveys?",
                    q2="This matters because surveys are large.", q3="It is hard because labels are rare.",
                    q4="Earlier work has not solved it because fields are apart.",
                    q5="We will map crime hotspots onto survey spectra and report accuracy.")
CONCEPTS = {"criminology": ["crime hotspots"], "astronomy": ["stellar spectra"], "nlp": ["language agents"]}


def focus_ctx(concepts=CONCEPTS):
    client = LLMClient(ModelSettings(model="scripted/base", prompt_style="stem"))
    g = grounding.Grounding([], _concepts=concepts, field_names={f: f.title() for f in concepts})
    return context.StageContext(client, max_reasks=2, grounding=g)


def answer(strength: str, weakness: str = " vague about which surveys it reads.",
           generic: str = " is in a broad area of research."):
    """A base model that says something specific only when the line names a concept (its
    prompt ends "... use of <concept> is"), else something generic."""
    def reply(messages, params):
        if params.get("grammar"):
            return " 6"
        prompt = messages[-1]["content"]
        if not prompt.endswith(" is"):
            return generic
        return strength if prompt.rsplit("\n", 1)[-1].startswith("Strengths") else weakness
    return reply


def line_calls(scripted) -> list[str]:
    return [h["messages"][-1]["content"] for h in scripted.history if not h["params"].get("grammar")]


def test_a_review_line_names_a_concept_of_the_proposal_and_is_not_asked_again(scripted):
    scripted.responder = answer(" a careful plan for the surveys.")
    rev = asyncio.run(stem.review(focus_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths.startswith("- The proposal's use of ")
    assert rev.strengths.endswith(" is a careful plan for the surveys.")
    assert stem_checks.AUTO_CHECK not in rev.strengths
    # one call per heading: the generic line of a plain lead would have been asked 3 times
    assert len(line_calls(scripted)) == 2


def test_a_concept_with_a_gloomy_name_is_no_criticism(scripted):
    """VADER reads "crime" as criticism: judged with the concept's name in it, every
    strength of a criminology proposal was refused as criticism asked as a strength."""
    scripted.responder = answer(" well planned.")
    rev = asyncio.run(stem.review(focus_ctx({"criminology": ["crime hotspots"]}), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal's use of crime hotspots is well planned."
    assert stem_checks.AUTO_CHECK not in rev.strengths


def test_reviewers_take_the_concepts_the_proposal_names_and_only_those():
    g = grounding.Grounding([], _concepts=CONCEPTS)
    chosen = {stem.review_focus(PROPOSAL, g, f"r-{i}") for i in range(12)}
    assert chosen == {"crime hotspots", "stellar spectra"}  # "language agents" is not in it
    assert stem.review_focus(PROPOSAL, grounding.Grounding([], _concepts={"nlp": ["language agents"]}), "r") is None


def test_a_repeated_verb_and_an_apostrophe_are_joined_as_one_sentence():
    assert stem.unrepeated("The proposal's use of WebArena is", "is strong.") == "strong."
    assert stem.unrepeated("The proposal's use of WebArena is", "island data.") == "island data."
    assert (stem.joined("The proposal's use of WebArena", "'s data is new.")
            == "The proposal's use of WebArena's data is new.")
    assert stem.joined("The proposal", "is new.") == "The proposal is new."


def test_without_concepts_the_plain_lead_is_kept(scripted):
    scripted.responder = answer(" unused", " unused", " labels survey spectra with language agents.")
    rev = asyncio.run(stem.review(focus_ctx({}), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."
    assert all(c.endswith("Strengths: The proposal") or c.endswith("Weaknesses: However, the proposal")
               for c in line_calls(scripted))
