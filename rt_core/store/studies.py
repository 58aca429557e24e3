"""Stored human-evaluation studies: items, units, raters, assignments, answers, judge votes.

Every write that several raters can race on runs in one BEGIN IMMEDIATE transaction, and the
schema (migration m007) makes a doubled or misattributed answer impossible rather than unlikely.
Items are handed out one at a time (`next_task`, rules in study_queue.py); the organiser's
token is kept only as a hash (m009, study_access.py).
"""
from __future__ import annotations

import json
import secrets
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..errors import InputError, NotFoundError
from . import study_access as access
from . import study_queue as assign
from .db import Database
from .study_answers import StudyAnswers
from .study_types import (
    CODE_ALPHABET,
    StudyClosedError,
    StudyItem,
    StudySettings,
    Task,
    Unit,
    check_answers,
    check_rater_id,
)

# What the organiser may change while a study is open.
ADJUSTABLE = ("raters_per_unit", "minutes_per_rater", "max_units_per_rater")


class Studies(StudyAnswers):
    """The studies' records and the raters' side: creating and adjusting a study, handing
    out its items one at a time and taking the answers (what they add up to is read by
    `StudyAnswers`, store/study_answers.py)."""

    def __init__(self, db: Database, clock: Callable[[], datetime] | None = None):
        self.db = db
        self.clock = clock or (lambda: datetime.now(UTC))  # tests pass their own

    def now(self) -> str:
        return self.clock().isoformat(timespec="milliseconds")

    # -- creating and finding --------------------------------------------------------------
    def create(self, settings: StudySettings, items: list[StudyItem], units: list[Unit]) -> dict:
        """Store a study. The returned dict alone carries `organiser_token`: it is shown once and
        only its hash is kept."""
        if not units:
            raise InputError("the study has nothing to rate", "Pick more runs or another mode.")
        study_id = uuid.uuid4().hex[:12]
        token = access.new_token()
        with self.db.transaction() as db:
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
                if not db.execute("SELECT 1 FROM studies WHERE code=?", (code,)).fetchone():
                    break
            db.execute(
                "INSERT INTO studies(id, code, name, mode, settings_json, created_at, organiser_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (study_id, code, settings.name.strip(), settings.mode,
                 json.dumps(settings.to_dict()), self.now(), access.token_hash(token)))
            self._insert(study_id, items, units)
        return {**self.get(study_id), "organiser_token": token}

    def _insert(self, study_id: str, items: list[StudyItem], units: list[Unit]) -> int:
        """Add items and units, skipping any already there; returns how many units were new."""
        db = self.db.conn
        db.executemany(
            "INSERT INTO study_items(study_id, item_id, arm, target, source, run_id, answers_json, "
            "styled_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(study_id, i.item_id, i.arm, i.target, i.source, i.run_id, json.dumps(i.answers),
              json.dumps(i.styled) if i.styled else None) for i in items])
        count = "SELECT count(*) FROM study_units WHERE study_id=?"
        before = db.execute(count, (study_id,)).fetchone()[0]
        db.executemany("INSERT INTO study_units(study_id, unit_id, item_a, item_b, gold_item) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       [(study_id, u.unit_id, u.item_a, u.item_b, u.gold_item) for u in units])
        after = db.execute(count, (study_id,)).fetchone()[0]
        return after - before

    def add(self, study_id: str, items: list[StudyItem], units: list[Unit]) -> int:
        """More items while the study runs: raters who need an item get the new (least-covered)
        units first. Returns how many units were new."""
        with self.db.transaction():
            self.get(study_id)
            return self._insert(study_id, items, units)

    def adjust(self, study_id: str, **changes: Any) -> dict:
        """Change the overlap floor, minutes per rater or the cap of an existing study."""
        bad = set(changes) - set(ADJUSTABLE)
        if bad:
            raise InputError(f"cannot change {', '.join(sorted(bad))} after creation")
        with self.db.transaction() as db:
            settings = replace(self.get(study_id)["settings"], **changes)  # validated again
            db.execute("UPDATE studies SET settings_json=? WHERE id=?",
                       (json.dumps(settings.to_dict()), study_id))
        return self.get(study_id)

    def get(self, study_id: str) -> dict:
        row = self.db.conn.execute("SELECT * FROM studies WHERE id=?", (study_id,)).fetchone()
        if not row:
            raise NotFoundError(f"Unknown study: {study_id}", "Pick a study from the list.")
        return self._study(row)

    def by_code(self, code: str) -> dict:
        c = (code or "").strip().upper()
        row = self.db.conn.execute("SELECT * FROM studies WHERE code=?", (c,)).fetchone()
        if not row:
            raise NotFoundError(f"No study has the code {c!r}" if c else "enter the study code",
                                "Check the code or link the organiser gave you "
                                "(six letters and digits).")
        return self._study(row)

    def by_organiser_token(self, token: str) -> dict | None:
        """The study this organiser token opens, or None (also for a study made before tokens)."""
        token = access.token_from(token)
        row = self.db.conn.execute("SELECT * FROM studies WHERE organiser_hash=?",
                                   (access.token_hash(token),)).fetchone()
        return self._study(row) if row and access.matches(token, row["organiser_hash"]) else None

    def issue_organiser_token(self, code: str) -> str:
        """A token for a study made before organiser tokens (m009), which nobody could organise.
        Only where none is stored: a study's token is never replaced, so whoever holds one keeps
        the study, and giving one out needs the store itself (the command line), not the app."""
        study = self.by_code(code)
        token = access.new_token()
        with self.db.transaction() as db:
            cur = db.execute("UPDATE studies SET organiser_hash=? WHERE id=? AND organiser_hash IS NULL",
                             (access.token_hash(token), study["id"]))
        if cur.rowcount != 1:
            raise InputError(f"study {study['code']} already has an organiser token",
                             "Its organiser link (shown when it was created) opens it; "
                             "a token is never replaced.")
        return token

    @staticmethod
    def _study(row: sqlite3.Row) -> dict:
        d = dict(row)
        d.pop("organiser_hash", None)  # never leaves the store, not even into an export
        d["settings"] = StudySettings.from_dict(json.loads(d.pop("settings_json")))
        return d

    def list(self) -> list[dict]:
        rows = self.db.conn.execute(
            "SELECT s.id, s.code, s.name, s.mode, s.status, s.created_at, "
            "(SELECT count(*) FROM study_units u WHERE u.study_id=s.id) AS units, "
            "(SELECT count(*) FROM study_raters r WHERE r.study_id=s.id) AS raters, "
            "(SELECT count(*) FROM study_submissions x WHERE x.study_id=s.id) AS answers "
            "FROM studies s ORDER BY s.created_at DESC, s.id")
        return [dict(r) for r in rows]

    def set_status(self, study_id: str, status: str) -> None:
        if status not in ("open", "closed"):
            raise InputError(f"unknown study status {status!r}")
        self.get(study_id)
        self.db.conn.execute("UPDATE studies SET status=?, closed_at=? WHERE id=?",
                             (status, self.now() if status == "closed" else None, study_id))

    def delete(self, study_id: str) -> bool:
        with self.db.transaction() as db:
            for table in ("study_answers", "study_submissions", "study_assignments", "study_raters"):
                db.execute(f"DELETE FROM {table} WHERE study_id=?", (study_id,))
            return db.execute("DELETE FROM studies WHERE id=?", (study_id,)).rowcount > 0

    def items(self, study_id: str) -> dict[str, StudyItem]:
        rows = self.db.conn.execute("SELECT * FROM study_items WHERE study_id=? ORDER BY item_id",
                                    (study_id,))
        return {r["item_id"]: StudyItem(r["item_id"], r["arm"], r["target"], r["source"],
                                        json.loads(r["answers_json"]), r["run_id"],
                                        json.loads(r["styled_json"]) if r["styled_json"] else None)
                for r in rows}

    def open_item_runs(self) -> dict[str, frozenset[str]]:
        """Run id to the open studies it is an item of: blind to all but their organisers."""
        out: dict[str, set[str]] = {}
        for r in self.db.conn.execute(
                "SELECT DISTINCT i.run_id, i.study_id FROM study_items i "
                "JOIN studies s ON s.id=i.study_id WHERE s.status='open' AND i.run_id != ''"):
            out.setdefault(r[0], set()).add(r[1])
        return {k: frozenset(v) for k, v in out.items()}

    def open_studies_of(self, run_id: str) -> frozenset[str]:
        rows = self.db.conn.execute("SELECT DISTINCT i.study_id FROM study_items i JOIN studies s ON "
                                    "s.id=i.study_id WHERE s.status='open' AND i.run_id=?", (run_id,))
        return frozenset(r[0] for r in rows)

    def set_styled(self, study_id: str, styled: dict[str, dict[str, str]]) -> None:
        """Store restyled texts (the originals stay in answers_json)."""
        with self.db.transaction() as db:
            db.executemany("UPDATE study_items SET styled_json=? WHERE study_id=? AND item_id=?",
                           [(json.dumps(s), study_id, i) for i, s in styled.items()])

    def units(self, study_id: str) -> list[Unit]:
        rows = self.db.conn.execute("SELECT * FROM study_units WHERE study_id=? ORDER BY unit_id",
                                    (study_id,))
        return [Unit(r["unit_id"], r["item_a"], r["item_b"], r["gold_item"]) for r in rows]

    # -- raters ----------------------------------------------------------------------------
    def join(self, study_id: str, rater_id: str) -> int:
        """Register a rater (idempotent: a returning rater resumes). Returns how many items
        their session is planned to hold. Nobody is turned away while the study is open: items
        are handed out one at a time by `next_task`, least-covered first.

        A returning rater's open item starts its clock again when it is next shown, since the
        time it sat in a closed tab is not time spent rating it.
        """
        rid = check_rater_id(rater_id)
        with self.db.transaction() as db:
            study = self.get(study_id)
            s: StudySettings = study["settings"]
            if s.allowed_raters and rid not in s.allowed_raters:
                raise InputError(f"{rid!r} is not on this study's list of raters",
                                 "Use the rater id the organiser gave you.")
            known = db.execute("SELECT 1 FROM study_raters WHERE study_id=? AND rater_id=?",
                               (study_id, rid)).fetchone()
            if known:
                db.execute(
                    "UPDATE study_assignments SET shown_at=NULL WHERE study_id=? AND rater_id=? "
                    "AND position NOT IN (SELECT position FROM study_submissions "
                    "WHERE study_id=? AND rater_id=?)", (study_id, rid, study_id, rid))
            elif study["status"] != "open":
                raise StudyClosedError("this study is closed and takes no new raters")
            else:
                db.execute("INSERT INTO study_raters(study_id, rater_id, joined_at) VALUES (?, ?, ?)",
                           (study_id, rid, self.now()))
        return self.plan(study_id, rid)["planned"]

    def _rows(self, study_id: str, rater_id: str) -> list[dict]:
        return [dict(r) for r in self.db.conn.execute(
            "SELECT a.position, a.unit_id, a.shown_left, a.shown_right, a.repeat, a.shown_at, "
            "u.gold_item, s.submitted_at, s.minutes FROM study_assignments a "
            "JOIN study_units u ON u.study_id=a.study_id AND u.unit_id=a.unit_id "
            "LEFT JOIN study_submissions s ON s.study_id=a.study_id AND s.rater_id=a.rater_id "
            "AND s.position=a.position WHERE a.study_id=? AND a.rater_id=? ORDER BY a.position",
            (study_id, rater_id))]

    def _budget(self, study: dict, rows: list[dict]) -> assign.Budget:
        s: StudySettings = study["settings"]
        per_item = self.time_per_item(study["id"])["seconds"]
        n_units = self.db.conn.execute(
            "SELECT count(*) FROM study_units WHERE study_id=? AND gold_item IS NULL",
            (study["id"],)).fetchone()[0]
        used = sum((r["minutes"] or 0) * 60 for r in rows if r["submitted_at"])
        return assign.Budget(s.minutes_per_rater, used, per_item, s.max_units_per_rater, n_units)

    def plan(self, study_id: str, rater_id: str) -> dict:
        """A rater's session as it stands: items done, items planned in all (re-sized after
        every item from the study's median time per item), and that time per item."""
        study = self.get(study_id)
        s: StudySettings = study["settings"]
        rows = self._rows(study_id, rater_id)
        ordinary = [r for r in rows if not r["repeat"] and not r["gold_item"]]
        budget = self._budget(study, rows)
        target = budget.ordinary_target(sum(bool(r["submitted_at"]) for r in ordinary), len(ordinary))
        has_gold = any(u.gold_item for u in self.units(study_id))
        return {"done": sum(bool(r["submitted_at"]) for r in rows),
                "planned": target + has_gold + bool(s.repeat_check),
                "seconds_per_item": budget.per_item, "used_seconds": budget.used_seconds}

    def next_task(self, study_id: str, rater_id: str) -> Task | None:
        """The item on the rater's screen: their open one, else a new one handed out now (the
        least-covered unit they have not had), else None when their session is over or the
        study is closed. The moment it is first shown is stored: time per item counts from it."""
        with self.db.transaction() as db:
            study = self.get(study_id)
            rows = self._rows(study_id, rater_id)
            if not db.execute("SELECT 1 FROM study_raters WHERE study_id=? AND rater_id=?",
                              (study_id, rater_id)).fetchone():
                raise NotFoundError(f"rater {rater_id!r} has not joined this study",
                                    "Reopen the study link and enter your rater id again.")
            open_row = next((r for r in rows if not r["submitted_at"]), None)
            if open_row is None:
                if study["status"] != "open":
                    return None
                coverage = dict(db.execute(
                    "SELECT unit_id, count(*) FROM study_assignments WHERE study_id=? AND repeat=0 AND "
                    "rater_id<>? GROUP BY unit_id", (study_id, rater_id)).fetchall())
                picked = assign.choose(f"{study_id}:{rater_id}", rows, self.units(study_id),
                                       self._budget(study, rows), coverage,
                                       study["settings"].repeat_check)
                if picked is None:
                    return None
                unit_id, left, right, repeat = picked
                open_row = {"position": len(rows) + 1, "unit_id": unit_id, "shown_left": left,
                            "shown_right": right}
                db.execute(
                    "INSERT INTO study_assignments(study_id, rater_id, position, unit_id, "
                    "shown_left, shown_right, repeat, shown_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (study_id, rater_id, open_row["position"], unit_id, left, right, repeat,
                     self.now()))
            elif not open_row["shown_at"]:
                db.execute(
                    "UPDATE study_assignments SET shown_at=? "
                    "WHERE study_id=? AND rater_id=? AND position=?",
                    (self.now(), study_id, rater_id, open_row["position"]))
        items = self.items(study_id)
        right = open_row["shown_right"]
        return Task(open_row["position"], open_row["unit_id"], items[open_row["shown_left"]].shown(),
                    items[right].shown() if right else None)

    def tasks(self, study_id: str, rater_id: str) -> list[Task]:
        """The items handed to the rater so far, in their shown order, blinded: texts only."""
        items = self.items(study_id)
        return [Task(r["position"], r["unit_id"], items[r["shown_left"]].shown(),
                     items[r["shown_right"]].shown() if r["shown_right"] else None,
                     done=r["submitted_at"] is not None) for r in self._rows(study_id, rater_id)]

    def submit(self, study_id: str, rater_id: str, position: int, answers: dict[str, Any],
               rationale: str = "", confidence: int | None = None) -> bool:
        """Save one task's answers, all or nothing, with the time from when it was shown to now.
        False when this task was already saved (a double click or a second tab): the first
        answer stands, nothing is doubled."""
        with self.db.transaction() as db:
            study = self.get(study_id)
            if study["status"] != "open":
                raise StudyClosedError("this study is closed and accepts no more answers")
            s: StudySettings = study["settings"]
            row = db.execute("SELECT shown_right, shown_at FROM study_assignments WHERE study_id=? AND "
                             "rater_id=? AND position=?", (study_id, rater_id, position)).fetchone()
            if not row:
                raise NotFoundError(f"rater {rater_id!r} has no task {position} in this study",
                                    "Reopen the study link and enter your rater id again.")
            values = check_answers(s, answers, pairwise=row["shown_right"] is not None)
            if confidence is not None and not 1 <= int(confidence) <= 5:
                raise InputError("confidence is from 1 to 5")
            submitted = self.now()
            minutes = assign.minutes_between(row["shown_at"], submitted)
            cur = db.execute(
                "INSERT INTO study_submissions(study_id, rater_id, position, rationale, "
                "confidence, minutes, shown_at, submitted_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (study_id, rater_id, position, str(rationale or "")[:5000],
                 None if confidence is None else int(confidence), minutes, row["shown_at"], submitted))
            if cur.rowcount == 0:
                return False
            db.executemany("INSERT INTO study_answers(study_id, rater_id, position, criterion, "
                           "score, choice) VALUES (?, ?, ?, ?, ?, ?)",
                           [(study_id, rater_id, position, c, sc, ch) for c, sc, ch in values])
            return True
