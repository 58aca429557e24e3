import json
import os
import subprocess
import sys
from pathlib import Path

from rt_core.__main__ import main
from rt_core.models.scripted import demo_responder

ROOT = Path(__file__).resolve().parents[1]
REF = """Title: Star maps
[Question 1] What is the problem?
How can we map the stars of the galactic disk?
[Question 2] Why is it interesting and important?
It tells us how the galaxy formed.
[Question 3] Why is it hard?
Distances are noisy.
[Question 4] Why hasn't it been solved before?
Surveys were too small.
[Question 5] What are the key components of my approach and results?
We combine kinematic models with a new survey.
"""
GEN = """### Q1
How can we chart stars in the Milky Way disk?
### Q2
It explains the formation of our galaxy.
### Q3
Measurements of distance carry noise.
### Q4
Earlier surveys lacked coverage.
### Q5
A kinematic model fitted to survey data.
"""


def cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rt_core", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def test_similarity_reads_two_heading_styles_and_prints_each_question(tmp_path):
    (tmp_path / "ref.md").write_text(REF)
    out = cli("similarity", str(tmp_path / "ref.md"), "-", "--json", stdin=GEN)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["per_question"]) == {"q1", "q2", "q3", "q4", "q5"}
    assert 0.3 < data["mean"] <= 1.0
    assert data["embedder"] == "local/all-MiniLM-L6-v2"


def test_similarity_with_no_questions_exits_non_zero_with_a_clear_message(tmp_path):
    (tmp_path / "ref.md").write_text(REF)
    (tmp_path / "junk.txt").write_text("just some prose without any structure")
    out = cli("similarity", str(tmp_path / "ref.md"), str(tmp_path / "junk.txt"))
    assert out.returncode == 2
    assert "no recognisable questions" in out.stderr and "hint:" in out.stderr


def test_similarity_missing_file():
    out = cli("similarity", "nope.md", "nope2.md")
    assert out.returncode == 2 and "no such file" in out.stderr


def test_run_writes_json_and_markdown_and_reports_progress(tmp_path, scripted, capsys, monkeypatch):
    scripted.responder = demo_responder
    monkeypatch.setenv("RT_TEST_KEY", "sk-cli-secret-77")
    db = tmp_path / "cli.sqlite3"
    code = main(["--db", str(db), "run", "--model", "scripted/demo", "--api-key-env", "RT_TEST_KEY",
                 "--researchers",
                 "r-neubig-graham,r-ivezic-zeljko", "--papers", "arxiv:2307.13854",
                 "--reviewers", "1", "--out-json", str(tmp_path / "run.json"),
                 "--out-md", str(tmp_path / "run.md")])
    assert code == 0
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "done" and run["proposal"]["q1"]
    assert scripted.history[0]["model"]  # the run did call the model with the key ...
    for path in [tmp_path / "run.json", tmp_path / "run.md", *tmp_path.glob("cli.sqlite3*")]:
        assert b"sk-cli-secret-77" not in path.read_bytes()  # ... and wrote it nowhere
    md = (tmp_path / "run.md").read_text()
    assert "[Question 1]" in md and "Review by" in md
    assert "[write] aggregator done" in capsys.readouterr().err


def test_run_from_a_json_file_of_researchers_and_papers(tmp_path, scripted):
    scripted.responder = demo_responder
    data = {"papers": [{"id": "x1", "title": "Coral reef acoustics", "abstract": "Reefs make sound.",
                        "year": 2020},
                       {"id": "x2", "title": "Acoustic monitoring at scale", "abstract": "Cheap sensors.",
                        "year": 2021}],
            "researchers": [{"id": "rx", "name": "Rae Reef", "publication_ids": ["x1", "x2"]}]}
    (tmp_path / "in.json").write_text(json.dumps(data))
    code = main(["--db", str(tmp_path / "db.sqlite3"), "run", "--model", "scripted/demo", "--input",
                 str(tmp_path / "in.json"), "--reviewers", "0", "--out-json", str(tmp_path / "o.json")])
    assert code == 0
    assert json.loads((tmp_path / "o.json").read_text())["config"]["researcher_ids"] == ["rx"]


def test_run_input_whose_paper_merges_into_a_stored_one(tmp_path, scripted):
    """A researcher's paper that matches a stored paper (same arXiv id, another local id) is
    merged; the researcher must link to the stored id instead of failing with 'unknown paper id'
    (the CLI had its own copy of the import and got this wrong)."""
    scripted.responder = demo_responder
    db = tmp_path / "db.sqlite3"
    data = {"papers": [{"id": "my-copy", "title": "WebArena: a realistic web environment",
                        "arxiv_id": "2307.13854", "abstract": "Agents on websites.", "year": 2023}],
            "researchers": [{"id": "rx", "name": "Rae Web", "publication_ids": ["my-copy"]}]}
    (tmp_path / "in.json").write_text(json.dumps(data))
    code = main(["--db", str(db), "run", "--model", "scripted/demo", "--input",
                 str(tmp_path / "in.json"), "--reviewers", "0", "--out-json", str(tmp_path / "o.json")])
    assert code == 0
    out = json.loads((tmp_path / "o.json").read_text())
    assert out["status"] == "done"
    assert out["config"]["paper_ids"] == ["arxiv:2307.13854"]  # the stored (starter) record
    from rt_core.store import open_store

    assert "arxiv:2307.13854" in open_store(db).corpus.get_researcher("rx").publication_ids


