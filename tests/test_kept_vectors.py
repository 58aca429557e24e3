"""Vectors embedded once by the setup (models/kept_vectors.py): a run on a fresh store takes
the bundled papers' gists, concept phrases and reviewer lines from them instead of waiting
for MiniLM before its first model call, and gets exactly the vectors it would compute."""
from __future__ import annotations

import logging
import stat

import numpy as np
import pytest

from rt_core import community
from rt_core.config import LOCAL_EMBEDDER
from rt_core.models import kept_vectors
from rt_core.models.embed import Embedder
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import RunConfig, RunRequest

TEXTS = ["Gaia astrometry mission", "crime hotspots", "A survey of large language models. It reviews them."]


class Recording(Embedder):
    """The bundled MiniLM, noting every text it had to compute."""

    def __init__(self, store=None):
        super().__init__(LOCAL_EMBEDDER, store=store)
        self.computed: list[str] = []

    def _compute(self, texts):
        self.computed += texts
        return super()._compute(texts)


@pytest.fixture
def kept_file(tmp_path, monkeypatch):
    path = tmp_path / "kept.npz"
    monkeypatch.setenv("RT_KEPT_VECTORS", str(path))
    return path


def test_kept_texts_are_not_computed_again_and_give_the_computed_vectors(kept_file, store):
    _, made = kept_vectors.write(LOCAL_EMBEDDER, TEXTS, Embedder().compute)
    assert made == len(TEXTS)
    emb = Recording(store=store)
    got = emb.encode([*TEXTS, "stellar velocity distributions"])
    assert emb.computed == ["stellar velocity distributions"]
    computed = Embedder().compute([*TEXTS, "stellar velocity distributions"])  # nothing looked up
    assert np.allclose(got, computed / np.linalg.norm(computed, axis=1, keepdims=True), atol=1e-6)
    # kept in the store as if computed: the next run on this store asks nobody
    assert set(store.embeddings.get(LOCAL_EMBEDDER, TEXTS)) == set(TEXTS)


def test_a_file_made_for_another_embedder_or_other_code_answers_nothing(kept_file):
    kept_vectors.write("local/another-embedder", TEXTS, Embedder().compute)
    emb = Recording()
    emb.encode(TEXTS)
    assert emb.computed == TEXTS
    # the same file claiming our embedder but made by other MiniLM code or weights
    np.savez(kept_file, identity=np.array("0" * 32), digests=np.array([kept_vectors.digest(t) for t in TEXTS]),
             vectors=np.ones((len(TEXTS), 384), np.float32))
    assert kept_vectors.lookup(LOCAL_EMBEDDER, TEXTS) == {}


def test_an_unreadable_file_means_computing_not_failing(kept_file, caplog):
    kept_file.write_bytes(b"not a numpy file")
    emb = Recording()
    with caplog.at_level(logging.WARNING, logger="rt_core.models.kept_vectors"):
        vecs = emb.encode(TEXTS)
    assert emb.computed == TEXTS and vecs.shape == (3, 384)
    assert "could not be read" in caplog.text


def test_writing_again_embeds_only_when_a_text_is_missing(kept_file):
    assert kept_vectors.write(LOCAL_EMBEDDER, TEXTS[:2], Embedder().compute)[1] == 2
    assert kept_vectors.write(LOCAL_EMBEDDER, TEXTS[:2], Embedder().compute)[1] == 0
    assert kept_vectors.write(LOCAL_EMBEDDER, TEXTS, Embedder().compute)[1] == 3
    assert set(kept_vectors.lookup(LOCAL_EMBEDDER, TEXTS)) == set(TEXTS)


def test_what_a_run_embeds_before_its_first_call_is_all_kept(starter_store, scripted):
    """Every bundled case study's key concepts and reviewer candidates embed only texts the
    setup keeps: a change to what they embed that `community.kept_texts` misses fails here."""
    kept = community.kept_texts()
    emb = Recording(store=starter_store)
    for preset in community.presets():
        config = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"],
                           paper_ids=preset["paper_ids"], num_reviewers=3)
        state = Simulation(RunRequest(config, max_retries=0), starter_store, embedder=emb).start()
        assert any(state.grounding.concepts.values())
        assert state.reviewers.candidate_vectors()
    assert emb.computed, "the case studies embedded nothing: the check would prove nothing"
    assert set(emb.computed) <= kept, sorted(set(emb.computed) - kept)[:5]


def test_what_the_pairings_compare_is_all_kept(starter_store, scripted):
    """A run from the papers' facets compares each mechanism's sentence with each purpose's
    (run/facets/pair.py): on a neighbourhood met for the first time that was most of its
    MiniLM time, paid once (issue 49: the first run took twice the next). Every bundled case
    study's pairings embed only texts the setup keeps."""
    kept = community.kept_texts()
    emb = Recording(store=starter_store)
    compared: list[str] = []
    for preset in community.presets():
        config = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"],
                           paper_ids=preset["paper_ids"], num_reviewers=3)
        state = Simulation(RunRequest(config, max_retries=0), starter_store, embedder=emb).start()
        before = len(emb.computed)  # what the start embedded is the test above's
        assert state.grounding.pairings is not None
        compared += emb.computed[before:]
    assert compared, "the pairings embedded nothing: the check would prove nothing"
    assert set(compared) <= kept, sorted(set(compared) - kept)[:5]


def test_the_file_is_whole_and_readable_by_an_app_run_as_another_user(kept_file):
    """Written beside the model and renamed into place (bundled.temporary_beside): no secret in
    it, so other users of the installation may read it, and no temporary file is left."""
    kept_vectors.write(LOCAL_EMBEDDER, TEXTS, Embedder().compute)
    assert stat.S_IMODE(kept_file.stat().st_mode) == 0o644
    assert [p.name for p in kept_file.parent.iterdir()] == [kept_file.name]
