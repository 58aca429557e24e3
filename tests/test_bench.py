"""`python -m rt_core bench`: task files, resume, intervals, outputs (scripted model)."""
from __future__ import annotations

import json

import pytest

from rt_core import community as starter
from rt_core.errors import InputError
from rt_core.models.client import run_async
from rt_core.run.replay import batch as bench
from rt_core.types import RunConfig, RunRequest

TASKS = ["arxiv:2410.16179", "arxiv:2312.03876"]


def request() -> RunRequest:
    return RunRequest(RunConfig(model="scripted/demo", num_reviewers=0), max_retries=0)


def write_tasks(path, ids):
    path.write_text("".join(json.dumps({"paper_id": i}) + "\n" for i in ids))
    return path


@pytest.mark.parametrize("text,message", [
    ('{"paper_id": "a"}\nnot json\n', ":2: not valid JSON"),
    ('{"authors": ["x"]}\n', "needs a 'paper_id'"),
    ('{"paper_id": "a"}\n{"paper_id": "a"}\n', "appears twice"),
    ("\n# only a comment\n", "holds no tasks"),
])
def test_bad_task_files_get_one_clear_message(tmp_path, text, message):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        bench.load_tasks(path)


def test_the_shipped_task_file_names_every_replay_target():
    from pathlib import Path

    tasks = bench.load_tasks(Path(__file__).parents[1] / "bench/tasks/replay_targets.jsonl")
    assert [t.paper_id for t in tasks] == [t["paper_id"] for t in starter.replay_targets()]


def test_bench_writes_outputs_and_resumes_without_redoing_finished_tasks(tmp_path, starter_store, demo):
    tasks = bench.load_tasks(write_tasks(tmp_path / "t.jsonl", TASKS))
    out = tmp_path / "out"
    # An earlier benchmark finished the first task and died while writing the second.
    first = run_async(bench.run_bench(tasks[:1], request(), starter_store, out, modes=["self", "data"]))
    assert first.skipped == 0 and first.records[0]["status"] == "done"
    with (out / "results.jsonl").open("a") as fh:
        fh.write('{"task_id": "arxiv:2312.03876", "rows": [')  # cut off mid-line
    calls = len(demo.history)
    done = []
    result = run_async(bench.run_bench(tasks, request(), starter_store, out, modes=["self", "data"],
                                       on_task_done=done.append))
    assert result.skipped == 1 and [r["task_id"] for r in done] == ["arxiv:2312.03876"]
    prompts = [h["messages"][-1]["content"] for h in demo.history[calls:]]
    assert prompts and all("MagicPIG" not in p for p in prompts)
    # Per mode and metric, over both tasks, with an interval around the mean.
    rows = {(r["mode"], r["metric"]): r for r in result.summary}
    assert rows[("self", "mean")]["n"] == 2 and rows[("data", "q3")]["n"] == 2
    for r in result.summary:
        if r["ci_low"] is not None:
            assert r["ci_low"] <= r["mean"] <= r["ci_high"]
    assert [d["comparison"] for d in result.differences] == ["data - self"]
    csv_text = (out / "summary.csv").read_text()
    assert csv_text.splitlines()[0] == "evaluator,mode,metric,n,mean,ci_low,ci_high"
    data = json.loads((out / "summary.json").read_text())
    assert len(data["tasks"]) == 2 and data["differences"][0]["n"] == 2
    # Running again does nothing new.
    calls = len(demo.history)
    again = run_async(bench.run_bench(tasks, request(), starter_store, out, modes=["self", "data"]))
    assert again.skipped == 2 and len(demo.history) == calls
    assert "data - self" in bench.table(again)


def test_a_failing_task_is_recorded_and_the_rest_finish(tmp_path, starter_store, demo):
    tasks = bench.load_tasks(write_tasks(tmp_path / "t.jsonl", ["no-such-paper", TASKS[0]]))
    result = run_async(bench.run_bench(tasks, request(), starter_store, tmp_path / "o", modes=["self"]))
    status = {r["task_id"]: r["status"] for r in result.records}
    assert status == {"no-such-paper": "failed", TASKS[0]: "done"}
    assert "failed: no-such-paper" in bench.table(result)


def test_bootstrap_interval():
    lo, hi = bench.bootstrap_ci([0.1, 0.2, 0.3, 0.4, 0.5])
    assert lo < 0.3 < hi and lo >= 0.1 and hi <= 0.5
    assert bench.bootstrap_ci([0.4]) == (None, None)


def test_cli_bench_prints_a_table_and_writes_files(tmp_path, demo, capsys):
    from rt_core.__main__ import main

    db = tmp_path / "cli.sqlite3"
    tasks = write_tasks(tmp_path / "t.jsonl", TASKS)
    code = main(["--db", str(db), "bench", str(tasks), "--model", "scripted/demo",
                 "--modes", "self,global", "--out", str(tmp_path / "res"), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0
    assert "global - self" in out.out and "evaluator: local/all-MiniLM-L6-v2" in out.out
    assert (tmp_path / "res" / "summary.csv").exists()
    assert main(["--db", str(db), "bench", str(tasks), "--modes", "self,nonsense"]) == 2
    assert "unknown mode" in capsys.readouterr().err


def test_cli_replay_shows_modes_and_the_chance_band(tmp_path, demo, capsys):
    from rt_core.__main__ import main

    code = main(["--db", str(tmp_path / "r.sqlite3"), "replay", TASKS[0], "--model", "scripted/demo",
                 "--modes", "self,data"])
    out = capsys.readouterr().out
    assert code == 0
    assert "evaluator: local/all-MiniLM-L6-v2; reference: shipped summary" in out
    assert out.count("\tdone") == 2 and "chance\tmedian" in out
