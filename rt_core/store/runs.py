"""Stored runs (people's ratings of them live in studies: store/studies.py).

Several processes (app servers, CLI runs) may share one store, so a run row says who
runs it: the owner's process id and host, a lease (one per simulation) and a heartbeat
that a process-wide thread refreshes while the run is going. A `running` row whose
owner is gone (same host and the process has ended, or no heartbeat for
`stale_seconds()`) is an orphan: `reap_orphans()` marks it `interrupted`, never a run a
live process still owns.

Every write is optimistic: it names the version it last read and fails with
`RunConflict` when the row changed meanwhile, was deleted, or is still being run by
someone else, so a concurrent or deleted run is never overwritten or resurrected.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time

from ..errors import NotFoundError, RTError
from ..text import headline
from ..types import Run
from . import ideas
from .db import Database

HOST = socket.gethostname()


class RunConflict(RTError):
    """The run changed, was deleted, or is still running elsewhere since it was read."""

    hint = "Reload the run (it changed in another session or process) and try again."


def heartbeat_seconds() -> float:
    return _env_float("RT_HEARTBEAT_SECONDS", 10.0)


def stale_seconds() -> float:
    """No heartbeat for this long and the owner counts as gone (any host)."""
    return _env_float("RT_STALE_SECONDS", max(60.0, 6 * heartbeat_seconds()))


def _env_float(name: str, default: float) -> float:
    try:
        return max(0.05, float(os.environ.get(name, default)))
    except ValueError:
        return default


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (a zombie counts as ended)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        stat = open(f"/proc/{pid}/stat").read()  # noqa: SIM115
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


class _Heartbeat:
    """One daemon thread per process refreshing `heartbeat_at` of the runs it owns."""

    def __init__(self) -> None:
        self.leases: dict[str, Database] = {}
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None

    def add(self, lease: str, db: Database) -> None:
        with self.lock:
            self.leases[lease] = db
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="rt-heartbeat", daemon=True)
                self.thread.start()

    def remove(self, lease: str) -> None:
        with self.lock:
            self.leases.pop(lease, None)

    def owns(self, lease: str) -> bool:
        with self.lock:
            return lease in self.leases

    def _loop(self) -> None:
        while True:
            self.wake.wait(heartbeat_seconds())
            with self.lock:
                items = list(self.leases.items())
            now = time.time()
            for lease, db in items:
                with contextlib.suppress(Exception):  # a busy or closed store: next beat
                    db.conn.execute("UPDATE runs SET heartbeat_at=? WHERE owner_lease=? AND "
                                    "status='running'", (now, lease))


HEARTBEAT = _Heartbeat()


class Runs:
    def __init__(self, db: Database):
        self.db = db

    # -- writing ------------------------------------------------------------------------
    @staticmethod
    def _values(run: Run, title: str) -> tuple:
        data = run.to_dict()
        sim = run.similarity.mean if run.similarity else None
        score = run.meta_review.score if run.meta_review else None
        if not title:
            title = headline(run.proposal.q1, 160) if run.proposal and run.proposal.q1 else ""
        return (run.status, title, score, sim, json.dumps(data["config"]), json.dumps(data))

    def create(self, run: Run, title: str = "", lease: str = "", owner_hash: str = "") -> None:
        """Insert a new run (version 1); with a lease, this process owns it while it runs.
        `owner_hash`: the hash of the browser token that started it (rt_core.access)."""
        values = self._values(run, title)
        owner = (os.getpid(), HOST, lease, time.time()) if lease else (None, "", "", None)
        with self.db.transaction() as conn:
            self._insert(conn, run, values, owner, owner_hash)
            ideas.write_run(conn, run)
        run.version = 1
        if lease:
            HEARTBEAT.add(lease, self.db)

    @staticmethod
    def _insert(conn, run: Run, values: tuple, owner: tuple, owner_hash: str) -> None:
        cur = conn.execute(
            "INSERT INTO runs(id, created_at, model, mode, status, title, mean_score, similarity, "
            "config_json, result_json, owner_pid, owner_host, owner_lease, heartbeat_at, version, "
            "owner_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT DO NOTHING",
            (run.id, run.created_at, run.config.model, run.config.mode, *values, *owner, owner_hash or None))
        if cur.rowcount == 0:
            raise RunConflict(f"a run with id {run.id} already exists")

    def update(self, run: Run, title: str = "", lease: str = "") -> None:
        """Write the run over the version it was read at. Refused (RunConflict) when the
        row was deleted or changed since, or is running under another owner's lease."""
        values = self._values(run, title)
        with self.db.transaction() as conn:  # the run and its ideas in the bank, or neither
            cur = conn.execute(
                "UPDATE runs SET status=?, title=?, mean_score=?, similarity=?, config_json=?, result_json=?, "
                "version=version+1 WHERE id=? AND version=? AND (status != 'running' OR owner_lease=?)",
                (*values, run.id, run.version, lease or "(no lease)"))  # leases are hex
            if cur.rowcount:
                ideas.write_run(conn, run)
        if cur.rowcount == 0:
            row = self.db.conn.execute("SELECT status, version FROM runs WHERE id=?", (run.id,)).fetchone()
            if row is None:
                raise RunConflict(f"run {run.id} was deleted", "It cannot be saved again; start a new run.")
            if row["status"] == "running":
                raise RunConflict(f"run {run.id} is still running",
                                  "Wait until it finishes (or resume it if it was interrupted).")
            raise RunConflict(f"run {run.id} was changed elsewhere since it was opened")
        run.version += 1
        if lease and run.status != "running":
            self.release(lease)

    def save(self, run: Run, title: str = "", create: bool = True, lease: str = "") -> bool:
        """Create a run never saved (version 0) or update it over its version.

        With create=False a run deleted meanwhile stays deleted and False is returned;
        every other conflict raises RunConflict."""
        if run.version == 0:
            if not create:
                return False
            self.create(run, title, lease)
            return True
        try:
            self.update(run, title, lease)
        except RunConflict:
            if not create and not self.exists(run.id):
                return False
            raise
        return True

    def resumable(self, run_id: str) -> Run:
        """The stored run `run_id`, to resume it: refused (RunConflict) while it still runs
        in a live process. An orphan (its process gone) is reaped first, so it resumes.
        The one rule for every door that resumes a run (the CLI, the app, the claim)."""
        self.reap_orphans()
        run = self.load(run_id)  # NotFoundError for an unknown id
        if run.status == "running":
            raise RunConflict(f"run {run_id} is still running in a live process",
                              "Wait for it to finish; only interrupted, failed or cancelled runs resume.")
        return run

    def claim(self, run_id: str, lease: str) -> Run:
        """Take over a run that is not running (interrupted, failed, cancelled, done) to
        resume it in this process; an orphan is reaped first."""
        run = self.resumable(run_id)
        cur = self.db.conn.execute(
            "UPDATE runs SET status='running', owner_pid=?, owner_host=?, owner_lease=?, heartbeat_at=?, "
            "result_json=json_set(result_json, '$.status', 'running'), version=version+1 "
            "WHERE id=? AND version=? AND status != 'running'",
            (os.getpid(), HOST, lease, time.time(), run_id, run.version))
        if cur.rowcount == 0:
            raise RunConflict(f"run {run_id} was taken over or changed while resuming")
        HEARTBEAT.add(lease, self.db)
        run.status, run.version = "running", run.version + 1
        return run

    def release(self, lease: str) -> None:
        HEARTBEAT.remove(lease)

    # -- orphans -------------------------------------------------------------------------
    def reap_orphans(self) -> list[str]:
        """Mark `interrupted` every running run whose owner is gone; returns their ids.
        A run owned by a live process (this one or another) is left alone."""
        now, stale = time.time(), stale_seconds()
        orphans = []
        rows = self.db.conn.execute("SELECT id, owner_pid, owner_host, owner_lease, heartbeat_at, version "
                                    "FROM runs WHERE status='running'").fetchall()
        for r in rows:
            if r["owner_pid"] is None or r["heartbeat_at"] is None:
                gone = True  # written before runs had owners, or by hand
            elif r["owner_host"] == HOST and r["owner_pid"] == os.getpid():
                gone = not HEARTBEAT.owns(r["owner_lease"])  # ours, but its simulation ended
            elif r["owner_host"] == HOST and not pid_alive(r["owner_pid"]):
                gone = True
            else:
                gone = now - r["heartbeat_at"] > stale
            if gone and self.db.conn.execute(
                    "UPDATE runs SET status='interrupted', result_json=json_set(result_json, '$.status', "
                    "'interrupted'), version=version+1 WHERE id=? AND status='running' AND version=?",
                    (r["id"], r["version"])).rowcount:
                orphans.append(r["id"])
        return orphans

    def mark_interrupted(self) -> int:
        """Runs whose owner is gone become 'interrupted' (call when a process starts)."""
        return len(self.reap_orphans())

    # -- reading -------------------------------------------------------------------------
    def exists(self, run_id: str) -> bool:
        return self.db.conn.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone() is not None

    def load(self, run_id: str) -> Run:
        row = self.db.conn.execute("SELECT result_json, version FROM runs WHERE id=?", (run_id,)).fetchone()
        if not row:
            raise NotFoundError(f"Unknown run id: {run_id}", "Pick a run from the history list.")
        run = Run.from_dict(json.loads(row[0]))
        run.version = int(row[1])
        return run

    def owner(self, run_id: str) -> dict | None:
        row = self.db.conn.execute("SELECT owner_pid, owner_host, owner_lease, heartbeat_at, version, status "
                                   "FROM runs WHERE id=?", (run_id,)).fetchone()
        return dict(row) if row else None

    def owner_hash(self, run_id: str) -> str | None:
        """The hash of the browser token that started the run ('' for none); None: no such run."""
        row = self.db.conn.execute("SELECT owner_hash FROM runs WHERE id=?", (run_id,)).fetchone()
        return None if row is None else (row[0] or "")

    def owner_hashes(self, run_ids: list[str]) -> dict[str, str]:
        """Run id to owner hash, for the runs that have one (History's filter)."""
        out: dict[str, str] = {}
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i:i + 500]
            sql = f"SELECT id, owner_hash FROM runs WHERE id IN ({','.join('?' * len(chunk))})"
            out.update({r[0]: r[1] for r in self.db.conn.execute(sql, chunk) if r[1]})
        return out

    # -- expected and actual wall time (rt_core/run/pipeline/timing.py) -------------------
    def expect(self, run_id: str, seconds: float | None, add: bool = False) -> None:
        """The wall time the run was expected to take, set when it is first started (a
        resume keeps it: it finishes the same work); add=True adds more work's estimate (a
        revision of a finished run). Outside the versioned row: no writer conflicts on it."""
        if seconds is None:
            return
        sql = ("UPDATE runs SET estimate_seconds=COALESCE(estimate_seconds, 0) + ? WHERE id=?" if add
               else "UPDATE runs SET estimate_seconds=? WHERE id=? AND estimate_seconds IS NULL")
        self.db.conn.execute(sql, (float(seconds), run_id))

    def add_wall(self, run_id: str, seconds: float) -> None:
        """One attempt's wall time, added to the run's (a resumed run took every attempt)."""
        self.db.conn.execute("UPDATE runs SET wall_seconds=COALESCE(wall_seconds, 0) + ? WHERE id=?",
                             (float(seconds), run_id))

    def fresh_finished(self, model: str, limit: int = 5) -> list[tuple[dict, float, str]]:
        """(config, wall seconds, created at) of the newest finished runs of a model that made
        their own calls (at most one reply in ten from the cache; a run of the facets path makes
        none and takes none from it): how long such runs take."""
        rows = self.db.conn.execute(
            "SELECT config_json, wall_seconds, created_at, json_extract(result_json, '$.usage.calls'), "
            "json_extract(result_json, '$.usage.cache_hits') FROM runs WHERE model=? AND "
            "status='done' AND wall_seconds IS NOT NULL ORDER BY created_at DESC LIMIT ?",
            (model, 4 * limit)).fetchall()
        out = []
        for config, wall, created, calls, hits in rows:
            calls, hits = int(float(calls or 0)), int(float(hits or 0))
            if hits <= calls // 10:
                out.append((json.loads(config), float(wall), str(created)))
        return out[:limit]

    def wall_times(self, run_ids: list[str]) -> dict[str, tuple[float | None, float | None]]:
        """Run id to (expected seconds, actual seconds), for runs that have either."""
        out: dict[str, tuple[float | None, float | None]] = {}
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i:i + 500]
            sql = (f"SELECT id, estimate_seconds, wall_seconds FROM runs WHERE id IN "
                   f"({','.join('?' * len(chunk))})")
            out.update({r[0]: (r[1], r[2]) for r in self.db.conn.execute(sql, chunk)
                        if r[1] is not None or r[2] is not None})
        return out

    def list(self, text: str = "", status: str = "", limit: int = 200) -> list[dict]:
        """The newest runs of everybody (the command line, exports, tests); a viewer's History
        asks `visible`."""
        return self._select("", [], text, status, limit, 0)

    def visible(self, listing, text: str = "", status: str = "", limit: int = 200,
                offset: int = 0) -> list[dict]:
        """One page of the runs an `access.Listing` names, newest first: filtered by owner and
        by open-study items here, in SQL, so a visitor's own runs are found however many
        runs other people stored since."""
        if listing.nothing:
            return []
        where, params = "", []
        if not listing.everything:
            where += " AND owner_hash=?"
            params.append(listing.owner_hash)
        if listing.hide_open_items:
            seen = sorted(listing.open_studies_seen)
            spare = f" AND i.study_id NOT IN ({','.join('?' * len(seen))})" if seen else ""
            where += (" AND NOT EXISTS (SELECT 1 FROM study_items i JOIN studies s ON s.id=i.study_id "
                      f"WHERE s.status='open' AND i.run_id=runs.id{spare})")
            params += seen
        return self._select(where, params, text, status, limit, offset)

    def _select(self, where: str, params: list, text: str, status: str, limit: int,
                offset: int) -> list[dict]:
        # The evaluator travels with the similarity: scores by different evaluators are
        # not comparable, so a list that shows one shows the other.
        sql = ("SELECT id, created_at, status, title, model, mode, mean_score, similarity, "
               "COALESCE(json_extract(result_json, '$.similarity.evaluator'), "
               "json_extract(result_json, '$.similarity.embedder'), '') AS evaluator FROM runs "
               "WHERE 1=1" + where)
        params = list(params)
        if text:
            like = "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"
            sql += " AND (title LIKE ? ESCAPE '\\' OR model LIKE ? ESCAPE '\\')"
            params += [like, like]
        if status:
            sql += " AND status=?"
            params.append(status)
        sql += " ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
        params += [limit, max(0, offset)]
        return [dict(r) for r in self.db.conn.execute(sql, params)]

    def delete(self, run_id: str) -> bool:
        return self.db.conn.execute("DELETE FROM runs WHERE id=?", (run_id,)).rowcount > 0

