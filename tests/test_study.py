"""Human-evaluation studies in rt_core: design, blinding, assignment, answers, concurrency,
judge and restyling with the scripted model, results and safe exports."""
from __future__ import annotations

import csv
import io
import json
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from rt_core.errors import InputError, NotFoundError
from rt_core.models.client import ModelSettings
from rt_core.store import Store
from rt_core.store import study_access as access
from rt_core.store import study_queue as assign
from rt_core.study import models as study_models
from rt_core.study import results, stats
from rt_core.study.create import add_runs, create_from_runs
from rt_core.study.design import (
    GOLD_ARM,
    REAL_ARM,
    StudyClosedError,
    StudySettings,
    build_items,
    build_units,
    check_rater_id,
    neutral,
    parse_criteria,
    replay_targets,
)
from rt_core.types import Proposal, Run, RunConfig, Similarity

REPLAY = ["arxiv:2412.17767", "arxiv:2404.07738"]  # papers with bundled five answers
OTHER = ["p-gaia", "p-llm"]  # targets without them


def make_run(store, run_id: str, mode: str, target: str, model: str = "scripted/demo") -> Run:
    run = Run(id=run_id, config=RunConfig(mode=mode, reference_paper_id=target, model=model),
              status="done", created_at=f"2026-01-01T00:00:{len(run_id):02d}")
    variant = "one" if mode == "global" else "two"  # the text itself names no run, mode or model
    run.proposal = Proposal(*(f"**Variant {variant}**: answer {k} about {target}" for k in range(1, 6)))
    store.runs.save(run)
    return run


def seed_runs(store) -> list[str]:
    """Two modes on four targets: 8 runs; with the real paper for two targets, 10 items."""
    return [make_run(store, f"run-{mode}-{t}", mode, t).id for t in REPLAY + OTHER for mode in ("global", "self")]


def pick(choice_by_rater: str, criteria) -> dict:
    return {c.name: choice_by_rater for c in criteria}


def test_replay_targets_cover_the_reference_papers_used_here():
    assert set(REPLAY) <= set(replay_targets())


def test_items_group_runs_into_arms_and_add_the_hidden_real_paper(store):
    ids = seed_runs(store)
    runs = [store.runs.load(i) for i in ids]
    items = build_items(runs, "mode")
    assert len(items) == 10
    arms = Counter(i.arm for i in items)
    assert arms == {"mode: global": 4, "mode: self": 4, REAL_ARM: 2}
    real = [i for i in items if i.arm == REAL_ARM]
    assert {i.target for i in real} == set(REPLAY)
    assert real[0].answers == replay_targets()[real[0].target]
    # A run's restated reference stands in when no bundled answers exist.
    run = runs[-1]
    run.similarity = Similarity(reference=Proposal("r1", "r2", "r3", "r4", "r5"))
    items = build_items(runs, "mode")
    assert any(i.arm == REAL_ARM and i.target == run.config.reference_paper_id and i.answers["q1"] == "r1"
               for i in items)
    assert not any(i.arm == REAL_ARM for i in build_items(runs, "mode", real_arm=False))


def test_pairs_are_made_only_between_arms_on_the_same_target(store):
    items = build_items([store.runs.load(i) for i in seed_runs(store)], "mode")
    by_id = {i.item_id: i for i in items}
    _, units = build_units(items, "pairwise")
    assert len(units) == 2 * 3 + 2 * 1  # three arms on each replay target, two elsewhere
    for u in units:
        a, b = by_id[u.item_a], by_id[u.item_b]
        assert a.target == b.target and a.arm != b.arm
    items2, units2 = build_units(items, "pairwise", gold_check=True)
    gold = [u for u in units2 if u.gold_item]
    assert len(gold) == 1 and {i.arm for i in items2} >= {GOLD_ARM}
    assert {i.item_id: i for i in items2}[gold[0].gold_item].arm == REAL_ARM
    _, single = build_units(items, "absolute")
    assert len(single) == 10 and all(u.item_b is None for u in single)
    one_arm = [i for i in items if i.arm == "mode: global"]
    with pytest.raises(InputError, match="no two arms"):
        build_units(one_arm, "pairwise")


