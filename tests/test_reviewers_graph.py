"""Reviewers by graph position (issue 27, point 2), on planted communities whose right answer
is known: every field of the proposal covered, one reviewer from the field the graph ties to
it (whichever that is), never an author or a close co-author, a reason for each, stored
with the run."""
from __future__ import annotations

import pytest

from rt_core.models.scripted import demo_responder
from rt_core.run.people import adjacent, reviewers
from rt_core.types import Paper, Proposal, Researcher, Review, Run, RunConfig
from tests.test_reviewers import sim_for

FIELDS = ["nlp", "astronomy", "statistics", "criminology"]
PROPOSAL = Proposal(q1="How can language agents read the spectra of stars?",
                    q5="We will train language agents on stellar spectra of stars.")


def plant(store, bridge: str) -> None:
    """Authors Nora (NLP) and Ash (astronomy). Cleo co-wrote both of Nora's papers (a close
    co-author) and matches the proposal best; Ned and Nell are other NLP people, Aya another astronomer. Ned co-wrote a
    paper with a researcher of `bridge` (statistics or criminology): that field is the one
    the graph ties to NLP. The other outside field has no tie at all."""
    other = "criminology" if bridge == "statistics" else "statistics"
    store.corpus.upsert_fields([{"id": f, "name": f.title(), "domain": f} for f in FIELDS])
    store.corpus.upsert_papers([
        Paper(id="p-nora", title="Language agents on the web", year=2021, fields=["nlp"]),
        Paper(id="p-nora2", title="Language of web tasks", year=2019, fields=["nlp"]),
        Paper(id="p-ash", title="Spectra of galaxy stars", year=2021, fields=["astronomy"]),
        Paper(id="p-ned", title="Language agents and language", year=2020, fields=["nlp"]),
        Paper(id="p-nell", title="Web language", year=2020, fields=["nlp"]),
        Paper(id="p-aya", title="Galaxy stars", year=2019, fields=["astronomy"]),
        Paper(id="p-bridge", title="Counting crime families", year=2018, fields=[bridge]),
        Paper(id="p-far", title="Language agents read spectra of stars", year=2018, fields=[other])])
    store.corpus.upsert_researchers([
        Researcher(id="r-nora", name="Nora", fields=["nlp"], publication_ids=["p-nora", "p-nora2"]),
        Researcher(id="r-ash", name="Ash", fields=["astronomy"], publication_ids=["p-ash"]),
        Researcher(id="r-cleo", name="Cleo", fields=["nlp"], publication_ids=["p-nora", "p-nora2"]),
        Researcher(id="r-ned", name="Ned", fields=["nlp"], publication_ids=["p-ned", "p-bridge"]),
        Researcher(id="r-nell", name="Nell", fields=["nlp"], publication_ids=["p-nell"]),
        Researcher(id="r-aya", name="Aya", fields=["astronomy"], publication_ids=["p-aya"]),
        Researcher(id="r-bea", name="Bea", fields=[bridge], publication_ids=["p-bridge"]),
        # The best match of all, but from a field nothing ties to the proposal's.
        Researcher(id="r-far", name="Far", fields=[other], publication_ids=["p-far"])])


def old_rule(ranked: list[str], fields_of: dict, fields: list[str], k: int) -> list[str]:
    """The choice before issue 27: authors excluded only; with at least as many seats as
    fields, the best of each field, then by rank; with fewer, by rank alone."""
    picked: list[str] = []
    if k >= len(fields):
        for f in fields:
            if not any(f in fields_of[r] for r in picked):
                picked += [next(r for r in ranked if f in fields_of[r] and r not in picked)]
    picked += [r for r in ranked if r not in picked][:k - len(picked)]
    return sorted(picked, key=ranked.index)


@pytest.mark.parametrize("bridge", ["statistics", "criminology"])
def test_every_field_covered_plus_the_field_the_graph_ties_to_it(store, bridge):
    plant(store, bridge)
    sim = sim_for(store, researcher_ids=["r-nora", "r-ash"], paper_ids=["p-nora", "p-ash"],
                  num_reviewers=3)
    choice = sim.state.reviewers
    assert choice.excluded() == ["r-nora", "r-ash", "r-cleo"]
    assert [link.field for link in choice.adjacency()] == [bridge]
    vectors = choice.candidate_vectors()
    assert "r-bea" in vectors and "r-far" not in vectors  # the tied field's researcher joins the pool
    chosen = choice.choose_reviewers(PROPOSAL, vectors)
    fields = {r: set(store.corpus.researcher_fields([r])) for r in chosen}
    assert {"nlp", "astronomy"} <= set().union(*fields.values()), fields
    assert [r for r, f in fields.items() if bridge in f] == ["r-bea"]
    assert not set(chosen) & {"r-nora", "r-ash", "r-cleo", "r-far"}
    assert set(choice.reasons) == set(chosen)
    assert choice.reasons["r-bea"].startswith(f"From {bridge.title()}, a field next to Nlp in the "
                                              "community graph (1 co-authored paper)")
    assert choice.reasons["r-aya"].startswith("Covers Astronomy, drawn on by the proposal")
    # The old rule, on the same candidates with Cleo back among them, picks differently.
    q = choice.query_vector(PROPOSAL)
    cleo = choice.embedder.encode(["Language agents on the web. ", "Language of web tasks. "])
    everyone = {**vectors, "r-cleo": cleo}
    ranked = sorted(everyone, key=lambda r: (-float((everyone[r] @ q).max()), r))
    assert old_rule(ranked, choice._fields_of(ranked), ["nlp", "astronomy"], 3) != sorted(
        chosen, key=ranked.index)


