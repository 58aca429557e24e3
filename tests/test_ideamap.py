"""The map of ideas without the app (rt_core/ideamap.py): the projection keeps what it can of
the distances and never mirrors, a run of one idea is one point, each nearest paper is one
point however many ideas found it, and hover text from models is escaped."""
from __future__ import annotations

import numpy as np

from rt_core import ideamap
from rt_core.types import Candidate, FacetNovelty, Lead, NearPaper, Novelty, Proposal, Run, RunConfig
from tests.test_reviewers import WordEmbedder


def _distances(points: np.ndarray) -> np.ndarray:
    return np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)


def test_points_on_a_plane_keep_their_distances_and_are_never_mirrored():
    rng = np.random.default_rng(7)
    flat = rng.normal(size=(6, 2)) * [3.0, 1.0]
    basis, _ = np.linalg.qr(rng.normal(size=(12, 2)))  # a plane inside 12 dimensions
    vectors = flat @ basis.T + 5.0  # far from the origin: only a centred projection works
    coords, explained = ideamap.project(vectors)
    assert np.allclose(_distances(coords), _distances(flat), atol=1e-9)
    assert explained > 0.999
    # The same points listed in another order (a run reloaded, History re-sorted) land in
    # the same places: the axes' signs follow the data, not the order or the solver.
    # (Without fixing the signs, LAPACK flipped an axis for most of these orders.)
    for _ in range(20):
        order = rng.permutation(len(vectors))
        shuffled, _ = ideamap.project(vectors[order])
        assert np.allclose(shuffled, coords[order], atol=1e-9)


def test_one_point_and_identical_points_sit_at_the_origin():
    coords, explained = ideamap.project(np.ones((1, 8)))
    assert coords.tolist() == [[0.0, 0.0]] and explained == 1.0
    coords, _ = ideamap.project(np.ones((3, 8)))
    assert np.allclose(coords, 0.0)
    assert ideamap.project(np.zeros((0, 8)))[0].shape == (0, 2)
    two, _ = ideamap.project(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert abs(two[0, 0] - two[1, 0]) > 1.0 and np.allclose(two[:, 1], 0.0)


def _run(candidates: list[Candidate], proposal: Proposal | None = None, novelty=None) -> Run:
    return Run(id="m1", config=RunConfig(model="scripted/demo"), status="done", candidates=candidates,
               proposal=proposal, novelty=novelty)


def _novelty(*papers: NearPaper) -> Novelty:
    return Novelty([FacetNovelty("q1", list(papers))])


def test_a_run_of_one_idea_is_one_point(store):
    one = _run([], Proposal(q1="How do stars form in spectra?", q5="We read spectra."))
    m = ideamap.build(store, [one], WordEmbedder())
    assert [(p.kind, p.label, p.novelty) for p in m.points] == [("idea", "proposal", None)]
    assert (m.points[0].x, m.points[0].y) == (0.0, 0.0)
    assert ideamap.build(store, [_run([])], WordEmbedder()).points == []


def test_each_nearest_paper_is_one_point_and_novelty_sizes_the_idea(store):
    online = NearPaper(title="Galaxy Spectra Survey", similarity=0.8, source="openalex", url="https://x.org/1")
    stored = NearPaper(title="galaxy spectra survey", similarity=0.3, source="store")
    other = NearPaper(title="Crime families", similarity=0.2, source="store")
    cands = [Candidate("c1", Proposal(q1="Galaxy spectra by web agents?"), Lead(fields=["astronomy"]),
                       novelty=_novelty(online, other)),
             Candidate("c2", Proposal(q1="Crime and families of agents?"), Lead(fields=["nlp", "criminology"]),
                       novelty=_novelty(stored)),
             Candidate("c3", Proposal(q1="Language web agents?"), Lead())]
    m = ideamap.build(store, [_run(cands)], WordEmbedder())
    assert [p.label for p in m.ideas] == ["c1", "c2", "c3"]
    assert sorted(p.label for p in m.priors) == ["Crime families", "Galaxy Spectra Survey"]
    galaxy = next(p for p in m.priors if p.label == "Galaxy Spectra Survey")
    assert galaxy.near_to == ["m1/c1", "m1/c2"] and galaxy.url == "https://x.org/1"
    assert [p.novelty for p in m.ideas] == [0.2, 0.7, None]  # 1 - the closest paper's similarity
    assert m.ideas[1].fields == {"nlp": 0.5, "criminology": 0.5}
    assert m.ideas[1].answers["q1"] == "Crime and families of agents?"  # what opening it shows
    assert len({(p.x, p.y) for p in m.points}) == len(m.points)


def test_hover_text_shows_model_html_as_text():
    from studio.idea_map_view import hover_text, marker_size, mix_name

    shown = hover_text("<img src=x onerror=alert(1)> & <b>bold</b> " + "word " * 40)
    assert "<img" not in shown and "<b>bold" not in shown
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in shown
    assert "<br>" in shown  # our own line breaks, after escaping
    assert marker_size(0.0) < marker_size(None) < marker_size(0.9)
    assert mix_name({"nlp": 0.6, "astronomy": 0.3, "systems": 0.1}, {"nlp": "NLP"}) == "NLP + astronomy"


def test_steered_versions_join_the_map_and_open_with_their_answers(store):
    from rt_core.run.steer import table
    from rt_core.run.steer.tree import EDIT, YOU, Version

    run = _run([], Proposal(q1="How do stars form in spectra?", q5="We read spectra."))
    store.runs.save(run)
    edited = Proposal(q1="How do web agents read crime families?", q5="We ask agents.")
    table.save(store, Version("s1", run.id, parent="v0", author=YOU, kind=EDIT, changed=["q1"],
                              proposal=edited, created_at="2026-11-26T12:00:00"))
    m = ideamap.build(store, [run], WordEmbedder())
    assert [(p.id, p.label) for p in m.ideas] == [("m1/proposal", "proposal"),
                                                   ("m1/version s1", "version s1 (you)")]
    assert m.ideas[1].answers["q1"] == edited.q1
    assert (m.ideas[0].x, m.ideas[0].y) != (m.ideas[1].x, m.ideas[1].y)
