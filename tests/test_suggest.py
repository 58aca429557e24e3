"""Suggest a neighbourhood on PLANTED communities, where the right answer is known: an
astronomy group and a larger NLP group who meet on "language models for galaxy surveys"
(one paper written together, one paper both sides cite), a criminology group that has
nothing to do with it, and the bundled MiniLM (no network)."""
from __future__ import annotations

import pytest

from rt_core.errors import InputError, NotFoundError
from rt_core.store import Store
from rt_core.suggest import suggest
from rt_core.suggest.fields import field_map
from rt_core.types import Paper, Researcher

TOPIC = "language models for galaxy surveys"
FIELDS = [{"id": "astro", "name": "Astronomy", "domain": "physical"},
          {"id": "nlp", "name": "Language technology", "domain": "computing"},
          {"id": "crim", "name": "Criminology", "domain": "social"},
          {"id": "stats", "name": "Statistics", "domain": "mathematics"}]
# (id, field, title, authors, references)
PAPERS = [
    ("a1", "astro", "Morphological classification of galaxies in deep imaging surveys", ["ada"], []),
    ("a2", "astro", "Redshift estimates for galaxies in a large spectroscopic survey catalogue",
     ["ben"], ["s1"]),
    ("a3", "astro", "Star formation histories of spiral galaxies in the local universe", ["cy"], []),
    ("n1", "nlp", "Fine-tuning large language models for text classification", ["dan"], []),
    ("n2", "nlp", "Instruction-tuned language models answer scientific questions", ["eve"], ["s1"]),
    ("n3", "nlp", "Prompting language models to extract entities from abstracts", ["fay"], []),
    ("n4", "nlp", "Scaling laws for large language models", ["gil"], []),
    ("n5", "nlp", "Language models as few-shot learners of new tasks", ["hu"], []),
    ("b1", "astro,nlp", "Language models read survey catalogues to classify galaxies",
     ["ada", "dan"], ["a1", "n1"]),
    ("s1", "stats", "Stochastic gradient methods for very large datasets", ["sol"], []),
    ("c1", "crim", "Near-repeat burglary patterns and police patrol schedules", ["ivy"], []),
    ("c2", "crim", "Gang rivalries and violent crime in city neighbourhoods", ["jo"], []),
]
FIELD_OF = {"ada": "astro", "ben": "astro", "cy": "astro", "dan": "nlp", "eve": "nlp",
            "fay": "nlp", "gil": "nlp", "hu": "nlp", "sol": "stats", "ivy": "crim", "jo": "crim"}


def plant(store: Store, bridge: bool = True) -> Store:
    """The planted community; without `bridge`, the paper the two groups wrote together is
    left out (and the astronomers are then further from the topic than every NLP author)."""
    store.corpus.upsert_fields(FIELDS)
    rows = [row for row in PAPERS if bridge or row[0] != "b1"]
    papers = [Paper(id=pid, title=title, abstract="", fields=fields.split(","), year=2024,
                    references=refs) for pid, fields, title, _, refs in rows]
    people = [Researcher(id=rid, name=rid.title(), fields=[f],
                         publication_ids=[pid for pid, _, _, who, _ in rows if rid in who])
              for rid, f in FIELD_OF.items()]
    store.corpus.import_bundle(papers, people, origin="test")
    return store


@pytest.fixture
def planted(store):
    return plant(store)


def top_fields(result, k: int) -> list[set[str]]:
    return [set(s.fields) for s in result.researchers[:k]]


def precision_at(result, k: int, right=frozenset({"astro", "nlp"})) -> float:
    """Share of the first k researchers working in one of the two fields that meet."""
    top = top_fields(result, k)
    return sum(bool(f & right) for f in top) / len(top)


def test_a_topic_between_two_fields_brings_both_and_never_the_distractor(planted):
    result = suggest(planted, TOPIC, limit=6)
    assert {"astro", "nlp"} <= set().union(*top_fields(result, 3))  # both, near the top
    assert precision_at(result, 6) == 1.0  # criminology and statistics are off the topic
    scores = [s.score for s in result.researchers]
    assert scores == sorted(scores, reverse=True)
    for s in result.researchers:  # the parts are shown and make up the score
        assert set(s.parts) == {"topic", "distance", "bridges"}
        assert s.score == pytest.approx(sum(s.weighted.values()), abs=1e-3)
        assert s.reason and s.label not in ("", s.id)


