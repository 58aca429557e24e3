"""The bundled papers' facets ship with the app (rt_core/run/facets/bundle.py), so the first
run in a fresh data folder pays no more than later runs do (issue 49: the estimate within
25%, first run included); an edited paper, changed rules or another embedder never read
them."""
from __future__ import annotations

import json

import pytest

from rt_core.config import LOCAL_EMBEDDER
from rt_core.run.facets import bundle
from rt_core.run.facets import extract as X
from rt_core.run.facets.kept import facets_of
from rt_core.types import Paper

PAPER = Paper("p-1", "A graph method", abstract="We propose a graph network for crystals. "
              "On formation energy data it reaches low error.", fields=["materials"])


class Named:
    """An embedder as the shipped file knows it: by name (its vectors are not needed)."""

    def __init__(self, name: str = LOCAL_EMBEDDER):
        self.name = name

    def encode(self, texts):  # only a paper found again asks (extract.topic_of)
        import numpy as np

        return np.eye(len(texts), 4)


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A shipped file holding PAPER's facets, marked so that a read tells them from a find."""
    doc = dict(X.extract(PAPER).to_dict(), note="shipped")
    path = tmp_path / "paper_facets.json"
    path.write_text(json.dumps({"version": X.VERSION, "embedder": LOCAL_EMBEDDER,
                                "papers": {PAPER.id: {"digest": bundle.digest(PAPER), "facets": doc}}}))
    monkeypatch.setattr(bundle, "FILE", path)
    return doc


@pytest.fixture
def finds(monkeypatch):
    """The papers whose facets were found (by `extract`), not read."""
    found = []
    real = X.extract

    def counting(paper, embedder=None, described=None):
        found.append(paper.id)
        return real(paper, embedder, described)

    monkeypatch.setattr(X, "extract", counting)
    return found


def test_the_shipped_facets_are_read_not_found_and_then_kept_in_the_store(store, shipped, finds):
    store.corpus.upsert_papers([PAPER])
    got = facets_of([PAPER], store, Named())
    assert finds == [] and got[PAPER.id].note == "shipped"  # planted: kept.py never reads the file
    # kept: later runs read the store (planted: no store.facets.put of the shipped ones)
    assert store.facets.get([PAPER.id], X.VERSION)[PAPER.id]["note"] == "shipped"


def test_an_edited_paper_finds_its_facets_again(store, shipped, finds):
    edited = Paper(PAPER.id, PAPER.title, abstract=PAPER.abstract + " It fails on alloys.",
                   fields=PAPER.fields)
    got = facets_of([edited], store, Named())
    assert finds == [PAPER.id] and got[PAPER.id].note == ""  # planted: no digest check


def test_changed_rules_find_the_facets_again(store, shipped, finds, monkeypatch):
    monkeypatch.setattr(X, "VERSION", X.rules_version(("the rules, edited",)))
    got = facets_of([PAPER], store, Named())
    assert finds == [PAPER.id] and got[PAPER.id].note == ""  # planted: no version check


def test_another_embedder_finds_the_facets_again(shipped, finds):
    """The embedder picks a problem's topic phrase: 48 of the 139 bundled papers' facets
    differ without MiniLM, so the shipped ones are right only for the embedder they name."""
    assert facets_of([PAPER], None, Named("openai/text-embedding-3-small"))[PAPER.id].note == ""
    assert facets_of([PAPER], None, None)[PAPER.id].note == ""
    assert finds == [PAPER.id, PAPER.id]  # planted: the embedder's name not compared


def test_the_shipped_facets_are_those_of_the_current_rules_and_papers():
    """The rules or papers.json changed without the file written again: a fresh data
    folder's first run would find every bundled paper's facets (about 3 s), and the
    estimate would miss it again."""
    data = bundle.shipped()
    papers = [Paper.from_dict(p) for p in json.loads((bundle.ASSETS / "papers.json").read_text("utf-8"))]
    told = f"the shipped facets are stale: run {bundle.COMMAND}"
    assert data.get("embedder") == LOCAL_EMBEDDER, told
    assert {e["facets"]["version"] for e in data["papers"].values()} == {X.VERSION}, told
    assert {pid: e["digest"] for pid, e in data["papers"].items()} == \
        {p.id: bundle.digest(p) for p in papers}, told
    assert len(bundle.usable(papers, LOCAL_EMBEDDER)) == len(papers), told
