"""The fold of a run's progress events (rt_core/run/pipeline/progress.py): what the Run page's
bars, agent lines and status label say, decided from plain events and a plain Run, without
Streamlit. The page (studio/progress.py) only draws the record; tests/test_app.py and
tests/test_app_links.py check the drawing."""
from __future__ import annotations

from rt_core.errors import AllowanceSpent
from rt_core.run.pipeline import progress
from rt_core.run.pipeline.plan import progress_groups
from rt_core.types import ProgressEvent, Run, RunConfig, StageError

AUTHORS = ["r-ada", "r-bo"]
NAMES = {"r-ada": "Ada Lovelace", "r-bo": "Bo Li", "r-cy": "Cy Young"}


def run(status: str = "running", errors: list[StageError] | None = None) -> Run:
    return Run(id="run-9", config=RunConfig(researcher_ids=AUTHORS, paper_ids=["p1"], num_reviewers=1),
               status=status, errors=errors or [])


def ev(stage: str, agent: str, done: int, total: int, status: str = "done", partial: str = "") -> ProgressEvent:
    return ProgressEvent(stage=stage, agent=agent, done=done, total=total, status=status, partial=partial)


READ = [ev("read", "r-ada", 1, 2), ev("read", "r-bo", 2, 2)]
WRITE = [ev("write", "r-ada", 0, 2, "started"), ev("write", "r-ada", 1, 2, partial="a draft")]


def bar(p: progress.Progress, group: str) -> progress.Bar:
    return next(b for b in p.bars if b.group == group)


def test_the_bars_are_the_plans_groups_in_order():
    r = run()
    p = progress.fold(READ, r)
    assert [(b.group, b.title) for b in p.bars] == progress_groups(r.config)
    assert p.state == progress.RUNNING and p.label(NAMES) == "Running · Reading: researcher profiles"


def test_a_reviewers_profile_read_counts_under_reviewing_not_reading():
    # Reading was 2 of 2; a reviewer's profile is read later, while reviewing.
    events = [*READ, *WRITE, ev("read", "r-cy", 3, 3, "started")]
    p = progress.fold(events, run())
    assert bar(p, "read").fraction == 1.0
    assert [line.agent for line in bar(p, "read").lines] == AUTHORS
    [line] = bar(p, "review").lines
    assert line.agent == "profile:r-cy" and line.profile
    assert line.who(NAMES) == "Cy Young (reading their papers)"
    assert "r-cy" in p.people
    assert p.current == "review"


def test_a_bar_never_goes_backwards_across_folds():
    r = run()
    first = progress.fold([*READ, ev("write", "r-ada", 1, 1)], r)
    assert bar(first, "write").fraction == 1.0
    # The next poll learns that writing has more work (the joint proposal): 1 of 3 now.
    more = [*READ, ev("write", "r-ada", 1, 3), ev("write", "aggregator", 1, 3, "started"),
            ev("write", "r-bo", 1, 3, "started")]
    fresh = progress.fold(more, r)
    assert bar(fresh, "write").fraction < 1.0  # without memory it would go back ...
    again = progress.fold(more, r, shown_before=first.shown)
    assert bar(again, "write").fraction == 1.0  # ... with it, it keeps what it showed
    assert again.overall >= first.overall
    assert again.shown["write"] == 1.0


def test_a_run_level_error_names_the_group_that_stopped_and_marks_its_bar():
    # The joint proposal (stage aggregate) failed for the whole run: group "write".
    r = run("failed", [StageError(stage="aggregate", agent="run", kind="ModelError", message="no reply")])
    p = progress.fold([*READ, *WRITE], r, done=True)
    assert p.state == progress.FAILED and p.failed_group == "write" and p.failed_agent == ""
    assert p.label(NAMES) == "Run run-9 failed while Writing: drafts and the joint proposal"
    assert [b.group for b in p.bars if b.failed_here] == ["write"]
    assert p.overall < 1.0 and p.meter.startswith("stopped at ") and p.open


def test_a_failed_agent_is_named_when_no_run_level_error_says_where():
    events = [*READ, ev("write", "r-bo", 1, 2, "failed")]
    r = run("failed", [StageError(stage="write", agent="r-bo", kind="ModelError", message="timed out")])
    p = progress.fold(events, r, done=True)
    assert p.label(NAMES) == "Run run-9 failed while Writing: drafts and the joint proposal (Bo Li)"


def test_an_unexpected_error_fails_the_run_even_before_its_status_says_so():
    p = progress.fold(READ, run("running"), done=True, unexpected="KeyError: 'x'")
    assert p.state == progress.FAILED and p.label(NAMES) == "Run run-9 failed while starting"
    assert not p.complete


def test_a_cancelled_run_keeps_its_work_and_stops_short():
    p = progress.fold([*READ, *WRITE], run("cancelled"), done=True)
    assert p.state == progress.CANCELLED
    assert p.label(NAMES) == "Run run-9 cancelled: finished work is kept"
    assert p.overall < 1.0 and p.meter.startswith("stopped at ") and not p.open
    assert not any(b.failed_here for b in p.bars)


def test_a_spent_allowance_says_so_whether_the_run_or_the_job_recorded_it():
    spent = StageError(stage="write", agent="run", kind=AllowanceSpent.__name__, message="used up")
    by_run = progress.fold([*READ, *WRITE], run("failed", [spent]), done=True)
    by_job = progress.fold(READ, run("failed"), done=True, error=AllowanceSpent("used up"))
    for p in (by_run, by_job):
        assert p.state == progress.SPENT
        assert "the shared demo's tokens for today are used up" in p.label(NAMES)
        assert p.meter.startswith("stopped at ")


def test_a_queued_run_waits_until_its_first_stage_reports():
    queue = ev("queue", "run", 0, 1, "waiting", partial="one run ahead")
    p = progress.fold([queue], run())
    assert p.state == progress.QUEUED and p.label(NAMES) == "Queued for the embedded model"
    assert p.waiting == "Waiting for the embedded model, which serves one run at a time: one run ahead."
    going = progress.fold([queue, ev("read", "r-ada", 0, 2, "started")], run())
    assert going.state == progress.RUNNING and going.waiting == ""


def test_a_finished_run_fills_the_bar_and_folds_its_details_away():
    events = [*READ, ev("write", "r-ada", 2, 2), ev("review", "r-cy", 1, 1)]
    p = progress.fold(events, run("done"), done=True)
    assert p.state == progress.FINISHED and p.complete and p.overall == 1.0
    assert p.label(NAMES) == "Run run-9 finished" and p.meter == f"100% · {len(events)} progress events"
    assert not p.open


def test_a_cached_answer_reads_as_done_where_cache_hits_are_hidden():
    line = progress.Line("r-ada", "cached")
    assert line.shown_status(hits=True) == "cached" and line.shown_status(hits=False) == "done"
