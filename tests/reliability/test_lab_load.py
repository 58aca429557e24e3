"""A lab on one machine: three `streamlit run` servers behind the shipped nginx config
(docs/lab/nginx.conf, sticky by cookie) and two benchmark workers, all on one PostgreSQL.

Six raters, each in a browser context of their own and pinned two per server, rate a
pairwise study while a 20-task benchmark runs against a loopback model server. One app
server is SIGKILLed right after the K-th answer (its raters reopen the link, land on a
live server and go on where they were), one worker while the model server holds the reply
to its first call (that in-flight task is redone by the other worker once the lease runs
out). Then: every answer stored exactly once, every task finished exactly once, no run left
`running`, and the study's statistics identical to a recomputation from what the raters
clicked.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rt_core.models.scripted import demo_responder
from rt_core.store import Store
from rt_core.store.study_types import StudySettings
from rt_core.study import results, stats
from rt_core.study.create import create_from_runs
from tests.nginxproc import Nginx
from tests.openai_server import OpenAIServer
from tests.pgserver import PgServer, pg_bin
from tests.reliability.apphelp import ROOT
from tests.test_browser import CHROMIUM, LAUNCH_ARGS, expect, start_server, stop_server, sync_api
from tests.test_study import seed_runs
from tests.test_study_browser import confide, expect_choices, idle, join, press_fast

pytestmark = [pytest.mark.reliability, pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(pg_bin() is None, reason="PostgreSQL is not installed")]

RATERS = ("ann", "bob", "cat", "dan", "eve", "fay")
KILL_APP_AFTER = 7  # answers stored in all
N_TASKS = 20
OPERATOR_TOKEN = "lab-operator-token-0123456789abcdef"  # README: one RT_OPERATOR_TOKEN for every app server
PICK = {"left": "ArrowLeft", "right": "ArrowRight", "tie": "t"}
CHOICE_LABEL = {"left": "Left is stronger", "right": "Right is stronger", "tie": "Tie"}


def decide(rater: int, item: int) -> str:
    """What a rater picks on an item (all criteria alike): varied, so the ranking has work."""
    return ("left", "right", "left", "tie")[(rater + item) % 4]


def task_file(path: Path) -> Path:
    papers = [json.loads(line)["paper_id"] for line in (ROOT / "bench/tasks/replay_targets.jsonl").open()]
    path.write_text("".join(json.dumps({"paper_id": papers[i % len(papers)], "id": f"lab-{i:02d}"}) + "\n"
                            for i in range(N_TASKS)))
    return path


def worker_key(n: int) -> str:
    """Each worker sends its own key, so the model server can tell their calls apart."""
    return f"sk-lab-FAKE-{n}"


def start_worker(url: str, tasks: Path, model_url: str, log: Path, n: int) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT),
               RT_TASK_LEASE_SECONDS="10", LAB_KEY=worker_key(n))
    env.pop("RT_DB", None)
    return subprocess.Popen([sys.executable, "-m", "rt_core", "--db", url, "bench", str(tasks), "--worker",
                             "--name", "lab", "--model", "openai/lab-model", "--base-url", model_url,
                             "--api-key-env", "LAB_KEY", "--out", str(log.parent / f"{log.stem}-out"),
                             "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def hold_first_calls(model: OpenAIServer, n_workers: int) -> list:
    """Hold every worker's model replies (told apart by their keys) from its first call on,
    until released: made before the workers start."""
    return [model.hold(match=lambda h, n=n: h.get("authorization") == f"Bearer {worker_key(n)}")
            for n in range(n_workers)]


def kill_in_first_task(doomed: subprocess.Popen, holds: list, log: Path, seen: dict) -> threading.Thread:
    """SIGKILL the doomed worker while the model server holds the reply to its first call, so
    it dies inside a task it has claimed; then let the replies go. The other worker's replies
    are held until then too: it cannot have finished a task yet, so the doomed worker's task is
    one nobody has cached and its call certainly comes. (Killing on the worker's "task ...:
    done" line raced its next claim, and a worker that came late to the queue found only
    cached tasks: no call in flight to kill it in.)"""
    def watch() -> None:
        if holds[0].wait(timeout=600):
            os.killpg(doomed.pid, signal.SIGKILL)
            seen["killed"] = True
        for hold in holds:
            hold.release()
        with log.open("w") as out:
            for line in doomed.stderr:
                out.write(line)
                if line.startswith("task ") and line.rstrip().endswith(": done"):
                    seen.setdefault("done", []).append(line.split()[1].rstrip(":"))
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def pinned_cookies(nginx: Nginx, upstreams: list[str]) -> list[str]:
    """Two sticky ids per app server, found by asking nginx (its access log names the server)."""
    want = {u: [] for u in upstreams}
    i = 0
    while any(len(v) < 2 for v in want.values()):
        sticky = f"rater-{i}"
        up = nginx.upstream_for(sticky)
        if len(want[up]) < 2:
            want[up].append(sticky)
        i += 1
        assert i < 500, want
    return [want[u][n] for n in range(2) for u in upstreams]  # ann->s0, bob->s1, cat->s2, dan->s0 ...


def rate_one(page, rater: int, item: int, log: list) -> bool:
    """Answer the item on screen; True when the rater's session is over.

    Each step waits on what the page shows, not on time: Submit is pressed once the page shows
    every shortcut applied and no run is under way; then the page shows the next item or says
    the item was not saved (which fails here with the page's words, at once)."""
    choice = decide(rater, item)
    press_fast(page, item, [PICK[choice]] * 3)
    expect_choices(page, [CHOICE_LABEL[choice]] * 3)
    page.get_by_role("textbox", name="Rationale (a sentence or two)").fill(f"{RATERS[rater]} {item}")
    confide(page)
    idle(page)
    page.get_by_role("button", name="Submit and go on").click()
    done, unsaved = page.get_by_text("All done"), page.get_by_text("Not saved")
    expect(done.or_(page.get_by_text(f"Item {item + 1} of")).or_(unsaved)).to_be_visible(timeout=60_000)
    assert not unsaved.count(), page.get_by_test_id("stMain").inner_text()
    log.append((RATERS[rater], item, choice))
    return done.is_visible()


def rejoin(page, link: str, rater: str, item: int) -> None:
    """The rater reloads the link after their server died: nginx sends them to a live one,
    where the same rater id resumes at the first item not yet answered."""
    page.goto(link)
    expect(page.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
    page.get_by_role("textbox", name="Your rater id").fill(rater)
    page.get_by_role("button", name="Start or resume").click()
    expect(page.get_by_text(f"Item {item} of")).to_be_visible(timeout=60_000)


def roles_through_the_proxy(browser, url: str) -> None:
    """The lab's servers (loopback, no RT_SHARED) are shared through nginx: a visitor's History
    lists none of the study's runs; the operator's link (the one token of every server) lists all."""
    for link, words in ((f"{url}/history", "this server is shared"),
                        (f"{url}/history?operator={OPERATOR_TOKEN}", "All runs in the store")):
        ctx = browser.new_context(viewport={"width": 1300, "height": 900})
        page = ctx.new_page()
        page.goto(link)
        expect(page.get_by_text(words)).to_be_visible(timeout=60_000)
        if "operator=" not in link:
            expect(page.get_by_text("All runs in the store")).to_have_count(0)
        ctx.close()


def recomputed(store, sid: str, log: list) -> tuple:
    """Bradley-Terry and alpha from the raters' own clicks, joined with which arm each side showed."""
    items = store.studies.items(sid)
    sides = {(r["rater_id"], r["position"]): r for r in store.db.conn.execute(
        "SELECT rater_id, position, unit_id, shown_left, shown_right FROM study_assignments WHERE study_id=?",
        (sid,)).fetchall()}
    criteria = sorted(c.name for c in store.studies.get(sid)["settings"].criteria)
    votes = []
    for rater, item, choice in sorted(log):
        a = sides[(rater, item)]
        for c in criteria:
            votes.append(stats.Vote(a["unit_id"], c, rater, items[a["shown_left"]].arm,
                                    items[a["shown_right"]].arm, choice))
    return stats.bradley_terry(votes, n_boot=50), stats.vote_alpha(votes)


def test_three_app_servers_two_workers_one_postgres_with_kills(tmp_path):
    pg = PgServer()
    model = OpenAIServer(responder=lambda messages: demo_responder(messages, {}), latency=0.05)
    apps, workers, nginx = [], [], None
    t0 = time.perf_counter()
    try:
        pg.create_template()
        url = pg.fresh_database()
        store = Store(url)
        study = create_from_runs(store, seed_runs(store), StudySettings(
            name="Lab load study", raters_per_unit=2, max_units_per_rater=4))
        sid = study["id"]
        for n in range(3):
            data = tmp_path / f"app{n}"
            data.mkdir()
            apps.append(start_server(data, tmp_path / f"app{n}.log", own_group=True, env={  # as the README's step 2
                "RT_DB": url, "RT_OPERATOR_TOKEN": OPERATOR_TOKEN, "RT_SHARED": None, "RT_DEMO": None,
                "HF_HUB_OFFLINE": "1"}))
        upstreams = [u.removeprefix("http://") for _, u in apps]
        nginx = Nginx(upstreams).start()
        cookies = pinned_cookies(nginx, upstreams)
        tasks = task_file(tmp_path / "lab.jsonl")
        doomed_seen: dict = {}
        holds = hold_first_calls(model, 2)
        workers = [start_worker(url, tasks, model.base_url, tmp_path / f"worker{n}.log", n) for n in range(2)]
        watcher = kill_in_first_task(workers[0], holds, tmp_path / "worker0.log", doomed_seen)
        survivor_log: list[str] = []
        survivor = threading.Thread(target=lambda: survivor_log.extend(workers[1].stderr), daemon=True)
        survivor.start()

        rater_link = f"{nginx.url}/?study={study['code']}"
        log: list[tuple[str, int, str]] = []
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            pages = []
            for n, rid in enumerate(RATERS):
                ctx = browser.new_context(viewport={"width": 1300, "height": 900})
                ctx.add_cookies([{"name": "rt_sticky", "value": cookies[n], "url": nginx.url}])
                page = ctx.new_page()
                join(page, rater_link, rid)
                pages.append(page)
            item = dict.fromkeys(range(len(RATERS)), 1)
            active = set(range(len(RATERS)))
            killed_app = False
            while active:
                for r in sorted(active):
                    if rate_one(pages[r], r, item[r], log):
                        active.discard(r)
                    item[r] += 1
                    if len(log) == KILL_APP_AFTER and not killed_app:
                        proc = apps[1][0]
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait(timeout=60)
                        killed_app = True
                        for moved in (1, 4):  # bob and eve were on that server
                            if moved in active:
                                rejoin(pages[moved], rater_link, RATERS[moved], item[moved])
            roles_through_the_proxy(browser, nginx.url)
            browser.close()
        assert workers[1].wait(timeout=900) == 0, "".join(survivor_log)[-2000:]
        watcher.join(timeout=60)
        survivor.join(timeout=60)
        wall = time.perf_counter() - t0

        # every answer exactly once
        subs = store.db.conn.execute("SELECT rater_id, position FROM study_submissions WHERE study_id=?",
                                     (sid,)).fetchall()
        assert sorted((r[0], r[1]) for r in subs) == sorted((r, i) for r, i, _ in log)
        n_crit = len(store.studies.get(sid)["settings"].criteria)
        assert store.db.conn.execute("SELECT count(*) FROM study_answers WHERE study_id=?",
                                     (sid,)).fetchone()[0] == len(log) * n_crit
        stored = {(r["rater_id"], r["shown_position"]): r["choice"] for r in store.studies.answer_rows(sid)}
        assert stored == {(r, i): c for r, i, c in log}
        # the results page's numbers are a recomputation from the clicks
        summary = results.summary(store, sid, n_boot=50, n_boot_criterion=10)
        bt, alpha = recomputed(store, sid, log)
        assert summary["bt"].equals(bt) and summary["alpha"][stats.ALL] == alpha
        assert summary["n_answers"] == len(log) and summary["n_raters"] == len(RATERS)

        # every task finished exactly once, the doomed worker's in-flight one redone
        assert doomed_seen.get("killed"), "the doomed worker made no model call to be killed in"
        rows = store.db.conn.execute("SELECT task_id, status, attempts FROM bench_tasks WHERE bench='lab'").fetchall()
        assert sorted(r[0] for r in rows) == sorted(f"lab-{i:02d}" for i in range(N_TASKS))
        assert {r[1] for r in rows} == {"done"}
        # the killed worker's in-flight tasks were claimed again (a worker whose lease ran out
        # on the loaded machine may have one redone too: its late result is refused)
        redone = sorted(r[0] for r in rows if r[2] > 1)
        assert redone
        finished_by = [json.loads(r[0])["task_id"] for r in store.db.conn.execute(
            "SELECT result_json FROM bench_tasks WHERE bench='lab'")]
        assert len(finished_by) == len(set(finished_by)) == N_TASKS
        # no run left running: the dead worker's runs were reaped by the live processes
        statuses = dict(store.db.conn.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall())
        assert statuses.get("running", 0) == 0, statuses
        report = {"wall_seconds": round(wall, 1), "answers": len(log), "raters": len(RATERS),
                  "tasks": N_TASKS, "redone_tasks": redone, "runs_by_status": statuses,
                  "model_calls": len(model.chat_requests()), "killed_app_after_answer": KILL_APP_AFTER,
                  "doomed_worker_reported": doomed_seen.get("done", [])}
        print("\nlab load:", json.dumps(report))
        out = os.environ.get("RT_RELIABILITY_OUT")
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            Path(out, "lab_load.json").write_text(json.dumps(report, indent=1))
        store.close()
    finally:
        for w in workers:
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait(timeout=60)
        if nginx is not None:
            nginx.stop()
        for proc, _ in apps:
            if proc.poll() is None:
                stop_server(proc)
        model.close()
        pg.stop()