def test_settings_rubric_and_rater_ids_are_validated():
    with pytest.raises(InputError):
        StudySettings(name="")
    with pytest.raises(InputError):
        StudySettings(name="x", mode="ranking")
    extra = parse_criteria("clarity | Is it clear? | confusing | crystal clear\n\n")
    assert extra[0].name == "clarity" and extra[0].high == "crystal clear"
    with pytest.raises(InputError, match="four parts"):
        parse_criteria("clarity | only two")
    with pytest.raises(InputError):
        StudySettings(name="x", criteria=(*extra, *extra))
    assert check_rater_id(" ann.b-1 ") == "ann.b-1"
    for bad in ("", "a", "has space", "<script>", "x" * 41):
        with pytest.raises(InputError):
            check_rater_id(bad)


def test_neutral_format_strips_markup_that_could_give_an_arm_away():
    shown = neutral({"q1": "**Bold** idea\n- with a bullet", "q2": "# Heading\n`code`"})
    assert shown["q1"] == "Bold idea with a bullet" and shown["q2"] == "Heading code"
    assert shown["q3"] == "(no answer)"


class Ticks:
    """A clock for the store that moves `seconds` on every reading, so each item a test rates
    takes exactly that long (one reading when it is shown, one when it is submitted)."""

    def __init__(self, seconds: float):
        self.t, self.step, self.lock = datetime(2026, 1, 1, tzinfo=UTC), timedelta(seconds=seconds), threading.Lock()

    def __call__(self) -> datetime:
        with self.lock:
            self.t += self.step
            return self.t


def new_study(store, seconds: float = 5, **kw) -> dict:
    """A study on the eight seeded runs (8 pairs), each item taking `seconds` to rate."""
    store.studies.clock = Ticks(seconds)
    settings = StudySettings(**{"name": "Test study", "raters_per_unit": 2, **kw})
    return create_from_runs(store, seed_runs(store), settings)


def rate_through(store, sid: str, rid: str, decide=lambda task: "left") -> list:
    """Join and answer item after item until the session is over; returns the tasks."""
    crit = store.studies.get(sid)["settings"].criteria
    store.studies.join(sid, rid)
    seen = []
    while (task := store.studies.next_task(sid, rid)) is not None:
        seen.append(task)
        store.studies.submit(sid, rid, task.position, {c.name: decide(task) for c in crit})
    return seen


def test_tasks_are_blind_shuffled_per_rater_and_recorded(store):
    study = new_study(store, raters_per_unit=3)
    sid = study["id"]
    a, b = rate_through(store, sid, "ann"), rate_through(store, sid, "bob")
    assert len(a) == len(b) == 8  # 5 s an item: ten minutes cover every pair
    assert [t.unit_id for t in a] != [t.unit_id for t in b]  # order randomised per rater
    # What a rater sees carries no arm, run, model or mode: only the five answers.
    for t in a:
        assert set(t.left) == {"q1", "q2", "q3", "q4", "q5"} and set(t.right) == set(t.left)
        text = json.dumps([t.left, t.right])
        assert not any(word in text for word in ("run-", "scripted", "mode: "))
    # The shown order and sides are stored, and stay the same when the rater comes back.
    assert store.studies.join(sid, "ann") == 8
    assert [(t.unit_id, t.left) for t in store.studies.tasks(sid, "ann")] == [(t.unit_id, t.left) for t in a]
    assert store.studies.next_task(sid, "ann") is None