def test_without_a_bridge_the_second_suggestion_still_comes_from_the_other_field(store):
    """Every NLP author is closer to the topic than any astronomer: ranked by closeness
    alone, the first five would all be NLP. Far from the fields already suggested, the
    second is an astronomer."""
    result = suggest(plant(store, bridge=False), TOPIC, limit=4)
    assert [f for f in top_fields(result, 2)] == [{"nlp"}, {"astro"}]
    assert result.researchers[1].parts["distance"] == 1.0
    assert precision_at(result, 4) == 1.0


def test_far_from_a_field_drops_whoever_works_only_in_it(planted):
    result = suggest(planted, TOPIC, far_from="Language technology", limit=10)
    assert result.far_from == "nlp"
    assert result.researchers and result.papers
    assert all(set(s.fields) != {"nlp"} for s in result.researchers + result.papers)
    assert "b1" in [s.id for s in result.papers]  # astronomy and NLP: allowed
    assert result.researchers[0].parts["distance"] > 0.5  # scored far from NLP


def test_the_bridges_are_named(planted):
    ada = next(s for s in suggest(planted, TOPIC, limit=8).researchers if s.id == "ada")
    wrote = [b for b in ada.bridges if b.kind == "co-author"]
    assert wrote and wrote[0].paper_id == "b1" and wrote[0].other_name == "Dan"
    assert "Language models read survey catalogues" in ada.reason and "Dan" in ada.reason


def test_from_a_seed_the_shared_reference_is_the_bridge(planted):
    result = suggest(planted, TOPIC, seed="eve", limit=8)
    assert "eve" not in [s.id for s in result.researchers]
    ben = next(s for s in result.researchers if s.id == "ben")
    both = [b for b in ben.bridges if b.kind == "both cite"]
    assert both and both[0].paper_title.startswith("Stochastic gradient") and both[0].other_id == "eve"
    assert ben.parts["distance"] == field_map(planted).distance("astro", "nlp") > 0.5
    assert ben.parts["bridges"] > 0
    # from an NLP seed, the astronomers come first
    assert result.researchers[0].fields == ["astro"]


def test_a_seed_paper_reaches_out_from_its_authors(planted):
    result = suggest(planted, TOPIC, seed="n1", limit=8)
    assert "dan" not in [s.id for s in result.researchers]
    ada = next(s for s in result.researchers if s.id == "ada")
    assert any(b.kind == "co-author" and b.other_id == "dan" for b in ada.bridges)


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"seed": "nobody"}, NotFoundError, "No researcher or paper with id 'nobody'"),
    ({"far_from": "alchemy"}, InputError, "No field called 'alchemy'"),
    ({"topic": "zxqv blorp"}, InputError, "Nothing in the store is close to"),
    ({"topic": "  "}, InputError, "The topic is empty"),
    ({"limit": 0}, InputError, "The limit must be from 1"),
])
def test_bad_input_gets_one_clear_message(planted, kwargs, error, words):
    args = {"topic": TOPIC, **kwargs}
    with pytest.raises(error) as caught:
        suggest(planted, **args)
    assert words in str(caught.value) and caught.value.hint


def test_an_empty_store_says_so(store):
    with pytest.raises(InputError, match="no papers yet") as caught:
        suggest(store, TOPIC)
    assert "init" in caught.value.hint


def test_field_distance_follows_the_graph_as_well_as_the_domains(planted):
    fm = field_map(planted)
    assert fm.distance("astro", "astro") == 0
    assert fm.distance("astro", "crim") == 1.0  # different domains, never linked
    assert 0.5 <= fm.distance("astro", "nlp") < 1.0  # linked by the paper they wrote together
    assert fm.adjacent("astro", 1) == ["nlp"]
    assert fm.distance_between(["astro", "nlp"], ["nlp"]) == pytest.approx(fm.distance("astro", "nlp") / 2, abs=1e-3)


def test_the_field_map_follows_new_links(planted):
    """A paper filed under astronomy and criminology brings the two nearer; the map held
    for the store is read again (a small store moves by more than the drift allowed)."""
    assert field_map(planted).distance("astro", "crim") == 1.0
    planted.corpus.upsert_papers([Paper(id="x1", title="Crime scene imaging with telescopes",
                                        fields=["astro", "crim"])])
    assert field_map(planted).distance("astro", "crim") < 1.0
