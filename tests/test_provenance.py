"""Provenance: which drafts and papers each answer draws on, and the cited labels."""
from rt_core.run.citations import labels_in, strip_labels, take_citations
from rt_core.run.simulation import Simulation
from rt_core.types import Proposal, RunConfig, RunRequest
from tests import credit_script

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


def test_a_base_model_run_gets_embedding_provenance_without_citations(community, demo):
    run = run_with(community, None, prompt_style="stem", num_reviewers=0)
    assert run.status == "done", run.errors
    assert set(run.provenance.answers) == {"q1", "q2", "q3", "q4", "q5"}
    assert not any(s.cited for v in run.provenance.answers.values() for s in v)


def test_exports_carry_the_sources(community, scripted):
    from rt_core.export import Names, run_json, run_markdown

    scripted.responder = credit_script.responder
    run = run_with(community, credit_script.responder)
    names = Names.for_runs(community, [run])
    md = run_markdown(run, names)
    assert "## Where each answer came from" in md and "Ada Astro (" in md and ", cited)" in md
    assert "Mapping the Milky Way" in md.split("## Where each answer came from")[1]
    assert '"provenance"' in run_json(run, names)
