"""A reload brings back the neighbourhood this browser was building (AppTest through app.py).

AppTest has no cookies: a session is given the token its owner cookie would hold
(`_owner_token`), and a new AppTest with the same token is the same browser after a reload."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from rt_core import community
from tests.apphelp import APP, PRESET, module_data_dir

data_dir = module_data_dir("kept-hood")
MINE, THEIRS = "browser-a-owner-token-0101", "browser-b-owner-token-0102"
LINKED, EMPTIED, STALE = "browser-c-owner-token-0103", "browser-d-owner-token-0104", "browser-e-owner-token-0105"


def browser(token: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["_owner_token"] = token  # what this browser's cookie holds
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def hood(at: AppTest) -> tuple[list[str], list[str]]:
    return list(at.session_state["hood_r"]), list(at.session_state["hood_p"])


def test_a_reload_brings_the_neighbourhood_back_to_its_browser_only():
    at = browser(MINE)
    at.button(key=f"preset_{PRESET}").click().run()
    preset = community.preset(PRESET)
    assert hood(at) == (preset["researcher_ids"], preset["paper_ids"])
    dropped = preset["researcher_ids"][0]
    at.session_state["hood_r"] = preset["researcher_ids"][1:]  # a change after the preset, kept too
    at.run()

    again = browser(MINE)  # the same browser, reloaded
    assert hood(again) == (preset["researcher_ids"][1:], preset["paper_ids"])
    assert dropped not in hood(again)[0]
    assert any("neighbourhood is back" in t.value for t in again.toast)
    assert hood(browser(THEIRS)) == ([], []), "another browser got this one's neighbourhood"


def test_a_share_links_neighbourhood_wins_over_the_kept_one():
    at = browser(LINKED)
    at.button(key=f"preset_{PRESET}").click().run()
    other = community.preset("nlp-biology")
    linked = browser(LINKED, r=",".join(other["researcher_ids"]))
    assert hood(linked) == (other["researcher_ids"], [])
    assert not linked.toast


def test_an_emptied_neighbourhood_stays_empty_after_a_reload():
    at = browser(EMPTIED)
    at.button(key=f"preset_{PRESET}").click().run()
    at.session_state["hood_r"], at.session_state["hood_p"] = [], []
    at.run()
    assert hood(browser(EMPTIED)) == ([], [])


def test_what_left_the_store_since_is_dropped_and_said():
    from rt_core.store import open_store

    preset = community.preset(PRESET)
    open_store().neighbourhoods.keep(identity_hash(STALE), [*preset["researcher_ids"][:2], "r-no-longer-here"], [])
    again = browser(STALE)
    assert hood(again) == (preset["researcher_ids"][:2], [])
    assert any("1 no longer in the store left out" in t.value for t in again.toast)


def identity_hash(token: str) -> str:
    from rt_core import deployment

    return deployment.token_hash(token)

