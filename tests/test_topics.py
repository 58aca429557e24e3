"""Search that finds topics: hybrid paper ranking and researchers by their papers, on both
engines, with the bundled MiniLM (no network)."""
from __future__ import annotations

import numpy as np

from rt_core.store.paper_vectors import PaperVectors
from rt_core.topic_search import EMPTY_HINT, for_store
from rt_core.types import Paper, Researcher

REWARD = Paper(id="local:reinforcement", fields=["neuroscience"], year=2024,
               title="Midbrain neuromodulator cells signal errors in predicted reinforcement",
               abstract="Recordings from monkeys show that these cells fire more when juice "
                        "arrives unexpectedly and pause when a promised drop is withheld, the "
                        "teaching signal that learning theories of value assume.")


def titles(hits):
    return [h.paper.title for h in hits]


def test_brain_finds_neuroscientists_by_their_papers(starter_store):
    hits = for_store(starter_store).researchers("brain", limit=10)
    assert hits and "neuroscience" in hits[0].researcher.fields
    assert not hits[0].by_name and hits[0].papers >= 1 and hits[0].best_paper
    assert starter_store.corpus.search_researchers("brain") == []  # names alone find nobody


def test_decision_making_finds_the_paper_and_its_author(starter_store):
    topics = for_store(starter_store)
    assert "Human Decisions and Machine Predictions" in titles(topics.papers("decision making",
                                                                              limit=5))
    names = [h.researcher.name for h in topics.researchers("decision making", limit=10)]
    assert "Sendhil Mullainathan" in names


def test_meaning_ranks_social_inequality_above_the_harnack_inequality(starter_store):
    """'social inequality' shares only the word 'inequality' with the Harnack paper, and its
    meaning with the wealth-inequality one. ('inequality' alone is honestly ambiguous: the
    Harnack inequality is as close to it in MiniLM's space as wealth inequality.)"""
    found = titles(for_store(starter_store).papers("social inequality", limit=20))
    wealth = found.index("Climate policies under wealth inequality")
    harnack = next(i for i, t in enumerate(found) if "Harnack" in t)
    assert wealth < harnack


def test_names_still_come_first(starter_store):
    hits = for_store(starter_store).researchers("Yamins", limit=10)
    assert hits[0].by_name and hits[0].researcher.name == "Daniel L. K. Yamins"
    assert len(hits) > 1 and not any(h.by_name for h in hits[1:])  # then his co-authors
    assert len({h.researcher.id for h in hits}) == len(hits)


def test_a_topic_in_other_words_is_found_by_meaning(starter_store):
    """No word of 'dopamine reward' is in the paper; its meaning is, and so is its author."""
    assert not starter_store.corpus.search_papers("dopamine reward")
    starter_store.corpus.import_bundle(
        [REWARD], [Researcher(id="r-wolfram", name="Wolfram Sc", fields=["neuroscience"],
                              publication_ids=[REWARD.id])])
    hits = for_store(starter_store).papers("dopamine reward", limit=5)
    assert hits[0].paper.id == REWARD.id and hits[0].by_meaning and hits[0].similarity >= 0.3
    people = for_store(starter_store).researchers("dopamine reward", limit=5)
    assert people[0].researcher.id == "r-wolfram" and people[0].by_meaning


def test_unknown_words_give_an_empty_result_not_an_error(starter_store):
    assert for_store(starter_store).papers("xyzzy qwertzuiop") == []
    assert for_store(starter_store).researchers("xyzzy qwertzuiop") == []
    for_store(starter_store).papers('"; DROP TABLE papers; --')  # just words
    assert starter_store.counts()["papers"] >= 80
    assert "import papers" in EMPTY_HINT


def test_field_filter_applies_to_both_rankings(starter_store):
    hits = for_store(starter_store).papers("brain", fields=["materials"], limit=20)
    assert all("materials" in h.paper.fields for h in hits)
    people = for_store(starter_store).researchers("neural network", fields=["materials"], limit=20)
    assert people and all("materials" in h.researcher.fields for h in people)


def test_vectors_are_stored_once_and_the_matrix_follows_new_papers(store):
    store.corpus.upsert_papers([Paper(id="a", title="Galaxy rotation curves")])
    vectors = PaperVectors(store.db)

    def embed(texts):
        return np.eye(4, dtype=np.float32)[[len(t) % 4 for t in texts]]

    assert vectors.fill("test-embedder", embed) == 1
    assert vectors.fill("test-embedder", embed) == 0  # stored, nothing left to do
    assert store.db.conn.execute("SELECT count(*) FROM paper_vectors").fetchone()[0] == 1
    ids, m = vectors.matrix("test-embedder")
    assert ids == ["a"] and m.shape == (1, 4) and m.dtype == np.float32
    store.corpus.upsert_papers([Paper(id="b", title="Tidal tails of merging galaxies")])
    assert vectors.matrix("test-embedder")[0] == ["a"]  # nothing stored for b yet
    vectors.fill("test-embedder", embed)
    assert vectors.matrix("test-embedder")[0] == ["a", "b"]
    store.corpus.upsert_papers([Paper(id="b", title="Tidal tails of merging galaxies",
                                      abstract="Now with an abstract.", abstract_source="arxiv")])
    assert vectors.fill("test-embedder", embed) == 1  # edited text is embedded again
