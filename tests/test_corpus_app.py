"""The corpus's integrity through the entry file (AppTest), on a shared server: a stranger's
upload of a bundled paper's id and of a researcher with a taken name changes nothing any
other browser sees, says so once, and what the stranger added is theirs (their search, their
run) until the operator publishes it from the Neighbourhood page. A browser is its owner
cookie, given to a session as `_owner_token` (as tests/test_access_app.py does)."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from rt_core import deployment
from tests.apphelp import APP, errors, goto, module_data_dir, shared_server, shown

data_dir = module_data_dir("corpus-app")
OWNER, STRANGER = "owner-browser-token-00001", "stranger-browser-token-0002"
OPERATOR = "operator-token-for-corpus-tests-03"
SCRIPTED = "Scripted demo model (tests and demos, no real model)"
BUNDLED = "arxiv:2410.16179"


def store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture
def shared(monkeypatch):
    with shared_server(monkeypatch, OPERATOR):
        yield


def browser(token: str, page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["_owner_token"] = token
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return goto(at, page) if page else at


def upload(at: AppTest, body: dict) -> AppTest:
    data = json.dumps(body).encode()
    at.file_uploader(key="imp_upload").set_value(("mine.json", data, "application/json")).run()
    at.button(key="imp_upload_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at: AppTest) -> list[str]:
    return [shown(w.value) for w in at.warning]


def search(at: AppTest, text: str) -> str:
    """The names and titles the Neighbourhood search shows for `text`."""
    at.text_input(key="search_text").input(text).run()
    return "\n".join(t.value for t in at.text)


def test_an_upload_of_a_bundled_id_gets_one_message_and_changes_nothing(shared):
    at = browser(STRANGER)  # its first run loads the starter community
    before = store().corpus.get_paper(BUNDLED)
    upload(at, {"papers": [
        {"title": "POISONED", "arxiv_id": BUNDLED.split(":")[1], "abstract": "POISONED abstract",
         "fields": ["criminology"]}]})
    said = [w for w in warnings(at) if "Already in the store" in w]
    assert len(said) == 1 and "kept as it is" in said[0], warnings(at)
    assert not at.success and not errors(at)  # one message, not "Imported 0 papers" beside it
    assert store().corpus.get_paper(BUNDLED) == before  # its abstract and fields for everybody
    assert BUNDLED in at.session_state["hood_p"]  # the stored paper stands in for the upload's


def test_what_a_stranger_adds_is_theirs_until_the_operator_publishes_it(shared, module_demo):
    operator = browser(OWNER + "-op", operator=OPERATOR)
    upload(operator, {"researchers": [{"name": "Jane Doe", "affiliation": "Good University",
                                       "papers": [{"title": "Sparse attention for long documents",
                                                   "abstract": "We make attention sparse."}]}]})
    stranger = upload(browser(STRANGER), {"researchers": [
        {"name": "JANE DOE", "affiliation": "Fraud Inc", "papers": [
            {"title": "Galaxy spectra read by a fraudulent language model",
             "abstract": "A language model reads galaxy spectra.", "fields": ["nlp"]}]}]})
    assert any("researcher of your own" in i.value for i in stranger.info)
    theirs = [r for r in stranger.session_state["hood_r"] if r.startswith("researcher:jane-doe~")]
    assert len(theirs) == 1

    owner = browser(OWNER)
    assert "Jane Doe" in search(owner, "jane") and "JANE DOE" not in search(owner, "jane")
    assert "fraudulent" not in search(owner, "fraudulent")
    mine = browser(STRANGER)
    assert "JANE DOE" in search(mine, "jane")
    assert any("only it sees this" in c.value for c in mine.caption)
    assert not any("only it sees this" in c.value for c in owner.caption)

    # the stranger's own run uses what they added
    stranger.session_state["hood_r"] = theirs
    goto(stranger, "run")
    stranger.selectbox(key="provider").select(SCRIPTED).run()
    stranger.session_state["num_reviewers"] = 0
    stranger.run()
    stranger.button(key="run_start").click().run()
    assert not stranger.exception and not errors(stranger)
    job = stranger.session_state["jobs"][stranger.session_state["current_run"]]
    assert job.wait(timeout=300) and job.run.status == "done" and theirs[0] in job.run.profiles

    # the operator lists it with who added it, and publishes it for everybody
    operator = browser(OWNER + "-op", operator=OPERATOR)
    added_by = deployment.token_hash(STRANGER)[:8]
    assert any(added_by in c.value and theirs[0] in shown(c.value) for c in operator.caption)
    assert not any(added_by in c.value for c in browser(OWNER).caption)
    operator.button(key=f"publish_researcher_{theirs[0]}").click().run()
    assert not operator.exception
    assert "JANE DOE" in search(browser(OWNER), "jane")
