"""Starter community: presets and replacing our summaries with real abstracts."""
from rt_core import community
from rt_core.sources.arxiv_source import ArxivSource
from rt_core.types import Paper
from tests.test_sources_arxiv import ATTENTION, feed


def test_every_preset_is_a_valid_neighbourhood(store):
    community.ensure_loaded(store)
    presets = community.presets()
    assert len(presets) >= 10
    ids = {p["id"] for p in presets}
    assert {"nlp-astronomy", "nlp-criminology"} <= ids
    for p in presets:
        assert p["researcher_ids"] and p["paper_ids"] and p["name"]


def test_refresh_replaces_summaries_with_real_abstracts_and_reports_unknown_ids(
        store, fake_server, sleeps, closing):
    store.corpus.upsert_papers([
        Paper(id="arxiv:1706.03762", title="Attention Is All You Need", arxiv_id="1706.03762",
              abstract="Our own summary.", abstract_source="summary"),
        Paper(id="arxiv:2401.99999", title="A paper arXiv does not know", arxiv_id="2401.99999",
              abstract="Summary two.", abstract_source="summary"),
    ])
    fake_server.route("/api/query", (200, {}, feed(ATTENTION)))
    source = closing(ArxivSource(fake_server.url, sleep=sleeps, timeout=5))
    out = community.refresh_abstracts(store, source=source)
    assert out == {"updated": 1, "missing": ["2401.99999"]}
    p = store.corpus.get_paper("arxiv:1706.03762")
    assert p.abstract.startswith("The dominant sequence transduction models")
    assert p.abstract_source == "arxiv"
    assert store.corpus.get_paper("arxiv:2401.99999").abstract == "Summary two."
    assert store.counts()["papers"] == 2  # merged, not doubled
    # nothing left to refresh for the known paper: a second run asks only for the unknown one
    fake_server.route("/api/query", (200, {}, feed()))
    assert community.refresh_abstracts(store, source=source)["updated"] == 0


def test_the_bundled_vectors_are_those_of_the_bundled_papers_as_they_are_now():
    """papers.json changed without `community.write_vectors()` run again: the papers whose
    text changed would be embedded on a fresh store's first novelty check (11 s for all)."""
    import numpy as np

    from rt_core.models.embed import Embedder
    from rt_core.store.paper_vectors import paper_text, text_hash

    papers = [Paper.from_dict(p) for p in community._read("papers.json")]
    texts = {p.id: paper_text(p.title, p.abstract) for p in papers}
    with np.load(community.ASSETS / community.VECTORS, allow_pickle=False) as data:
        assert str(data["model"]) == Embedder().name
        bundled = dict(zip(data["ids"], data["hashes"], strict=True))
        matrix = data["vectors"].astype(np.float32)
    assert bundled == {pid: text_hash(t) for pid, t in texts.items()}, \
        "run: .venv/bin/python -c 'from rt_core.community import write_vectors; write_vectors()'"
    sample = [0, len(papers) // 2, len(papers) - 1]  # what the embedder computes here, today
    fresh = Embedder().encode([texts[papers[i].id] for i in sample])
    cosines = (fresh * matrix[sample]).sum(axis=1)
    assert cosines.min() > 0.999, cosines


def test_a_fresh_store_holds_the_bundled_papers_vectors_and_not_for_changed_text(store):
    from rt_core.models.embed import Embedder

    embedder = Embedder()
    model = embedder.name
    papers = [Paper.from_dict(p) for p in community._read("papers.json")]
    store.corpus.upsert_papers([Paper(id=papers[0].id, title=papers[0].title, abstract="Our own words.")])
    community.ensure_loaded(store)
    ids, matrix = store.corpus.vectors.matrix(model)
    assert len(ids) == len(papers) - 1 and matrix.shape[1] == 384
    # the one paper stored with other text has no bundled vector: it is embedded when needed
    assert [pid for pid, _ in store.corpus.vectors.missing(model, 10)] == [papers[0].id]
    assert store.corpus.vectors.fill(model, embedder.encode, limit=None) == 1
