"""Provenance: which drafts and papers each answer draws on, and the cited labels."""
import json
import re

import pytest

from rt_core.run.candidates.leads import SEED_STEP
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles.citations import labels_in, strip_labels, take_citations
from rt_core.types import Proposal, Provenance, RunConfig, RunRequest
from tests import credit_script, revisehelp

PLANTED = "Quantum origami folds spacetime into lattice cranes for every field."


def run_with(store, responder, **cfg):
    config = RunConfig(**{"model": "scripted/demo", "researcher_ids": ["r-ada", "r-nia", "r-cole"],
                          "paper_ids": ["p-gaia", "p-agents"], "num_reviewers": 1, **cfg})
    return Simulation(RunRequest(config, max_retries=0), store).run_sync()


def test_the_planted_draft_comes_first(community, scripted):
    def responder(messages, params):
        user = str(messages[-1]["content"])
        if "team members' drafts" in user:  # the editor copies Nia's distinctive sentence into Q3
            return credit_script._fiveq(["A merged idea.", "It matters.", f"Hard. {PLANTED}",
                                         "Not done before.", "We test it."])
        if "Nia Lang" in str(messages[0]["content"]) and "[Question 1]" in user:
            return credit_script._fiveq(["Agents.", "Matters.", f"Hard. {PLANTED}", "New.", "Test."])
        return credit_script.responder(messages, params)

    scripted.responder = responder
    run = run_with(community, responder)
    assert run.status == "done", run.errors
    q3 = run.provenance.answers["q3"]
    assert (q3[0].kind, q3[0].id) == ("author", "r-nia")
    assert q3[0].score > max(s.score for s in q3[1:])
    assert {s.kind for s in q3} == {"author", "paper"}  # papers are scored too
    assert run.provenance.method == "local/all-MiniLM-L6-v2"
    # Each review is traced to its reviewer's own papers.
    reviewer = run.reviews[0].reviewer_id
    own = set(run.profiles[reviewer].paper_ids)
    assert run.provenance.reviews[reviewer] and {s.id for s in run.provenance.reviews[reviewer]} <= own
    assert community.runs.load(run.id).provenance == run.provenance


def test_cited_labels_are_kept_and_a_fabricated_one_is_dropped(community, scripted):
    def responder(messages, params):
        if "team members' drafts" in str(messages[-1]["content"]):
            return credit_script._fiveq(["Merged from the second draft [A2] and a ghost [A7].",
                                         "It matters [P3].", "Hard [A1, A3].", "New.", "Test."])
        return credit_script.responder(messages, params)

    scripted.responder = responder
    run = run_with(community, responder)
    assert run.status == "done", run.errors
    assert "[" not in run.proposal.q1 and run.proposal.q1.endswith("and a ghost.")
    cited = {k: {s.id for s in v if s.cited} for k, v in run.provenance.answers.items()}
    assert cited["q1"] == {"r-nia"} and cited["q2"] == set() and cited["q3"] == {"r-ada", "r-cole"}
    notes = [n for n in run.notes if "names no draft" in n]
    assert len(notes) == 2 and "[A7] in Q1" in notes[0] and "[P3] in Q2" in notes[1]


def test_labels_parse_in_lists_and_strip_cleanly():
    assert labels_in("x [A1, 3] y [p2] z [A4; P1]") == ["A1", "A3", "P2", "A4", "P1"]
    assert strip_labels("An idea [A1]. Another [A2, A3], done.") == "An idea. Another, done."
    drafts = [Proposal(q1="a", author_id="r-a"), Proposal(q1="b", author_id="r-b")]
    notes: list[str] = []
    prop, prov = take_citations(Proposal(q1="x [A2] [A3]", drafts=drafts), notes)
    assert prop.q1 == "x" and [s.id for s in prov.answers["q1"]] == ["r-b"] and len(notes) == 1


def test_a_base_model_run_gets_embedding_provenance_without_citations(community, demo, stem_writing):
    """Written by stems, a base model cites nothing: its provenance is embedding only."""
    run = run_with(community, None, prompt_style="stem", num_reviewers=0)
    assert run.status == "done", run.errors
    assert set(run.provenance.answers) == {"q1", "q2", "q3", "q4", "q5"}
    assert not any(s.cited for v in run.provenance.answers.values() for s in v)


def test_a_base_model_proposal_from_facets_cites_exactly_the_papers_it_quotes(community, demo):
    run = run_with(community, None, prompt_style="stem", num_reviewers=0)
    assert run.status == "done", run.errors
    for key, sources in run.provenance.answers.items():
        quoted = {g.paper_id for g in run.proposal.grounds.get(key, [])}
        assert {s.id for s in sources if s.cited} == quoted, key


def test_exports_carry_the_sources(community, scripted):
    from rt_core.export.run import Names, run_json, run_markdown

    scripted.responder = credit_script.responder
    run = run_with(community, credit_script.responder)
    names = Names.for_runs(community, [run])
    md = run_markdown(run, names)
    assert "## Where each answer came from" in md and "Ada Astro (" in md and ", cited)" in md
    assert "Mapping the Milky Way" in md.split("## Where each answer came from")[1]
    assert '"provenance"' in run_json(run, names)


