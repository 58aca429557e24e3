"""`python -m rt_core bench TASKS.jsonl --worker`: workers sharing one store (scripted model)."""
from __future__ import annotations

import json
import threading

from rt_core import community
from rt_core.__main__ import main
from rt_core.models.client import run_async
from rt_core.run.replay import batch as bench
from rt_core.run.replay import batch_workers as bench_workers
from rt_core.store import Store
from rt_core.types import RunConfig, RunRequest

PAPERS = ["arxiv:2410.16179", "arxiv:2312.03876", "no-such-paper"]


def request() -> RunRequest:
    return RunRequest(RunConfig(model="scripted/demo", num_reviewers=0), max_retries=0)


def task_file(tmp_path, ids=PAPERS):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"paper_id": i}) + "\n" for i in ids))
    return path


def test_two_workers_finish_every_task_exactly_once(tmp_path, store_at, demo):
    community.ensure_loaded(Store(store_at))
    tasks = bench.load_tasks(task_file(tmp_path))
    done: dict[str, list[str]] = {"w0": [], "w1": []}
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        store = Store(store_at)
        try:
            run_async(bench_workers.run_worker(tasks, request(), store, "b", modes=["self", "data"],
                                               on_task_done=lambda rec: done[f"w{n}"].append(rec["task_id"])))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(done["w0"] + done["w1"]) == sorted(PAPERS)  # each once, by one of them
    store = Store(store_at)
    assert store.bench_tasks.counts("b") == {"done": 2, "failed": 1}
    assert {r[0] for r in store.db.conn.execute("SELECT attempts FROM bench_tasks")} == {1}
    result = bench_workers.report(store, "b", tmp_path / "out")
    rows = {(r["mode"], r["metric"]): r for r in result.summary}
    assert rows[("self", "mean")]["n"] == 2 and rows[("data", "mean")]["n"] == 2
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["differences"][0]["n"] == 2
    store.close()


def test_a_dead_workers_task_is_redone_by_a_live_one(tmp_path, store, demo):
    community.ensure_loaded(store)
    tasks = bench.load_tasks(task_file(tmp_path, PAPERS[:2]))
    store.bench_tasks.add("b", [{"id": t.id, "paper_id": t.paper_id, "modes": ["self"]} for t in tasks])
    assert store.bench_tasks.claim("b", "died")["id"] == PAPERS[0]
    store.db.conn.execute("UPDATE bench_tasks SET lease_until=lease_until-1000")  # it stopped renewing
    assert run_async(bench_workers.run_worker(tasks, request(), store, "b", modes=["self"])) == 2
    assert store.bench_tasks.counts("b") == {"done": 2}
    attempts = dict(store.db.conn.execute("SELECT task_id, attempts FROM bench_tasks").fetchall())
    assert attempts == {PAPERS[0]: 2, PAPERS[1]: 1}


def test_worker_and_report_on_the_command_line(tmp_path, store_at, demo, capsys):
    tasks = task_file(tmp_path, PAPERS[:1])
    code = main(["--db", str(store_at), "bench", str(tasks), "--worker", "--name", "lab",
                 "--model", "scripted/demo", "--modes", "self,global", "--out", str(tmp_path / "w")])
    out = capsys.readouterr()
    assert code == 0 and "global - self" in out.out
    # ready (model client and MiniLM loaded) before the first claim, so no lease is held
    # while importing; the throughput bench times the workers from this line
    said = [line for line in out.err.splitlines() if line.startswith(("worker ready", "task "))]
    assert said == ["worker ready", f"task {PAPERS[0]}: done"], out.err
    code = main(["--db", str(store_at), "bench", "--report", "lab", "--out", str(tmp_path / "r")])
    out = capsys.readouterr()
    assert code == 0 and "global - self" in out.out and "1 finished task(s)" in out.err
    assert (tmp_path / "r" / "summary.csv").read_text() == (tmp_path / "w" / "summary.csv").read_text()
    assert main(["--db", str(store_at), "bench", "--report", "nothing"]) == 2
    assert "no benchmark named 'nothing'" in capsys.readouterr().err


def test_a_worker_waits_for_a_running_task_whose_worker_died(tmp_path, store, demo, monkeypatch):
    """Nothing left to claim, but a task is running under another worker's lease: the live
    worker waits for that lease instead of stopping, so a dead worker's task is not left
    `running` once the others have emptied the queue."""
    monkeypatch.setenv("RT_TASK_LEASE_SECONDS", "0.3")
    community.ensure_loaded(store)
    tasks = bench.load_tasks(task_file(tmp_path, PAPERS[:2]))
    store.bench_tasks.add("b", [{"id": t.id, "paper_id": t.paper_id, "modes": ["self"]} for t in tasks])
    assert store.bench_tasks.claim("b", "died")["id"] == PAPERS[0]  # and it never renews
    assert run_async(bench_workers.run_worker(tasks, request(), store, "b", modes=["self"])) == 2
    assert store.bench_tasks.counts("b") == {"done": 2}
    assert store.bench_tasks.seconds_to_lease_end("b") is None
