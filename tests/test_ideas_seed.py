"""Continue from an idea (rt_core/ideas/seed.py): the idea's neighbourhood plus the papers
nearest its problem, its Q1 as the topic; a deleted run's idea and an unknown id are one
message each, from the core and from the command line."""
from __future__ import annotations

import json

import pytest

from rt_core.__main__ import main
from rt_core.access import Viewer
from rt_core.errors import NotFoundError
from rt_core.ideas.bank import Bank
from rt_core.ideas.seed import seed_from
from tests.test_ideas_bank import _brainstorm


def _nearest(text: str, k: int) -> list[str]:
    return ["p-spectra", "p-gaia", "p-unknown"][:k] if "telescope" in text else []


def test_the_seed_is_the_ideas_neighbourhood_and_the_papers_nearest_its_problem(community):
    community.runs.create(_brainstorm("src", "2026-01-01T00:00:00+00:00"))
    bank = Bank(community, lambda texts: [[1.0, 0.0] for _ in texts], model="test")
    seed = seed_from(community, bank, Viewer(), "src:c1", _nearest)
    assert seed.topic.startswith("Can telescope time") and seed.run_id == "src"
    assert seed.researcher_ids == ("r-ada",)
    assert seed.paper_ids == ("p-gaia", "p-spectra", "p-unknown") and seed.nearest == ("p-spectra", "p-unknown")
    assert seed.command().endswith("--researchers r-ada --papers p-gaia,p-spectra,p-unknown --from-idea src:c1")


def test_a_deleted_runs_idea_and_an_unknown_id_are_one_message_each(community, capsys):
    community.runs.create(_brainstorm("gone", "2026-01-01T00:00:00+00:00"))
    bank = Bank(community, lambda texts: [[1.0, 0.0] for _ in texts], model="test")
    community.runs.delete("gone")
    with pytest.raises(NotFoundError, match="came from run gone, which was deleted"):
        seed_from(community, bank, Viewer(), "gone:c1", _nearest)
    with pytest.raises(NotFoundError, match="no idea nothing"):
        seed_from(community, bank, Viewer(), "nothing", _nearest)
    db = str(community.db.url or community.db.path)
    assert main(["--db", db, "ideas", "continue", "gone:c2"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "which was deleted" in err and "Traceback" not in err


def test_the_command_line_prints_the_seed(community, capsys):
    community.runs.create(_brainstorm("src", "2026-01-01T00:00:00+00:00"))
    db = str(community.db.url or community.db.path)
    assert main(["--db", db, "ideas", "continue", "src:c2", "--json"]) == 0
    seed = json.loads(capsys.readouterr().out)
    assert seed["idea_id"] == "src:c2" and seed["researcher_ids"] == ["r-ada"] and "p-gaia" in seed["paper_ids"]


def test_a_run_from_the_command_line_stores_the_idea_it_continues(community, demo, capsys):
    """`run --from-idea ID`: the run stores the idea; a deleted run's idea is one message and no
    run. Planted: the --from-idea handling removed from cmd_run (fails: the config has none)."""
    community.runs.create(_brainstorm("src", "2026-01-01T00:00:00+00:00"))
    db = str(community.db.url or community.db.path)
    base = ["--db", db, "run", "--model", "scripted/demo", "--researchers", "r-ada,r-nia", "--papers", "p-gaia",
            "--reviewers", "1"]
    before = {r["id"] for r in community.runs.list()}
    assert main([*base, "--from-idea", "src:c1"]) == 0
    made = [r["id"] for r in community.runs.list() if r["id"] not in before]
    assert len(made) == 1 and community.runs.load(made[0]).config.from_idea == "src:c1"
    community.runs.delete("src")
    capsys.readouterr()
    assert main([*base, "--from-idea", "src:c1"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "which was deleted" in err and "Traceback" not in err
    assert len({r["id"] for r in community.runs.list()} - before) == 1  # no second run
