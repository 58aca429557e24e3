"""Reviewer choice: a full-text pre-filter, the neighbourhood's fields first, each paper
embedded on its own, best match to the proposal, candidates embedded while drafting."""
from __future__ import annotations

import numpy as np

from rt_core.models.embed import Embedder
from rt_core.models.scripted import demo_responder
from rt_core.run.people import reviewers
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import Paper, Proposal, Researcher, RunConfig, RunRequest


class WordEmbedder(Embedder):
    VOCAB = ["stars", "agents", "crime", "language", "spectra", "families", "web", "galaxy"]

    def __init__(self):
        super().__init__("test/words")
        self.texts: list[str] = []

    def _compute(self, texts):
        self.texts += texts
        return np.array([[t.lower().count(w) + 1e-3 for w in self.VOCAB] for t in texts],
                        dtype=np.float32)


def sim_for(store, embedder=None, **cfg) -> Simulation:
    config = RunConfig(**{"model": "scripted/demo", "num_reviewers": 1, **cfg})
    sim = Simulation(RunRequest(config, max_retries=0), store, embedder=embedder or WordEmbedder())
    sim.start()
    return sim


def test_each_paper_is_embedded_on_its_own_and_the_best_match_wins(community):
    # Mo wrote one paper on web agents among several on crime; Pat two half-related ones.
    community.corpus.upsert_papers([
        Paper(id="m1", title="Web agents for language tasks", year=2020, fields=["nlp"]),
        *[Paper(id=f"m{i}", title=f"Crime and families study {i}", year=2020, fields=["nlp"])
          for i in range(2, 6)],
        Paper(id="p1", title="Language and crime", year=2020, fields=["nlp"]),
        Paper(id="p2", title="Language and families", year=2020, fields=["nlp"])])
    community.corpus.upsert_researchers([
        Researcher(id="r-mo", name="Mo", fields=["nlp"], publication_ids=[f"m{i}" for i in range(1, 6)]),
        Researcher(id="r-pat", name="Pat", fields=["nlp"], publication_ids=["p1", "p2"])])
    emb = WordEmbedder()
    sim = sim_for(community, emb, researcher_ids=["r-nia"], paper_ids=["p-agents"])
    vectors = sim.state.reviewers.candidate_vectors()
    assert vectors["r-mo"].shape[0] == 5  # one vector per paper, none cut off
    assert all(len(t) < 400 for t in emb.texts)
    proposal = Proposal(q1="How can web agents do language tasks?", q5="We will build web agents.")
    ranked = sim.state.reviewers.choose_reviewers(proposal, vectors)
    assert ranked == ["r-mo"] or ranked == ["r-lee"]  # both wrote a web-agents paper
    sim.config.num_reviewers = 3
    top3 = sim.state.reviewers.choose_reviewers(proposal, vectors)
    assert top3.index("r-mo") < top3.index("r-pat")


def test_reviewers_come_from_the_neighbourhoods_fields_when_there_are_any(community):
    sim = sim_for(community, researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1)
    assert sim.state.reviewers.candidate_pool() == ["r-sam"]  # the other astronomer, not the crime or NLP people
    # With more reviewers wanted than the field holds, the search widens.
    wide = sim_for(community, researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=3)
    pool = wide.state.reviewers.candidate_pool()
    assert pool[0] == "r-sam" and len(pool) >= 3 and "r-ada" not in pool


