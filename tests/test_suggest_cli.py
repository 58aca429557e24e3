"""`python -m rt_core suggest` on the starter community: a topic between NLP and astronomy
brings researchers of both, --far-from leaves out whoever works only in that field, and bad
input is one message, not a traceback."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rt_core.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "language models for galaxy surveys"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("suggest-cli") / "store.sqlite3")


def run(capsys, db: str, *args: str) -> tuple[int, str, str]:
    code = main(["--db", db, "suggest", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_topic_between_two_starter_fields_lists_researchers_of_both(capsys, db):
    code, out, err = run(capsys, db, TOPIC, "--limit", "4", "--json")
    assert code == 0, err
    data = json.loads(out)
    fields = set().union(*(set(r["fields"]) for r in data["researchers"]))
    assert {"nlp", "astronomy"} <= fields
    first = data["researchers"][0]
    assert set(first["parts"]) == {"topic", "distance", "bridges"} and first["reason"]
    assert data["papers"] and all(p["kind"] == "paper" and p["label"] for p in data["papers"])


def test_the_listing_has_one_line_per_researcher_then_the_papers(capsys, db):
    code, out, _ = run(capsys, db, TOPIC, "--limit", "3")
    assert code == 0
    lines = out.splitlines()
    start, papers = lines.index("Researchers:"), lines.index("Papers:")
    people = lines[start + 1:papers]
    assert len(people) == 3 and all(line.lstrip()[0].isdigit() and "[" in line for line in people)
    named = [re.search(r"\[([^\]]*)\]", line).group(1) for line in people]  # fields, by name
    assert any("Astronomy & Astrophysics" in f for f in named)
    assert len(lines[papers + 1:]) == 3


def test_far_from_leaves_out_whoever_works_only_in_that_field(capsys, db):
    code, out, err = run(capsys, db, TOPIC, "--far-from", "nlp", "--limit", "8", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["far_from"] == "nlp" and data["researchers"]
    assert all(set(s["fields"]) != {"nlp"} for s in data["researchers"] + data["papers"])


@pytest.mark.parametrize(("args", "words"), [
    (["--seed", "r-nobody"], "No researcher or paper with id 'r-nobody'"),
    (["--far-from", "alchemy"], "No field called 'alchemy'"),
])
def test_an_unknown_seed_or_field_is_one_message(capsys, db, args, words):
    code, out, err = run(capsys, db, TOPIC, *args)
    assert code == 2 and not out
    assert err.startswith(f"error: {words}") and "hint:" in err and "Traceback" not in err


def test_the_module_entry_point_says_what_matched_nothing(db):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "rt_core", "--db", db, "suggest", "zxqv blorp"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Nothing in the store is close to 'zxqv blorp'" in done.stderr