# -- several candidates: each editor cites, the winner's citations become the run's ---------
def _citing_editors(messages, params):
    """tests/ideas.py's candidates, where candidate 1's editor cites the second draft and a
    draft it was never shown in Q1, and candidate 2's editor cites the third draft in Q2."""
    from tests.ideas import responder as ideas_responder

    text = ideas_responder(lambda a, b: "A" if a < b else "B")(messages, params)
    if "The direction of this proposal:" in str(messages[-1]["content"]):
        i = int(params.get("seed", 0)) // SEED_STEP
        lines = text.split("\n")
        if i == 1:
            lines[1] += " [A2] [A9]"
        elif i == 2:
            lines[3] += " [A3]"
        text = "\n".join(lines)
    return text


def test_a_candidate_editor_cites_and_the_winner_carries_its_citations(community, scripted):
    scripted.responder = _citing_editors
    config = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia", "r-cole"],
                       paper_ids=["p-gaia", "p-llm", "p-crime"], num_reviewers=2, candidates=3)
    run = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert run.status == "done", run.errors
    by_id = {c.id: c for c in run.candidates}
    assert run.tournament.order[0] == "c1" and run.proposal == by_id["c1"].proposal
    # The editors saw labelled drafts, the lead author's first.
    editors = [str(h["messages"][-1]["content"]) for h in scripted.history
               if "The direction of this proposal:" in str(h["messages"][-1]["content"])]
    assert len(editors) == 3 and all("Draft 2: [A2]" in e and "cite only the labels" in e for e in editors)
    second = by_id["c1"].proposal.drafts[1].author_id
    assert second == "r-nia"
    # Labels are out of every candidate's answers; each candidate keeps what it cited.
    assert all("[A" not in v for c in run.candidates for v in c.proposal.answers().values())
    assert {k: [s.id for s in v] for k, v in by_id["c1"].cited.answers.items()} == {"q1": [second]}
    assert [s.id for s in by_id["c2"].cited.answers["q2"]] == [by_id["c2"].proposal.drafts[2].author_id]
    assert by_id["c3"].cited == Provenance()  # an instruction model that cited nothing
    # The winner's citation is in the run's provenance, scored; the loser's is not.
    cited = {k: {s.id for s in v if s.cited} for k, v in run.provenance.answers.items()}
    assert cited == {"q1": {second}, "q2": set(), "q3": set(), "q4": set(), "q5": set()}
    q1 = {s.id: s for s in run.provenance.answers["q1"]}
    assert q1[second].kind == "author" and q1[second].score != 0.0
    # The made-up label is dropped with one note that names the candidate.
    notes = [n for n in run.notes if "names no draft" in n]
    assert len(notes) == 1 and "[A9] in Q1" in notes[0] and "candidate c1" in notes[0]
    # No label reaches a reviewer, a meta-reviewer, the judge or anything else downstream.
    others = [json.dumps(h["messages"]) for h in scripted.history
              if "The direction of this proposal:" not in str(h["messages"][-1]["content"])]
    reviews = [o for o in others if "You are reviewing this research proposal" in o]
    assert len(reviews) == 6 and not any(re.search(r"\[A\d", o) for o in others)
    stored = community.runs.load(run.id)
    assert stored.candidates == run.candidates and stored.provenance == run.provenance
    calls = len(scripted.history)
    again = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert again.usage.calls == 0 and len(scripted.history) == calls
    assert again.provenance == run.provenance


# -- revision rounds: an answer rewritten loses its citations, one left as it was keeps them -
@pytest.mark.parametrize("ceiling, shown", [(10, 1), (4, 0)])
def test_citations_follow_the_round_the_run_shows(community, scripted, ceiling, shown):
    improving = revisehelp.improving(ceiling)

    def responder(messages, params):
        if "team members' drafts" in str(messages[-1]["content"]):
            return credit_script._fiveq(["Take the second draft's survey [A2].", "It matters [A1].",
                                         "Hard.", "New.", "Test."])
        return improving(messages, params)

    scripted.responder = responder
    config = RunConfig(model="scripted/demo", researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                       reviewer_ids=["r-sam", "r-lee"], revision_rounds=1)
    run = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert run.status == "done", run.errors
    assert [c.question for c in run.rounds[1].changes] == ["q1"]  # round 1 rewrote Q1 only
    assert run.proposal.answers() == run.rounds[shown].proposal.answers()
    cited = {k: {s.id for s in v if s.cited} for k, v in run.provenance.answers.items()}
    assert cited["q2"] == {"r-ada"}  # left as it was: its citation holds in either round
    # Rewritten and shown: only embedding-measured sources; not shown: the citation holds.
    assert cited["q1"] == (set() if shown else {"r-nia"})
    assert {s.id for s in run.provenance.answers["q1"]} >= {"r-ada", "r-nia"}