def test_a_large_store_is_not_loaded_whole(community, monkeypatch):
    n = 3000
    papers = [Paper(id=f"x{i}", title=f"Survey {i} of crime records", year=2019, fields=["criminology"])
              for i in range(n)]
    people = [Researcher(id=f"rx{i}", name=f"Person {i}", fields=["criminology"],
                         publication_ids=[f"x{i}"]) for i in range(n)]
    with community.transaction():
        community.corpus.upsert_papers(papers)
        community.corpus.upsert_researchers(people)
    loaded = []
    real = community.corpus.publications
    monkeypatch.setattr(community.corpus, "publications", lambda rid: loaded.append(rid) or real(rid))
    sim = sim_for(community, researcher_ids=["r-cole"], paper_ids=["p-crime"], num_reviewers=2)
    vectors = sim.state.reviewers.candidate_vectors()
    candidates = [r for r in loaded if r != "r-cole"]
    assert 2 <= len(vectors) <= reviewers.REVIEWER_POOL
    assert len(set(candidates)) <= reviewers.REVIEWER_POOL  # not 3,000


def test_candidates_are_embedded_before_the_drafts_are_written(community, scripted):
    scripted.responder = demo_responder
    sim = sim_for(community, researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"],
                  num_reviewers=1, embedder=Embedder(store=community))
    run = sim.run_sync()
    assert run.status == "done"
    # The candidates stage needs nothing, so it starts with the authors' reading, before
    # any draft is written; the choice waits for it and for the proposal.
    assert sim.started.index("candidates") < sim.started.index("write")
    assert [s.needs for s in sim.plan if s.name == "choose"] == [("aggregate", "candidates")]
    assert len(run.reviews) == 1 and run.reviews[0].reviewer_id not in {"r-ada", "r-nia"}


def test_every_chosen_field_with_a_candidate_gets_a_reviewer():
    # Three NLP people rank above the one astronomer; with two fields and two seats the
    # astronomer still gets one, and the rest go by rank.
    ranked = ["n1", "n2", "a1", "n3"]
    fields_of = {"n1": {"nlp"}, "n2": {"nlp"}, "n3": {"nlp"}, "a1": {"astronomy"}}
    assert reviewers.cover_fields(ranked, fields_of, ["nlp", "astronomy"], 2) == ["n1", "a1"]
    assert reviewers.cover_fields(ranked, fields_of, ["nlp", "astronomy"], 3) == ["n1", "n2", "a1"]
    # Fewer seats than fields: still as many fields as the seats can cover; a field nobody
    # covers takes no seat.
    assert reviewers.cover_fields(ranked, fields_of, ["nlp", "astronomy", "crime"], 2) == ["n1", "a1"]
    assert reviewers.cover_fields(ranked, fields_of, ["nlp", "crime"], 2) == ["n1", "n2"]


def test_nlp_and_astronomy_get_an_astronomer_among_three_reviewers(starter_store):
    """The preset's authors and papers from both fields, with a proposal whose words are
    all NLP (as the embedded model's often are): one of three reviewers is an astronomer."""
    from rt_core import community

    preset = community.preset("nlp-astronomy")
    # The starter set's only other astronomer co-wrote four Gaia papers with an author, so
    # he may not review; one astronomer from outside the authors' circle is added.
    starter_store.corpus.upsert_papers([Paper(id="p-halo", title="Stellar streams in the Milky Way halo",
                                              year=2020, fields=["astronomy"])])
    starter_store.corpus.upsert_researchers([Researcher(id="r-halo", name="Hal O", fields=["astronomy"],
                                                        publication_ids=["p-halo"])])
    sim = sim_for(starter_store, Embedder(store=starter_store), researcher_ids=preset["researcher_ids"],
                  paper_ids=preset["paper_ids"], num_reviewers=3)
    assert set(sim.state.reviewers.chosen_fields()) == {"nlp", "astronomy"}
    proposal = Proposal(q1="How can large language models answer questions about text?",
                        q5="We will fine-tune a transformer language model on a text benchmark.")
    chosen = sim.state.reviewers.choose_reviewers(proposal)
    fields = {rid: set(starter_store.corpus.researcher_fields([rid])) for rid in chosen}
    assert len(chosen) == 3 and not set(chosen) & {*preset["researcher_ids"], "r-brown-anthony"}
    assert any("astronomy" in f for f in fields.values()), fields
    assert any("nlp" in f for f in fields.values()), fields