def test_fewer_seats_than_fields_still_cover_them_all():
    # Two seats, three fields: Ava publishes in astronomy and statistics and covers both.
    ranked = ["n1", "n2", "a1", "ava"]
    fields_of = {"n1": {"nlp"}, "n2": {"nlp"}, "a1": {"astronomy"}, "ava": {"astronomy", "statistics"}}
    fields = ["nlp", "astronomy", "statistics"]
    assert old_rule(ranked, fields_of, fields, 2) == ["n1", "n2"]  # by rank: two fields missed
    seats = reviewers.choose_seats(ranked, fields_of, fields, 2)
    assert [(s.rid, s.fields) for s in seats] == [("n1", ["nlp"]), ("ava", ["astronomy", "statistics"])]
    # With a seat left the adjacent field gets it, and the rank fills nothing else.
    fields_of["c1"] = {"criminology"}
    seats = reviewers.choose_seats([*ranked, "c1"], fields_of, fields, 3, ["criminology"])
    assert [(s.rid, s.why) for s in seats] == [("n1", "covers"), ("ava", "covers"), ("c1", "adjacent")]


def test_a_close_coauthor_has_written_two_papers_with_an_author(community):
    # Sam shares one paper (p-spectra) with Ada: still an outside reader.
    assert adjacent.close_coauthors(community.corpus, ["r-ada"]) == set()
    community.corpus.upsert_papers([Paper(id="p-two", title="Spectra again", year=2022, fields=["astronomy"])])
    community.corpus.upsert_researchers([
        Researcher(id="r-ada", name="Ada Astro", fields=["astronomy"],
                   publication_ids=["p-gaia", "p-spectra", "p-two"]),
        Researcher(id="r-sam", name="Sam Stars", fields=["astronomy"], publication_ids=["p-spectra", "p-two"])])
    assert adjacent.close_coauthors(community.corpus, ["r-ada"]) == {"r-sam"}


def test_citations_tie_fields_too(store):
    plant(store, "statistics")
    store.corpus.upsert_papers([Paper(id="p-cite", title="Stars", year=2022, fields=["criminology"],
                                      references=["p-aya"])])
    store.corpus.upsert_researchers([Researcher(id="r-aya", name="Aya", fields=["astronomy"],
                                                publication_ids=["p-aya", "p-cite"])])
    g = adjacent.neighbourhood_graph(store.corpus, ["r-aya"])
    links = adjacent.adjacent_fields(adjacent.field_graph(g), ["astronomy"])
    assert [(k.field, k.cited) for k in links] == [("criminology", 1)]


def test_the_run_stores_why_each_reviewer_was_chosen(store, scripted):
    scripted.responder = demo_responder
    plant(store, "statistics")
    sim = sim_for(store, researcher_ids=["r-nora", "r-ash"], paper_ids=["p-nora", "p-ash"],
                  num_reviewers=3)
    run = sim.run_sync()
    assert run.status == "done"
    stored = store.runs.load(run.id)
    assert {r.reviewer_id for r in stored.reviews} <= set(stored.reviewer_reasons)
    assert all(reviewers.reason_for(stored, r.reviewer_id) for r in stored.reviews)
    named = sim_for(store, researcher_ids=["r-nora"], paper_ids=["p-nora"], reviewer_ids=["r-cleo"])
    assert named.state.reviewers.choose_reviewers(PROPOSAL) == ["r-cleo"]  # by hand: still allowed
    assert named.state.reviewers.reasons == {"r-cleo": reviewers.HAND_PICKED}


def test_results_name_a_field_no_reviewer_covers(store):
    plant(store, "statistics")
    config = RunConfig(researcher_ids=["r-nora", "r-ash"], paper_ids=["p-nora", "p-ash"])
    run = Run(id="u1", config=config, reviews=[Review("r-ned")], reviewer_reasons={"r-ned": "close"})
    assert reviewers.uncovered_fields(store, run) == ["Astronomy"]
    run.reviews.append(Review("r-aya"))
    assert reviewers.uncovered_fields(store, run) == []
    by_hand = Run(id="u2", config=RunConfig(researcher_ids=["r-nora"], paper_ids=["p-nora", "p-ash"],
                                             reviewer_ids=["r-ned"]), reviews=[Review("r-ned")])
    assert reviewers.uncovered_fields(store, by_hand) == []  # the user's choice, not flagged