def test_the_overlap_is_a_floor_and_nobody_is_turned_away(store):
    """Raters who join one after another spread evenly over the units, least-covered first;
    the sixth and later raters are still given items once every unit has its two raters."""
    study = new_study(store, raters_per_unit=2, max_units_per_rater=3)
    sid = study["id"]
    for n in range(4):  # 12 slots over 8 units: every unit once before any twice
        assert len(rate_through(store, sid, f"r{n}")) == 3
        cover = store.studies.coverage(sid)
        assert max(cover.values()) - min(cover.values()) <= 1, cover
    for n in range(4, 9):  # past the floor: still balanced, nobody refused
        assert len(rate_through(store, sid, f"r{n}")) == 3
        cover = store.studies.coverage(sid)
        assert max(cover.values()) - min(cover.values()) <= 1, cover
    assert min(store.studies.coverage(sid).values()) >= 3  # 27 answers over 8 units


def test_open_items_count_so_raters_at_once_do_not_pile_on_one_unit(store):
    study = new_study(store)
    sid = study["id"]
    for rid in ("ann", "bob", "cat", "dan"):
        store.studies.join(sid, rid)
    shown = [store.studies.next_task(sid, rid).unit_id for rid in ("ann", "bob", "cat", "dan")]
    assert len(set(shown)) == 4  # all on screen at once, none answered yet: four different units


def test_the_queue_follows_the_session_length_and_the_measured_time_per_item(store):
    """Ten minutes at 200 s an item: the prior (120 s for a pair with three criteria) promises
    five; once three items are measured at 200 s the first rater's session ends after three,
    and the next rater is planned three from the start."""
    study = new_study(store, seconds=200)
    sid = study["id"]
    assert assign.prior_seconds(True, 3) == 120
    assert store.studies.join(sid, "ann") == 5
    assert store.studies.time_per_item(sid) == {"seconds": 120, "measured": False, "n": 0, "prior": 120}
    assert len(rate_through(store, sid, "ann")) == 3
    pace = store.studies.time_per_item(sid)
    assert pace["measured"] and pace["seconds"] == pytest.approx(200)
    assert store.studies.join(sid, "bob") == 3
    rows = results.export_frame(store, sid)
    assert set(rows["seconds"]) == {200.0} and set(rows["minutes"]) == {round(200 / 60, 3)}


def test_a_returning_rater_is_timed_from_when_the_item_is_shown_again(store):
    study = new_study(store, seconds=30)
    sid, crit = study["id"], study["settings"].criteria
    store.studies.join(sid, "ann")
    first = store.studies.next_task(sid, "ann")
    for _ in range(100):  # the tab sits closed for an hour of clock readings
        store.studies.clock()
    store.studies.join(sid, "ann")  # comes back: the open item's clock restarts when shown
    again = store.studies.next_task(sid, "ann")
    assert again.position == first.position
    store.studies.submit(sid, "ann", again.position, pick("tie", crit))
    assert results.export_frame(store, sid)["seconds"].tolist() == [30.0] * len(crit)


def test_adding_runs_and_raising_the_floor_while_the_study_is_open(store):
    study = new_study(store, raters_per_unit=1)
    sid = study["id"]
    rate_through(store, sid, "ann")
    extra = make_run(store, "run-agent-arxiv:2412.17767", "agent", REPLAY[0]).id
    assert add_runs(store, sid, [extra]) == 3  # the new arm against the three on that target
    with pytest.raises(InputError, match="nothing new"):
        add_runs(store, sid, [extra])
    new_units = set(store.studies.coverage(sid)) - {t.unit_id for t in store.studies.tasks(sid, "ann")}
    assert len(new_units) == 3
    bob = rate_through(store, sid, "bob")
    assert {t.unit_id for t in bob[:3]} == new_units  # the uncovered units come first
    assert store.studies.adjust(sid, raters_per_unit=4)["settings"].raters_per_unit == 4
    with pytest.raises(InputError, match="cannot change"):
        store.studies.adjust(sid, mode="absolute")


