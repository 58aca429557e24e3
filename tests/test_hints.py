"""Before Start, on the bundled store: whether a neighbourhood gives the offline writer a
bridge, and which researchers would give one (rt_core/run/facets/hints.py), each hint
checked the way the run pairs papers, on the neighbourhood with the researcher added."""
from __future__ import annotations

import pytest

from rt_core.config import LOCAL_EMBEDDER
from rt_core.errors import NotFoundError
from rt_core.models.embed import Embedder
from rt_core.run.facets import hints

LONG_SHOT = ["r-huh-june", "r-papachristos-andrew"]  # mathematics x criminology
BRIDGED = ["r-chen-tianqi", "r-yamins-daniel"]  # a deep-learning compiler x neuroscience


@pytest.fixture
def minilm(starter_store) -> Embedder:
    return Embedder(LOCAL_EMBEDDER, store=starter_store)


@pytest.mark.parametrize("hood", [LONG_SHOT, ["r-restrepo-pascual", "r-villani-cedric"]])
def test_a_long_shot_gets_hints_each_of_which_gives_the_run_a_bridge_when_added(starter_store, minilm, hood):
    """Each hint, added, makes the run's first pairing a bridge between the added researcher's
    paper and one of the neighbourhood's: blind reading v12 found an economist added to
    economics x mathematics whose own two papers made the bridge, the drawn fields left out.
    Planted: _hint_for accepting a bridge between the candidate's own papers (the second
    neighbourhood's assert on `ours` fails)."""
    now = hints.bridge_state(starter_store, hood, [], embedder=minilm)
    assert now.bridge == "none" and not now.bridged
    found = hints.bridge_hints(starter_store, hood, [], embedder=minilm)
    assert 1 <= len(found) <= 3
    assert len({h.researcher_id for h in found}) == len(found)
    ours = {p.id for rid in hood for p in hints._recent(starter_store, rid)}
    for h in found:
        assert h.researcher_id not in hood
        assert h.line.startswith(f"{h.name} (") and h.pairing.mechanism.phrase in h.line
        # The run's own pairing of the enlarged neighbourhood: its best has a bridge.
        added = hints.bridge_state(starter_store, [*hood, h.researcher_id], [], embedder=minilm)
        assert added.bridged and added.pairing.bridge != "none", (h.line, added.sentence)
        sides = {added.pairing.mechanism.paper_id, added.pairing.purpose.paper_id}
        assert sides & ours, (h.line, added.sentence)
    # Ranked: the same-field ones first, then by how well the method fits.
    keys = [(not h.same_field, -h.value) for h in found]
    assert keys == sorted(keys)


def test_a_bridged_neighbourhood_names_its_bridge_and_gets_no_hint(starter_store, minilm):
    now = hints.bridge_state(starter_store, BRIDGED, [], embedder=minilm)
    assert now.bridge == "method" and now.bridged
    assert "TVM" in now.sentence and "sensory cortex" in now.sentence
    assert hints.bridge_hints(starter_store, BRIDGED, [], embedder=minilm) == []


def test_unknown_ids_raise_the_stores_not_found_and_an_empty_neighbourhood_is_no_hint(starter_store):
    with pytest.raises(NotFoundError, match="r-nobody"):
        hints.bridge_state(starter_store, ["r-huh-june", "r-nobody"], [])
    with pytest.raises(NotFoundError, match="p-nothing"):
        hints.bridge_hints(starter_store, ["r-huh-june"], ["p-nothing"])
    assert hints.bridge_hints(starter_store, [], []) == []
    assert not hints.bridge_state(starter_store, [], []).bridged
