"""Stored human-evaluation studies: items, units, raters, assignments, answers, judge votes.

Every write that several raters can race on runs in one BEGIN IMMEDIATE transaction, and the
schema (migration m007) makes a doubled or misattributed answer impossible rather than unlikely.
"""
from __future__ import annotations

import json
import random
import secrets
import sqlite3
import uuid
from datetime import UTC, datetime
from typing import Any

from ..errors import InputError, NotFoundError
from ..study_types import (
    CODE_ALPHABET,
    StudyClosedError,
    StudyItem,
    StudySettings,
    Task,
    Unit,
    check_rater_id,
)
from .db import Database


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Studies:
    def __init__(self, db: Database):
        self.db = db

    # -- creating and finding --------------------------------------------------------------
    def create(self, settings: StudySettings, items: list[StudyItem], units: list[Unit]) -> dict:
        if not units:
            raise InputError("the study has nothing to rate", "Pick more runs or another mode.")
        study_id = uuid.uuid4().hex[:12]
        with self.db.transaction() as db:
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
                if not db.execute("SELECT 1 FROM studies WHERE code=?", (code,)).fetchone():
                    break
            db.execute("INSERT INTO studies(id, code, name, mode, settings_json, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (study_id, code, settings.name.strip(), settings.mode,
                                                     json.dumps(settings.to_dict()), now()))
            db.executemany(
                "INSERT INTO study_items(study_id, item_id, arm, target, source, run_id, answers_json, "
                "styled_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(study_id, i.item_id, i.arm, i.target, i.source, i.run_id, json.dumps(i.answers),
                  json.dumps(i.styled) if i.styled else None) for i in items])
            db.executemany("INSERT INTO study_units(study_id, unit_id, item_a, item_b, gold_item) "
                           "VALUES (?, ?, ?, ?, ?)",
                           [(study_id, u.unit_id, u.item_a, u.item_b, u.gold_item) for u in units])
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
                                "Check the code or link the organiser gave you (six letters and digits).")
        return self._study(row)

    @staticmethod
    def _study(row: sqlite3.Row) -> dict:
        d = dict(row)
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
                             (status, now() if status == "closed" else None, study_id))

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
        """Register a rater and assign their units (idempotent: a returning rater resumes).
        Returns how many tasks the rater has.

        Controlled overlap: each ordinary unit goes to at most `raters_per_unit` raters, the
        least-covered units first, at most `max_units_per_rater` per rater. Gold pairs go to
        everyone. Order and sides are shuffled per rater and stored, so they are recorded.
        """
        rid = check_rater_id(rater_id)
        with self.db.transaction() as db:
            study = self.get(study_id)
            s: StudySettings = study["settings"]
            if s.allowed_raters and rid not in s.allowed_raters:
                raise InputError(f"{rid!r} is not on this study's list of raters",
                                 "Use the rater id the organiser gave you.")
            if db.execute("SELECT 1 FROM study_raters WHERE study_id=? AND rater_id=?",
                          (study_id, rid)).fetchone():
                return self._count(study_id, rid)
            if study["status"] != "open":
                raise StudyClosedError("this study is closed and takes no new raters")
            units = self.units(study_id)
            counts = dict(db.execute("SELECT unit_id, count(*) FROM study_assignments WHERE study_id=? "
                                     "AND repeat=0 GROUP BY unit_id", (study_id,)).fetchall())
            rng = random.Random(f"{study_id}:{rid}")
            ordinary = [u for u in units if u.gold_item is None and counts.get(u.unit_id, 0) < s.raters_per_unit]
            rng.shuffle(ordinary)
            ordinary.sort(key=lambda u: counts.get(u.unit_id, 0))  # stable: random among equals
            chosen = ordinary[:s.max_units_per_rater]
            if not chosen:
                raise InputError("every item in this study already has enough raters",
                                 "Ask the organiser to raise the number of raters per item.")
            tasks = chosen + [u for u in units if u.gold_item is not None]
            rng.shuffle(tasks)
            rows = []
            for pos, u in enumerate(tasks, 1):
                left, right = (u.item_a, u.item_b) if rng.random() < 0.5 or u.item_b is None else (u.item_b, u.item_a)
                rows.append((study_id, rid, pos, u.unit_id, left, right, 0))
            if s.repeat_check:
                chosen_ids = {u.unit_id for u in chosen}
                again = rng.choice([r for r in rows if r[3] in chosen_ids])
                left, right = (again[5], again[4]) if again[5] else (again[4], None)  # sides swapped
                rows.append((study_id, rid, len(rows) + 1, again[3], left, right, 1))
            db.execute("INSERT INTO study_raters(study_id, rater_id, joined_at) VALUES (?, ?, ?)",
                       (study_id, rid, now()))
            db.executemany("INSERT INTO study_assignments(study_id, rater_id, position, unit_id, shown_left, "
                           "shown_right, repeat) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            return len(rows)

    def _count(self, study_id: str, rater_id: str) -> int:
        return self.db.conn.execute("SELECT count(*) FROM study_assignments WHERE study_id=? AND rater_id=?",
                                    (study_id, rater_id)).fetchone()[0]

    def tasks(self, study_id: str, rater_id: str) -> list[Task]:
        """The rater's tasks in their shown order, blinded: texts only, no arm, run or model."""
        items = self.items(study_id)
        rows = self.db.conn.execute(
            "SELECT a.position, a.unit_id, a.shown_left, a.shown_right, s.submitted_at "
            "FROM study_assignments a LEFT JOIN study_submissions s ON s.study_id=a.study_id "
            "AND s.rater_id=a.rater_id AND s.position=a.position WHERE a.study_id=? AND a.rater_id=? "
            "ORDER BY a.position", (study_id, rater_id))
        return [Task(r["position"], r["unit_id"], items[r["shown_left"]].shown(),
                     items[r["shown_right"]].shown() if r["shown_right"] else None,
                     done=r["submitted_at"] is not None) for r in rows]

    def submit(self, study_id: str, rater_id: str, position: int, answers: dict[str, Any],
               rationale: str = "", confidence: int | None = None, minutes: float | None = None,
               shown_at: str | None = None) -> bool:
        """Save one task's answers, all or nothing. False when this task was already saved
        (a double click or a second tab): the first answer stands, nothing is doubled."""
        with self.db.transaction() as db:
            study = self.get(study_id)
            if study["status"] != "open":
                raise StudyClosedError("this study is closed and accepts no more answers")
            s: StudySettings = study["settings"]
            row = db.execute("SELECT shown_right FROM study_assignments WHERE study_id=? AND rater_id=? "
                             "AND position=?", (study_id, rater_id, position)).fetchone()
            if not row:
                raise NotFoundError(f"rater {rater_id!r} has no task {position} in this study",
                                    "Reopen the study link and enter your rater id again.")
            pairwise = row["shown_right"] is not None
            values = []
            for c in s.criteria:
                v = answers.get(c.name)
                if pairwise:
                    if v not in ("left", "right", "tie"):
                        raise InputError(f"choose left, right or tie for {c.name}")
                    values.append((c.name, None, v))
                else:
                    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or not 1 <= v <= 10:
                        raise InputError(f"give {c.name} a score from 1 to 10")
                    values.append((c.name, int(v), None))
            if confidence is not None and not 1 <= int(confidence) <= 5:
                raise InputError("confidence is from 1 to 5")
            if minutes is not None and not 0 <= float(minutes) <= 600:
                raise InputError("minutes spent must be between 0 and 600")
            cur = db.execute(
                "INSERT INTO study_submissions(study_id, rater_id, position, rationale, confidence, minutes, "
                "shown_at, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (study_id, rater_id, position, str(rationale or "")[:5000],
                 None if confidence is None else int(confidence),
                 None if minutes is None else float(minutes), shown_at, now()))
            if cur.rowcount == 0:
                return False
            db.executemany("INSERT INTO study_answers(study_id, rater_id, position, criterion, score, choice) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           [(study_id, rater_id, position, c, sc, ch) for c, sc, ch in values])
            return True

    # -- reading answers -------------------------------------------------------------------
    def answer_rows(self, study_id: str) -> list[dict]:
        """One row per (rater, task, criterion), with the arms behind each shown side."""
        return [dict(r) for r in self.db.conn.execute(
            "SELECT a.rater_id, a.position AS shown_position, a.unit_id, a.repeat, a.shown_left, "
            "a.shown_right, il.arm AS arm_left, ir.arm AS arm_right, u.gold_item, ans.criterion, ans.score, "
            "ans.choice, s.rationale, s.confidence, s.minutes, s.shown_at, s.submitted_at "
            "FROM study_answers ans "
            "JOIN study_submissions s USING (study_id, rater_id, position) "
            "JOIN study_assignments a USING (study_id, rater_id, position) "
            "JOIN study_units u ON u.study_id=a.study_id AND u.unit_id=a.unit_id "
            "JOIN study_items il ON il.study_id=a.study_id AND il.item_id=a.shown_left "
            "LEFT JOIN study_items ir ON ir.study_id=a.study_id AND ir.item_id=a.shown_right "
            "WHERE ans.study_id=? ORDER BY a.rater_id, a.position, ans.criterion", (study_id,))]

    def progress(self, study_id: str) -> list[dict]:
        return [dict(r) for r in self.db.conn.execute(
            "SELECT r.rater_id, r.joined_at, count(a.position) AS tasks, count(s.position) AS done, "
            "max(s.submitted_at) AS last_answer FROM study_raters r "
            "LEFT JOIN study_assignments a ON a.study_id=r.study_id AND a.rater_id=r.rater_id "
            "LEFT JOIN study_submissions s ON s.study_id=a.study_id AND s.rater_id=a.rater_id "
            "AND s.position=a.position WHERE r.study_id=? GROUP BY r.rater_id, r.joined_at ORDER BY r.rater_id",
            (study_id,))]

    # -- the LLM judge ---------------------------------------------------------------------
    def save_judge(self, study_id: str, model: str, rows: list[dict]) -> None:
        with self.db.transaction() as db:
            db.executemany(
                "INSERT INTO study_judge(study_id, model, unit_id, shown_left, shown_right, criterion, score, "
                "choice, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(study_id, model, unit_id, "
                "shown_left, shown_right, criterion) DO UPDATE SET "
                "score=excluded.score, choice=excluded.choice, created_at=excluded.created_at",
                [(study_id, model, r["unit_id"], r["shown_left"], r.get("shown_right") or "", r["criterion"],
                  r.get("score"), r.get("choice"), now()) for r in rows])

    def judge_rows(self, study_id: str) -> list[dict]:
        return [dict(r) for r in self.db.conn.execute(
            "SELECT j.*, il.arm AS arm_left, ir.arm AS arm_right FROM study_judge j "
            "JOIN study_items il ON il.study_id=j.study_id AND il.item_id=j.shown_left "
            "LEFT JOIN study_items ir ON ir.study_id=j.study_id AND ir.item_id=j.shown_right "
            "WHERE j.study_id=? ORDER BY j.model, j.unit_id, j.shown_left, j.criterion", (study_id,))]
