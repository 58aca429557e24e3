"""The benchmark task queue in the store (store/tasks.py), on both engines."""
from __future__ import annotations

import threading
from collections import Counter

from rt_core.store import Store

TASKS = [{"id": f"t{i}", "paper_id": f"p{i}"} for i in range(40)]


def test_every_task_is_claimed_by_exactly_one_of_many_workers(store_at):
    Store(store_at).bench_tasks.add("b", TASKS)
    claimed: Counter = Counter()
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def worker(n: int) -> None:
        s = Store(store_at)  # its own connection, as a separate process would have
        try:
            start.wait()
            while (task := s.bench_tasks.claim("b", f"w{n}")) is not None:
                claimed[task["id"]] += 1
                assert s.bench_tasks.finish("b", task["id"], f"w{n}", {"status": "done", "n": n})
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert claimed == Counter({t["id"]: 1 for t in TASKS})
    store = Store(store_at)
    assert store.bench_tasks.counts("b") == {"done": 40}
    assert [r["status"] for r in store.bench_tasks.results("b")] == ["done"] * 40
    store.close()


def test_adding_the_same_file_twice_queues_each_task_once(store):
    assert store.bench_tasks.add("b", TASKS[:3]) == 3
    assert store.bench_tasks.add("b", TASKS[:5]) == 2
    assert store.bench_tasks.add("other", TASKS[:1]) == 1  # benches are apart
    assert store.bench_tasks.counts("b") == {"pending": 5}


def test_a_dead_workers_task_is_reclaimed_and_its_late_result_refused(store):
    store.bench_tasks.add("b", TASKS[:1])
    assert store.bench_tasks.claim("b", "dead")["id"] == "t0"
    assert store.bench_tasks.claim("b", "alive") is None  # leased
    store.db.conn.execute("UPDATE bench_tasks SET lease_until=lease_until-1000")  # it ran out
    assert store.bench_tasks.claim("b", "alive")["id"] == "t0"
    assert store.bench_tasks.claim("b", "third") is None  # a live lease is respected
    assert not store.bench_tasks.renew("b", "t0", "dead")
    assert not store.bench_tasks.finish("b", "t0", "dead", {"status": "done", "by": "dead"})
    assert store.bench_tasks.renew("b", "t0", "alive")
    assert store.bench_tasks.finish("b", "t0", "alive", {"status": "failed", "by": "alive"})
    assert store.bench_tasks.results("b") == [{"status": "failed", "by": "alive"}]
    assert store.bench_tasks.claim("b", "third") is None  # finished tasks stay finished