def test_run_with_unknown_id_is_a_clear_error(tmp_path, capsys, scripted):
    code = main(["--db", str(tmp_path / "db.sqlite3"), "run", "--model", "scripted/demo",
                 "--researchers", "r-nobody", "--papers", "arxiv:2307.13854"])
    assert code == 2
    assert "Unknown researcher id(s): r-nobody" in capsys.readouterr().err
    assert scripted.history == []


def test_review_similarity_reports_recall_and_delta_s(tmp_path):
    (tmp_path / "ref.txt").write_text("Strengths:\n- Clear question about star maps.\n- Good data.\n"
                                      "Weaknesses:\n- No baseline.\nScore: 6")
    (tmp_path / "gen.txt").write_text("**Strengths**\n- The star-map question is clear.\n"
                                      "**Weaknesses**\n- Baselines are missing.\n- Small sample.\n"
                                      "Overall score (1-10): 4")
    out = cli("review-similarity", str(tmp_path / "ref.txt"), str(tmp_path / "gen.txt"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["delta_s"] == 2.0
    assert 0.3 < data["strengths"] <= 1 and 0.3 < data["weaknesses"] <= 1


def test_review_similarity_without_parts_is_a_clear_error(tmp_path):
    (tmp_path / "a.txt").write_text("Strengths:\n- fine\nScore: 5")
    out = cli("review-similarity", str(tmp_path / "a.txt"), "-", stdin="no structure at all")
    assert out.returncode == 2 and "no Strengths or Weaknesses" in out.stderr


def test_similarity_with_an_llm_judge(tmp_path, openai_server):
    openai_server.enqueue('{"topic": 8, "method": 7, "factual": 6, "claim": 6, '
                          '"application_context": 7, "overall": 7, "novelty_reference": 6, '
                          '"feasibility_reference": 8, "novelty_generated": 7, '
                          '"feasibility_generated": 6, "rationale": "close"}')
    (tmp_path / "ref.md").write_text(REF)
    (tmp_path / "gen.md").write_text(GEN)
    env_key = "RT_JUDGE_KEY"
    os.environ[env_key] = "sk-judge"
    try:
        out = cli("similarity", str(tmp_path / "ref.md"), str(tmp_path / "gen.md"), "--json",
                  "--judge", "--model", "openai/judge", "--base-url", openai_server.base_url,
                  "--api-key-env", env_key)
    finally:
        os.environ.pop(env_key)
    assert out.returncode == 0, out.stderr
    judged = json.loads(out.stdout)["judge"]
    assert judged["topic"] == 8 and judged["feasibility_generated"] == 6
    prompt = openai_server.chat_requests()[0]["body"]["messages"][-1]["content"]
    assert "How can we map the stars" in prompt and "chart stars in the Milky Way" in prompt


def test_judge_refuses_the_tiny_base_model(tmp_path):
    (tmp_path / "ref.md").write_text(REF)
    out = cli("similarity", str(tmp_path / "ref.md"), "-", "--judge", stdin=GEN)
    assert out.returncode == 2 and "instruction-following" in out.stderr


def test_markdown_export_includes_every_evaluation():
    from rt_core.export.run import run_markdown
    from rt_core.types import MetaReview, Proposal, Review, Run, RunConfig, Similarity

    run = Run(id="r1", config=RunConfig(), status="done", proposal=Proposal(q1="How can we?"),
              reviews=[Review("rev", "- good", "- thin", 6)], meta_review=MetaReview("s", "w", 6.0),
              similarity=Similarity({"q1": 0.5}, 0.5, "local/x"),
              judge={"topic": 7, "rationale": "close enough"},
              review_similarity={"strengths": 0.61, "weaknesses": None, "delta_s": 1.0})
    md = run_markdown(run)
    for expected in ("How can we?", "Review by rev (score 6)", "mean: 0.500", "topic: 7",
                     "close enough", "strengths: 0.610", "weaknesses: -", "delta_s: 1.000"):
        assert expected in md, expected


def test_search_finds_researchers_by_topic_and_says_why(tmp_path, capsys):
    db = str(tmp_path / "db.sqlite3")
    assert main(["--db", db, "search", "brain", "--researchers", "--limit", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[0].split("\t")
    assert "neuroscience" in first[2] and first[3].startswith("works on this:")
    assert main(["--db", db, "search", "xyzzy qwertzuiop"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "Nothing in the store matches" in captured.err