def test_the_organiser_token_is_shown_once_and_stored_only_as_a_hash(store):
    study = new_study(store)
    token = study["organiser_token"]
    assert len(token) >= 20 and "organiser_token" not in store.studies.get(study["id"])
    stored = store.db.conn.execute("SELECT organiser_hash FROM studies").fetchone()[0]
    assert stored == access.token_hash(token) and token not in stored
    assert store.studies.by_organiser_token(token)["id"] == study["id"]
    assert store.studies.by_organiser_token(f"http://x/study_results?organiser={token}")["id"] == study["id"]
    for wrong in ("", study["code"], token[:-1], stored):
        assert store.studies.by_organiser_token(wrong) is None
    doc = results.to_json(store, study["id"])
    assert stored not in doc and token not in doc


def test_attention_checks_repeat_with_sides_swapped_and_gold_for_everyone(store):
    study = new_study(store, raters_per_unit=5, repeat_check=True, gold_check=True)
    sid = study["id"]
    assert store.studies.join(sid, "ann") == 5 + 1 + 1  # the prior's five, the gold pair, the repeat
    gold_unit = next(u for u in store.studies.units(sid) if u.gold_item)
    first_left: dict[str, str] = {}

    def decide(task):
        left = store.db.conn.execute("SELECT shown_left FROM study_assignments WHERE study_id=? AND "
                                     "rater_id='ann' AND position=?", (sid, task.position)).fetchone()[0]
        if task.unit_id == gold_unit.unit_id:  # pick the decoy: a failed gold check
            return "right" if left == gold_unit.gold_item else "left"
        if task.unit_id in first_left:  # the repeat: the same item as before, now on the other side
            return "left" if first_left[task.unit_id] == left else "right"
        first_left[task.unit_id] = left
        return "left"
    tasks = rate_through(store, sid, "ann", decide)
    rows = [dict(r) for r in store.db.conn.execute(
        "SELECT * FROM study_assignments WHERE study_id=? AND rater_id='ann' ORDER BY position", (sid,))]
    assert len(tasks) == 8 + 1 + 1
    again = rows[-1]
    assert again["repeat"] == 1
    first = next(r for r in rows if r["unit_id"] == again["unit_id"] and not r["repeat"])
    assert (again["shown_left"], again["shown_right"]) == (first["shown_right"], first["shown_left"])
    assert [r["position"] for r in rows if r["unit_id"] == "u-gold"][0] <= assign.GOLD_SLOTS
    att = results.summary(store, sid, n_boot=10)["attention"].set_index("rater_id")
    n = len(study["settings"].criteria)
    assert att.loc["ann", "repeat_checks"] == n and att.loc["ann", "repeat_passed"] == n
    assert att.loc["ann", "gold_checks"] == n and att.loc["ann", "gold_passed"] == 0
    assert bool(att.loc["ann", "flagged"])


def test_submit_saves_once_validates_and_a_closed_study_refuses(store):
    study = new_study(store)
    sid, crit = study["id"], study["settings"].criteria
    store.studies.join(sid, "ann")
    store.studies.next_task(sid, "ann")
    assert store.studies.submit(sid, "ann", 1, pick("left", crit), rationale="why", confidence=4)
    assert not store.studies.submit(sid, "ann", 1, pick("right", crit))  # a double click: first stands
    rows = store.studies.answer_rows(sid)
    assert len(rows) == len(crit) and {r["choice"] for r in rows} == {"left"}
    assert rows[0]["minutes"] == pytest.approx(5 / 60)  # measured, not typed
    assert store.studies.next_task(sid, "ann").position == 2
    with pytest.raises(InputError, match="choose left, right or tie"):
        store.studies.submit(sid, "ann", 2, {**pick("left", crit), "overall": "both"})
    with pytest.raises(NotFoundError):
        store.studies.submit(sid, "bob", 1, pick("left", crit))  # bob never joined
    with pytest.raises(NotFoundError):
        store.studies.next_task(sid, "bob")
    with pytest.raises(InputError, match="confidence"):
        store.studies.submit(sid, "ann", 2, pick("left", crit), confidence=9)
    assert len(store.studies.answer_rows(sid)) == len(crit)  # nothing half-written
    store.studies.set_status(sid, "closed")
    with pytest.raises(StudyClosedError):
        store.studies.submit(sid, "ann", 2, pick("left", crit))
    with pytest.raises(StudyClosedError):
        store.studies.join(sid, "newcomer")
    assert store.studies.join(sid, "ann") >= 1  # a returning rater can still look


