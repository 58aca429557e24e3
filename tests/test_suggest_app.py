"""The Suggest panel of the Neighbourhood page (AppTest, starter community): a topic gives
researchers of two fields with their score parts drawn, Add puts one in the neighbourhood and
the interdisciplinarity meter follows; bad input is one message; names are shown as text."""
from __future__ import annotations

from rt_core.store import open_store
from rt_core.types import Paper, Researcher
from tests.apphelp import errors, module_data_dir, new_app, texts

data_dir = module_data_dir("suggest-app")
TOPIC = "language models for galaxy surveys"


def ask(at, topic: str, **choices):
    at.text_input(key="sg_topic").input(topic)
    for key, value in choices.items():
        at.selectbox(key=key).select(value)
    at.button(key="sg_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_suggestions_of_two_fields_and_add_moves_the_meter():
    at = ask(new_app(), TOPIC)
    people = at.session_state["sg_result"]["researchers"]
    fields = {f for p in people for f in p["fields"]}
    assert {"nlp", "astronomy"} <= fields
    assert len(at.get("plotly_chart")) == 2  # the score parts, one bar per suggestion
    assert metrics(at) == {}  # nothing chosen yet: no meter
    astro = next(p for p in people if p["fields"] == ["astronomy"])
    nlp = next(p for p in people if "nlp" in p["fields"])
    at.button(key=f"sg_add_researcher_{astro['id']}").click().run()
    assert at.session_state["hood_r"] == [astro["id"]]
    assert metrics(at)["Fields"] == "1"
    assert at.button(key=f"sg_add_researcher_{astro['id']}").disabled  # now "Added"
    at.button(key=f"sg_add_researcher_{nlp['id']}").click().run()
    assert metrics(at)["Domains"] == "2"
    assert at.session_state["sg_result"]["researchers"] == people  # the list stayed


def test_far_from_and_seed_come_from_the_form():
    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    at.run()
    at = ask(at, TOPIC, sg_seed="r-neubig-graham", sg_far="systems")
    result = at.session_state["sg_result"]
    assert result["seed"] == "r-neubig-graham" and result["far_from"] == "systems"
    assert all(set(p["fields"]) != {"systems"} for p in result["researchers"] + result["papers"])


def test_a_topic_with_no_match_is_one_message():
    at = ask(new_app(), "zxqv blorp")
    assert "Nothing in the store is close to 'zxqv blorp'" in errors(at)
    assert at.session_state["sg_result"] is None


def test_names_and_reasons_are_text_not_markup():
    store = open_store()
    paper = Paper(id="local:sg-markup", fields=["astronomy"], year=2025,
                  title="<b>Language models</b> read **galaxy survey** catalogues")
    store.corpus.import_bundle([paper], [Researcher(id="r-sg-markup", name="**Ada** <i>Lux</i>",
                                                    fields=["astronomy"],
                                                    publication_ids=[paper.id])])
    at = ask(new_app(), TOPIC)
    assert any(t.endswith(". **Ada** <i>Lux</i>") for t in texts(at))
    caption = next(c.value for c in at.caption if "catalogues" in c.value)
    assert "\\*\\*galaxy survey\\*\\*" in caption and "\\<b\\>" in caption


def test_an_online_author_is_imported_when_added(monkeypatch, fake_server):
    """Asked online (a loopback server in OpenAlex's and Semantic Scholar's shapes), an
    OpenAlex author the store lacks is listed; Add imports them with their works."""
    from tests.test_suggest_online import AUTHORS, EARTH, S2, TOPICS

    olga = AUTHORS["results"][0]
    work = {"id": "https://openalex.org/W4000000001", "title": "Galaxy catalogues read by machines",
            "publication_year": 2024, "topics": [{"id": "https://openalex.org/T11444", "field": EARTH}],
            "authorships": [{"author": {"id": olga["id"], "display_name": olga["display_name"]}}]}
    fake_server.json("/topics", TOPICS)
    fake_server.json("/authors", AUTHORS)
    fake_server.json("/authors/A5000000001", olga)
    fake_server.json("/works", {"meta": {"count": 1}, "results": [work]})
    fake_server.json("/graph/v1/paper/search", S2)
    monkeypatch.setenv("RT_OPENALEX_URL", fake_server.url)
    monkeypatch.setenv("RT_S2_URL", fake_server.url + "/graph/v1")
    at = new_app()
    at.checkbox(key="sg_online").check()
    at = ask(at, TOPIC)
    found = next(p for p in at.session_state["sg_result"]["researchers"] if p["source"] == "openalex")
    at.button(key=f"sg_add_researcher_{found['id']}").click().run()
    assert not at.exception
    assert "openalex:A5000000001" in at.session_state["hood_r"]
    researcher = open_store().corpus.get_researcher("openalex:A5000000001")
    assert researcher.name == "Olga Orbit" and len(researcher.publication_ids) == 1
    assert fake_server.hits("/authors/A5000000001")
