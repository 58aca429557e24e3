"""What a study's answers add up to, read from the store: the answers with the arms behind
each shown side, each rater's progress, each unit's coverage, the time an item takes, and
the LLM judge's votes beside the people's.

Why apart from store/studies.py: that module writes a study and hands its items out under
the races several raters make (one transaction each); this one only reads what they left,
for the organiser's page and study/results.py. `Studies` is built on it, so callers keep
asking `store.studies`.
"""
from __future__ import annotations

from . import study_queue as assign


class StudyAnswers:
    """The read side of `Studies` (store/studies.py), which gives it `db`, `now`, `get`,
    `units` and `plan`."""

    # -- reading answers -------------------------------------------------------------------
    def answer_rows(self, study_id: str) -> list[dict]:
        """One row per (rater, task, criterion), with the arms behind each shown side."""
        return [dict(r) for r in self.db.conn.execute(
            "SELECT a.rater_id, a.position AS shown_position, a.unit_id, a.repeat, a.shown_left, "
            "a.shown_right, il.arm AS arm_left, ir.arm AS arm_right, u.gold_item, ans.criterion, "
            "ans.score, ans.choice, s.rationale, s.confidence, s.minutes, s.shown_at, s.submitted_at "
            "FROM study_answers ans "
            "JOIN study_submissions s USING (study_id, rater_id, position) "
            "JOIN study_assignments a USING (study_id, rater_id, position) "
            "JOIN study_units u ON u.study_id=a.study_id AND u.unit_id=a.unit_id "
            "JOIN study_items il ON il.study_id=a.study_id AND il.item_id=a.shown_left "
            "LEFT JOIN study_items ir ON ir.study_id=a.study_id AND ir.item_id=a.shown_right "
            "WHERE ans.study_id=? ORDER BY a.rater_id, a.position, ans.criterion", (study_id,))]

    def progress(self, study_id: str) -> list[dict]:
        """Per rater: items done, items planned for their session, minutes spent, last answer."""
        rows = [dict(r) for r in self.db.conn.execute(
            "SELECT r.rater_id, r.joined_at, count(s.position) AS done, "
            "coalesce(sum(s.minutes), 0) AS minutes, max(s.submitted_at) AS last_answer "
            "FROM study_raters r "
            "LEFT JOIN study_submissions s ON s.study_id=r.study_id AND s.rater_id=r.rater_id "
            "WHERE r.study_id=? GROUP BY r.rater_id, r.joined_at ORDER BY r.rater_id", (study_id,))]
        for r in rows:
            r["planned"] = self.plan(study_id, r["rater_id"])["planned"]
        return rows

    def coverage(self, study_id: str) -> dict[str, int]:
        """Ordinary unit -> how many raters have answered it (repeats and gold left out)."""
        counts = dict.fromkeys((u.unit_id for u in self.units(study_id) if not u.gold_item), 0)
        for unit_id, n in self.db.conn.execute(
                "SELECT a.unit_id, count(*) FROM study_assignments a JOIN study_submissions s "
                "USING (study_id, rater_id, position) WHERE a.study_id=? AND a.repeat=0 "
                "GROUP BY a.unit_id",
                (study_id,)):
            if unit_id in counts:
                counts[unit_id] = n
        return counts

    def time_per_item(self, study_id: str) -> dict:
        """The study's measured median seconds per item (or the prior, flagged) and how many
        items it rests on."""
        study = self.get(study_id)
        measured = [m * 60 for (m,) in self.db.conn.execute(
            "SELECT minutes FROM study_submissions WHERE study_id=? AND minutes IS NOT NULL",
            (study_id,))]
        prior = assign.prior_seconds(study["mode"] == "pairwise", len(study["settings"].criteria))
        seconds, is_measured = assign.seconds_per_item(measured, prior)
        return {"seconds": seconds, "measured": is_measured, "n": len(measured), "prior": prior}

    # -- the LLM judge ---------------------------------------------------------------------
    def save_judge(self, study_id: str, model: str, rows: list[dict]) -> None:
        with self.db.transaction() as db:
            db.executemany(
                "INSERT INTO study_judge(study_id, model, unit_id, shown_left, shown_right, "
                "criterion, score, choice, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(study_id, model, unit_id, shown_left, shown_right, criterion) "
                "DO UPDATE SET "
                "score=excluded.score, choice=excluded.choice, created_at=excluded.created_at",
                [(study_id, model, r["unit_id"], r["shown_left"], r.get("shown_right") or "",
                  r["criterion"], r.get("score"), r.get("choice"), self.now()) for r in rows])

    def judge_rows(self, study_id: str) -> list[dict]:
        return [dict(r) for r in self.db.conn.execute(
            "SELECT j.*, il.arm AS arm_left, ir.arm AS arm_right FROM study_judge j "
            "JOIN study_items il ON il.study_id=j.study_id AND il.item_id=j.shown_left "
            "LEFT JOIN study_items ir ON ir.study_id=j.study_id AND ir.item_id=j.shown_right "
            "WHERE j.study_id=? ORDER BY j.model, j.unit_id, j.shown_left, j.criterion", (study_id,))]