def test_absolute_scores_are_range_checked(store):
    study = new_study(store, mode="absolute")
    sid, crit = study["id"], study["settings"].criteria
    store.studies.join(sid, "ann")
    store.studies.next_task(sid, "ann")
    for bad in (0, 11, 5.5, None, True):
        with pytest.raises(InputError):
            store.studies.submit(sid, "ann", 1, {**{c.name: 5 for c in crit}, "overall": bad})
    assert store.studies.submit(sid, "ann", 1, {c.name: 7 for c in crit})


def test_ten_raters_at_once_lose_double_and_misattribute_nothing(store_at):
    """Ten threads, each with its own Store (own connection) on one store, join and rate
    the same study at once; each also submits every task twice, as a double click would."""
    path = store_at
    organiser = Store(path)
    # Four hours a rater: under this load an item spans many readings of the one shared clock,
    # so the session length (not what this test is about) could end a queue early.
    study = new_study(organiser, raters_per_unit=10, max_units_per_rater=8, minutes_per_rater=240)
    clock = organiser.studies.clock  # one clock for all ten: every item takes at least 1 s
    sid, crit = study["id"], study["settings"].criteria
    start = threading.Barrier(10)
    errors: list[BaseException] = []
    saved: Counter = Counter()

    def rater(n: int) -> None:
        s = Store(path)
        s.studies.clock = clock
        rid = f"rater{n}"
        try:
            start.wait()
            s.studies.join(sid, rid)
            while (t := s.studies.next_task(sid, rid)) is not None:
                choice = ("left", "right", "tie")[(n + t.position) % 3]
                for _ in range(2):
                    if s.studies.submit(sid, rid, t.position, pick(choice, crit), rationale=f"{rid}/{t.position}",
                                        confidence=1 + n % 5):
                        saved[rid] += 1
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=rater, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    rows = organiser.studies.answer_rows(sid)
    assert saved == dict.fromkeys((f"rater{n}" for n in range(10)), 8)
    assert len(rows) == 10 * 8 * len(crit)  # nothing lost, nothing doubled
    keys = Counter((r["rater_id"], r["shown_position"], r["criterion"]) for r in rows)
    assert max(keys.values()) == 1
    for r in rows:  # every answer belongs to the rater and task that gave it
        n = int(r["rater_id"][5:])
        assert r["rationale"] == f"{r['rater_id']}/{r['shown_position']}"
        assert r["choice"] == ("left", "right", "tie")[(n + r["shown_position"]) % 3]
        assert r["confidence"] == 1 + n % 5 and r["minutes"] > 0
    per_unit = Counter(u for (u,) in organiser.db.conn.execute(
        "SELECT unit_id FROM study_assignments WHERE study_id=?", (sid,)))
    assert set(per_unit.values()) == {10}  # the overlap held under the race
    organiser.close()


def rate_all(store, sid, raters, decide):
    crit = store.studies.get(sid)["settings"].criteria
    items = store.studies.items(sid)
    for rid in raters:
        store.studies.join(sid, rid)
        while store.studies.next_task(sid, rid) is not None:
            row = store.db.conn.execute("SELECT * FROM study_assignments WHERE study_id=? AND rater_id=? "
                                        "ORDER BY position DESC", (sid, rid)).fetchone()
            left, right = items[row["shown_left"]], items[row["shown_right"]] if row["shown_right"] else None
            store.studies.submit(sid, rid, row["position"], {c.name: decide(rid, left, right) for c in crit},
                                 rationale=f"{rid} says so")


