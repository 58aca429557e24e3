"""The Run page, before Start, through the entry file (AppTest): with the embedded base
model (it writes from facets), a long-shot neighbourhood is told so, with researchers who
would give a bridge, and "Add ..." puts one of them (and nothing else) in the neighbourhood;
a model that writes its own prose is told nothing."""
from __future__ import annotations

from tests.apphelp import goto, module_data_dir, new_app, shown

data_dir = module_data_dir("hints-app")
LONG_SHOT = ["r-huh-june", "r-papachristos-andrew"]  # mathematics x criminology


def _warned(at) -> str:
    return "\n".join(shown(w.value) for w in at.info)


def test_a_long_shot_is_told_on_the_run_page_and_add_puts_the_researcher_in(module_demo):
    at = new_app()
    at.session_state["hood_r"] = list(LONG_SHOT)
    at.session_state["hood_p"] = []
    goto(at, "run")
    assert "No bridge offline" in _warned(at) and "long shot" in _warned(at)
    adds = [b for b in at.button if str(b.key).startswith("bridge_add_")]
    assert 1 <= len(adds) <= 3 and all(b.label.startswith("Add ") for b in adds)
    lines = [t.value for t in at.text if "can run on" in t.value]
    assert len(lines) == len(adds)
    who = adds[0].key.removeprefix("bridge_add_")
    adds[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["hood_r"] == [*LONG_SHOT, who] and at.session_state["hood_p"] == []
    # Added, the researcher gives the offline writer its bridge, and the page says which.
    assert "No bridge offline" not in _warned(at)
    assert any(shown(c.value).startswith("Offline bridge: ") for c in at.caption)
    # A model that writes its own prose from a prompt gets no word on facets' bridges.
    at.session_state["hood_r"] = list(LONG_SHOT)
    at.session_state["model"] = "scripted/demo"
    at.run()
    assert "No bridge offline" not in _warned(at)
    assert not any(str(b.key).startswith("bridge_add_") for b in at.button)
