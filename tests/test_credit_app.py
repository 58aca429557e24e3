"""The Results page's provenance chips and the credit view (AppTest)."""
from __future__ import annotations

import json

import pytest

from rt_core.types import RunConfig, RunRequest
from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("credit-app")
AUTHORS = ["r-neubig-graham", "r-chen-beidi", "r-zhao-wayne-xin"]


@pytest.fixture(scope="module")
def finished(module_demo):
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import open_store

    s = open_store()
    community.ensure_loaded(s)
    papers = community.preset("nlp-astronomy")["paper_ids"][:3]
    config = RunConfig(model="scripted/demo", researcher_ids=AUTHORS, paper_ids=papers, num_reviewers=1)
    run = Simulation(RunRequest(config, max_retries=0), s).run_sync()
    assert run.status == "done", run.errors
    return run


def _results(run_id: str):
    at = new_app()
    at.session_state["results_run"] = run_id
    return goto(at, "results")


def _rings(at) -> int:
    """How many nodes of the community graph are ringed (charts.HIGHLIGHT_RING)."""
    from studio.charts import HIGHLIGHT_RING

    spec = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if "generated paper" in c.proto.spec))
    colours = [t.get("marker", {}).get("line", {}).get("color") for t in spec["data"]]
    return sum(c.count(HIGHLIGHT_RING) for c in colours if isinstance(c, list))


def test_sources_show_as_chips_that_highlight_the_graph(finished):
    at = _results(finished.id)
    key = f"prov_chip_{finished.id}_q1"
    chips = at.button_group(key=key)
    options = [o.content for o in chips.proto.options]
    assert len(options) >= 4 and any("Graham Neubig · 0." in o for o in options)
    assert any(o.startswith("WebArena") for o in options)  # a paper, by its title
    assert _rings(at) == 0
    assert not _after(at, key)  # nothing said until a chip is chosen
    chips.set_value("r-neubig-graham").run()
    assert not at.exception
    assert _rings(at) == 1
    # The graph is far down the page: the line right under the chip says what happened.
    said = _after(at, key)
    assert "Graham Neubig is ringed in the" in shown(said) and "#community-graph-with-the-new-paper" in said


def _after(at, key: str) -> str:
    """The caption drawn right after the element with `key` ('' when the next is none)."""
    flat: list = []

    def walk(node) -> None:
        for i in sorted(getattr(node, "children", {}) or {}):
            child = node.children[i]
            flat.append(child)
            walk(child)

    walk(at.main)
    at_key = next(i for i, n in enumerate(flat) if getattr(n, "key", None) == key)
    nxt = flat[at_key + 1] if at_key + 1 < len(flat) else None
    return nxt.value if type(nxt).__name__ == "Caption" else ""


def test_credit_shows_the_estimate_then_bars_and_sentences(finished, module_demo):
    at = _results(finished.id)
    captions = shown(" ".join(c.value for c in at.caption))
    assert "Leave-one-out: 3 re-writings" in captions
    before = len(module_demo.history)
    at.button(key=f"credit_go_{finished.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(module_demo.history) > before
    sentences = [t.value for t in at.text if t.value.startswith("Without ")]
    assert len(sentences) == 3
    # A score change is said as a change without them, never as a bare signed score.
    changes = [t for t in sentences if "mean review score" in t]
    assert changes and all("; without them the mean review score changes by " in t
                           and t.endswith(".") and "(mean review score" not in t for t in changes)
    assert any("credit_bars" in str(c.proto.id) or "distance from the full" in c.proto.spec
               for c in at.get("plotly_chart"))


def test_a_one_author_run_says_why_there_is_no_credit(module_demo):
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import open_store

    s = open_store()
    config = RunConfig(model="scripted/demo", researcher_ids=AUTHORS[:1], num_reviewers=0)
    run = Simulation(RunRequest(config, max_retries=0), s).run_sync()
    at = _results(run.id)
    assert any("nothing to compare" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == f"credit_go_{run.id}"]