def real_wins(rid, left, right):
    if right is None:
        return 9 if left.arm == REAL_ARM else 4
    for side, item in (("left", left), ("right", right)):
        if item.arm == REAL_ARM:
            return side
    return "left" if left.arm == "mode: global" else "right"


def test_results_rank_the_arms_and_see_the_real_paper(store):
    study = new_study(store, raters_per_unit=3)
    sid = study["id"]
    rate_all(store, sid, ["ann", "bob", "cat"], real_wins)
    out = results.summary(store, sid, n_boot=200)
    bt = out["bt"]
    assert list(bt["arm"]) == [REAL_ARM, "mode: global", "mode: self"]
    assert (bt["ci_low"] <= bt["strength"]).all() and (bt["strength"] <= bt["ci_high"]).all()
    assert out["real"][stats.ALL]["rate"] == 1.0
    assert out["agreement"]["agreement"] == 1.0
    assert out["alpha"][stats.ALL] == pytest.approx(1.0)
    assert out["win"].loc["mode: global", "mode: self"] == 1.0


def test_absolute_results_means_and_alpha(store):
    study = new_study(store, mode="absolute", raters_per_unit=2)
    sid = study["id"]
    rate_all(store, sid, ["ann", "bob"], real_wins)
    out = results.summary(store, sid, n_boot=10)
    means = out["means"].set_index(["arm", "criterion"])
    assert means.loc[(REAL_ARM, "overall"), "mean"] == 9 and means.loc[("mode: self", "novelty"), "mean"] == 4
    assert out["alpha"][stats.ALL] == pytest.approx(1.0)


def test_vote_alpha_matches_krippendorff_on_outcomes():
    import krippendorff
    import numpy as np

    votes = [stats.Vote("p1", "overall", "a", "x", "y", "left"), stats.Vote("p1", "overall", "b", "y", "x", "right"),
             stats.Vote("p2", "overall", "a", "x", "z", "left"), stats.Vote("p2", "overall", "b", "x", "z", "tie"),
             stats.Vote("p3", "overall", "a", "y", "z", "right"), stats.Vote("p3", "overall", "b", "y", "z", "right")]
    # outcome codes (a = first arm alphabetically won): p1 a/a, p2 a/tie, p3 b/b
    expected = krippendorff.alpha(reliability_data=np.array([[0, 0, 1], [0, 2, 1]], float),
                                  level_of_measurement="nominal")
    assert stats.vote_alpha(votes) == pytest.approx(expected)
    assert stats.vote_alpha(votes[:2]) is None  # one unit, one outcome: nothing to compare


def test_csv_export_is_safe_against_formula_injection_and_keeps_the_record(store):
    study = new_study(store)
    sid, crit = study["id"], study["settings"].criteria
    store.studies.join(sid, "ann")
    hostile = ["=HYPERLINK(\"http://x\")", "+1+1", "-2", "@SUM(A1)", "\tTab"]
    for text in hostile:
        pos = store.studies.next_task(sid, "ann").position
        store.studies.submit(sid, "ann", pos, pick("left", crit), rationale=text)
    frame = results.export_frame(store, sid)
    rows = list(csv.DictReader(io.StringIO(results.to_csv(frame).decode())))
    assert {r["rationale"] for r in rows} == {"'" + t for t in hostile}
    first = rows[0]
    assert first["rater_id"] == "ann" and first["study_code"] == study["code"]
    assert first["shown_position"] == "1" and first["shown_at"] and first["submitted_at"]
    assert first["arm_left"] and first["picked_arm"] == first["arm_left"]
    assert float(first["minutes"]) > 0 and float(first["seconds"]) == 5.0
    doc = json.loads(results.to_json(store, sid))
    assert len(doc["answers"]) == len(rows) and doc["answers"][0]["rationale"] == hostile[0]
    assert len(doc["items"]) == 10


def judge_settings() -> ModelSettings:
    return ModelSettings(model="scripted/judge", temperature=0.0)


def test_judge_rates_pairs_in_both_orders_and_shows_position_bias(store, scripted):
    study = new_study(store, raters_per_unit=2, gold_check=True)
    sid = study["id"]
    rate_all(store, sid, ["ann", "bob"], real_wins)
    scripted.responder = lambda messages, params: json.dumps(
        {c.name: "A" for c in study["settings"].criteria})  # a judge that always picks the first
    done = study_models.run_judge(store, sid, judge_settings())
    assert done["calls"] == 2 * 8  # every ordinary pair in both orders; not the gold pair
    prompts = [h["messages"][-1]["content"] for h in scripted.history]
    assert all("Proposal B:" in p and "novelty" in p for p in prompts)
    out = results.summary(store, sid, n_boot=10)["judge"]["scripted/judge"]
    assert out["pairwise"]["position_flip_rate"] == 1.0 and out["pairwise"]["first_position_rate"] == 1.0
    assert out["pairwise"]["agreement"] == pytest.approx(0.5)  # right in exactly one order of each pair
    assert out["calibration"][stats.ALL]["n"] == 10


def test_judge_scores_items_and_correlates_with_the_humans(store, scripted):
    study = new_study(store, mode="absolute", raters_per_unit=2)
    sid = study["id"]
    rate_all(store, sid, ["ann", "bob"], real_wins)
    items = store.studies.items(sid)
    real_q1 = {i.shown()["q1"] for i in items.values() if i.arm == REAL_ARM}

    def judge(messages, params):  # agrees with the humans: the real paper high
        high = any(q in messages[-1]["content"] for q in real_q1)
        return "Scores: " + json.dumps({c.name: 8 if high else 3 for c in study["settings"].criteria})
    scripted.responder = judge
    study_models.run_judge(store, sid, judge_settings())
    cal = results.summary(store, sid, n_boot=10)["judge"]["scripted/judge"]["calibration"]["overall"]
    assert cal["n"] == 10 and cal["pearson_r"] == pytest.approx(1.0)
    assert cal["pearson_ci_low"] is not None and cal["spearman_rho"] == pytest.approx(1.0)


def test_judge_refuses_the_base_model(store):
    study = new_study(store)
    with pytest.raises(InputError, match="instruction-following"):
        study_models.run_judge(store, study["id"], ModelSettings(model="local/qwen"))


def test_restyle_keeps_the_original_and_is_skipped_for_the_base_model(store, scripted):
    study = new_study(store)
    sid = study["id"]
    assert study_models.restyle(store, sid, ModelSettings(model="local/qwen"))["skipped"]
    assert not scripted.history

    def rewrite(messages, params):
        text = messages[-1]["content"]
        return text[text.index("[Question 1]"):].replace("answer", "Answer (edited)")
    scripted.responder = rewrite
    done = study_models.restyle(store, sid, ModelSettings(model="scripted/style"))
    assert done == {"skipped": False, "restyled": 10, "kept": 0}
    item = next(i for i in store.studies.items(sid).values() if i.source == "run")
    assert "answer 1" in item.answers["q1"] and "Answer (edited) 1" in item.styled["q1"]
    assert "Answer (edited)" in item.shown()["q1"]
    calls = len(scripted.history)
    study_models.restyle(store, sid, ModelSettings(model="scripted/style"))
    assert len(scripted.history) == calls  # cached
    store.studies.join(sid, "ann")
    with pytest.raises(InputError, match="already joined"):
        study_models.restyle(store, sid, ModelSettings(model="scripted/style"))
