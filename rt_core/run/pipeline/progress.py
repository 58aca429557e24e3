"""A run's live progress, folded from its progress events into what the Run page shows: a
bar per group of the run's plan with each agent's line under it, the overall bar, and the
status label (queued, running, stopped by the allowance, failed and where, cancelled,
finished).

Why here and not in the page: the fold decides things a reader relies on (a reviewer's
profile read counts under Reviewing, not Reading; a bar never goes backwards; a failed run
names the stage that stopped it), and a page should only draw what it is given (issue 50:
pages draw, rt_core decides). Here it is a plain function of plain values, tested without
Streamlit (tests/test_progress_fold.py); studio/progress.py draws the record.

The same goes for what a stored run's status means (RESUMABLE_STATUSES: Results and History
offer Resume; UNDER_WAY_STATUSES: the idea map says the run is still writing).

What the end of the job means (failed, cancelled, done) is job_end.py's; this module asks it
rather than deciding again, so the label above the bars and the end line below them agree.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ... import agents
from ...errors import AllowanceSpent
from ...types import ProgressEvent, Run
from . import job_end, plan

QUEUED, RUNNING, SPENT, FAILED, CANCELLED, FINISHED = (
    "queued", "running", "spent", "failed", "cancelled", "finished")
OVERALL = "_overall"  # the key of the overall bar in `shown`, beside the groups'
QUEUE = "queue"  # the stage of a run that waits for a serial model (run/pipeline/warmup.py)
# What a stored run's status means, said once here so that no page decides it: a run that
# stopped short may be resumed (its finished calls come from the cache), and one pending or
# running is still being written.
RESUMABLE_STATUSES = frozenset({"interrupted", "failed", "cancelled"})
UNDER_WAY_STATUSES = frozenset({"pending", "running"})


def stage_title(stage: str) -> str:
    """What a stage is called where progress is shown: its group's bar title, else its name."""
    return plan.GROUPS.get(stage, stage.replace("_", " ").capitalize())


@dataclass(frozen=True)
class Line:
    """One agent under a bar: its latest event."""
    agent: str  # as the pipeline names it; a reviewer's profile read is "profile:<id>"
    status: str  # started, done, failed or cached
    partial: str = ""  # a short piece of its output ("" when none)

    @property
    def profile(self) -> bool:
        return self.agent.startswith(agents.PROFILE)

    def shown_status(self, hits: bool) -> str:
        """An answer from the cache alone reads as done where cache hits are not shown (a hit
        could tell a visitor about somebody else's run: rt_core.access.shows_cache_hits)."""
        return "done" if self.status == "cached" and not hits else self.status

    def who(self, names: Mapping[str, str]) -> str:
        return agents.label(self.agent, names) + (" (reading their papers)" if self.profile else "")


@dataclass(frozen=True)
class Bar:
    group: str
    title: str
    fraction: float  # 0..1, never below what this bar showed before
    lines: tuple[Line, ...]
    failed_here: bool = False


@dataclass(frozen=True)
class Progress:
    """What the progress of one run shows, decided; `label(names)` puts it in words."""
    run_id: str
    state: str  # QUEUED, RUNNING, SPENT, FAILED, CANCELLED or FINISHED
    bars: tuple[Bar, ...]
    overall: float  # 0..1; 1 only for a run that finished with status done
    current: str  # the group being worked on (the last one with events)
    current_title: str
    events: int  # how many progress events were folded
    done: bool  # the job has ended
    complete: bool  # ended and the run is done
    failed_group: str = ""  # where a failed run stopped: a group (or a stage the plan lacks)
    failed_agent: str = ""  # and who, when one agent failed rather than the whole run
    queue_note: str = ""  # while queued for a serial model: what the queue said
    people: frozenset[str] = frozenset()  # researcher ids the lines and errors name
    shown: Mapping[str, float] | None = None  # what to pass as `shown_before` next time

    @property
    def waiting(self) -> str:
        """The sentence shown while the run waits for the embedded model ("" otherwise)."""
        if self.state != QUEUED:
            return ""
        return f"Waiting for the embedded model, which serves one run at a time: {self.queue_note}."

    @property
    def meter(self) -> str:
        """The overall bar's words: a run that ended without finishing says it stopped."""
        pct = f"{int(self.overall * 100)}%"
        return f"{'stopped at ' if self.done and not self.complete else ''}{pct} · {self.events} progress events"

    @property
    def open(self) -> bool:
        """Whether the bars are worth showing unfolded: while it runs, or when it failed."""
        return not self.done or self.state in (FAILED, SPENT)

    def label(self, names: Mapping[str, str]) -> str:
        """The status line above the bars, naming a failed agent by `names` (id -> name)."""
        if self.state == QUEUED:
            return "Queued for the embedded model"
        if self.state == RUNNING:
            return f"Running · {self.current_title}"
        if self.state == SPENT:
            return (f"Run {self.run_id} stopped: the shared demo's tokens for today are used up; "
                    "finished work is kept")
        if self.state == FAILED:
            titles = {b.group: b.title for b in self.bars}
            where = self.failed_group
            at = f" while {titles.get(where) or stage_title(where)}" if where else " while starting"
            by = f" ({agents.label(self.failed_agent, names)})" if self.failed_agent else ""
            return f"Run {self.run_id} failed{at}{by}"
        if self.state == CANCELLED:
            return f"Run {self.run_id} cancelled: finished work is kept"
        return f"Run {self.run_id} finished"


@dataclass(frozen=True)
class _JobView:
    """The fields of a background job that job_end.ending reads, from the fold's arguments."""
    done: bool
    error: Exception | None
    unexpected: str
    run: Run
    kind: str = "run"


def _spent(error, run: Run) -> bool:
    """The shared demo's allowance stopped it: the job's error, or the run's last stage error
    (the rule of job_end.py, which keeps it private)."""
    if isinstance(error, AllowanceSpent):
        return True
    return bool(run.errors) and run.errors[-1].kind == AllowanceSpent.__name__


def _failed_where(run: Run, by_stage: Mapping[str, Mapping[str, ProgressEvent]]) -> tuple[str, str]:
    """(group, agent) where a failed run stopped: the stage its run-level error names (the
    runner records the failing stage's group), else the last agent that failed."""
    group_of = {s.name: s.group for s in plan.plan_for(run.config)}
    for e in reversed(run.errors):
        if e.agent == "run":
            return group_of.get(e.stage) or e.stage, ""
    for stage, seen in reversed(list(by_stage.items())):
        for agent, ev in seen.items():
            if ev.status == "failed":
                return stage, agent
    return (run.errors[-1].stage, run.errors[-1].agent) if run.errors else ("", "")


def _by_stage(events: Iterable[ProgressEvent], authors: set[str]):
    """Each stage's agents by their latest event, each stage's largest announced total, and
    the latest event of the queue."""
    by_stage: dict[str, dict[str, ProgressEvent]] = {}
    totals: dict[str, int] = {}
    queue_event = None
    for e in events:
        if e.stage == QUEUE:
            queue_event = e
            continue
        if e.stage == "read" and e.agent not in authors:
            # Reviewers' profiles are read during reviewing: counting them under Reading
            # would pull its finished bar back (6 of 6, then 6 of 9).
            by_stage.setdefault("review", {})[f"{agents.PROFILE}{e.agent}"] = e
            continue
        by_stage.setdefault(e.stage, {})[e.agent] = e
        totals[e.stage] = max(totals.get(e.stage, 0), e.total)
    return by_stage, totals, queue_event


def fold(events: Iterable[ProgressEvent], run: Run, plan_groups: Iterable[tuple[str, str]] | None = None,
         done: bool = False, error: Exception | None = None, unexpected: str = "",
         shown_before: Mapping[str, float] | None = None) -> Progress:
    """The progress of `run` from its events so far. `plan_groups`: the (group, title) bars
    of its plan (default: plan.progress_groups of its settings); `done`, `error`,
    `unexpected`: how its job stands; `shown_before`: the fractions this viewer was shown
    last time (`Progress.shown` of the previous fold), so no bar goes backwards."""
    events = list(events)
    groups = list(plan_groups if plan_groups is not None else plan.progress_groups(run.config))
    titles = dict(groups)
    order = list(titles)
    before = dict(shown_before or {})
    by_stage, totals, queue_event = _by_stage(events, set(run.config.researcher_ids))

    fractions = []
    for group in order:
        in_stage = by_stage.get(group, {})
        total = max(len(in_stage), totals.get(group, 0))
        finished = sum(1 for e in in_stage.values() if e.status != "started")
        fractions.append(max(finished / total if total else 0.0, before.get(group, 0.0)))
    current = next((g for g in reversed(order) if g in by_stage), order[0] if order else "")

    end = job_end.ending(_JobView(done, error, unexpected, run))
    failed = end is not None and end.state == job_end.FAILED
    complete = end is not None and not failed and run.status == job_end.DONE
    overall = 1.0 if complete else min(0.99, sum(fractions) / max(1, len(order)))
    overall = max(overall, before.get(OVERALL, 0.0))
    where, who = _failed_where(run, by_stage) if failed else ("", "")

    queued = not done and queue_event is not None and queue_event.status == "waiting" and not by_stage
    if queued:
        state = QUEUED
    elif not done:
        state = RUNNING
    elif failed:
        state = SPENT if _spent(error, run) else FAILED
    elif end is not None and end.state == job_end.CANCELLED:
        state = CANCELLED
    else:
        state = FINISHED

    bars = tuple(Bar(g, titles[g], f, tuple(Line(a, e.status, e.partial) for a, e in by_stage.get(g, {}).items()),
                     failed_here=failed and g == where)
                 for g, f in zip(order, fractions, strict=True))
    named = [*(a for s in by_stage.values() for a in s), *(e.agent for e in run.errors)]
    return Progress(run_id=run.id, state=state, bars=bars, overall=overall, current=current,
                    current_title=titles.get(current, current), events=len(events), done=done,
                    complete=complete, failed_group=where, failed_agent=who,
                    queue_note=queue_event.partial if queued else "",
                    people=frozenset(agents.people(named)),
                    shown={**before, **dict(zip(order, fractions, strict=True)), OVERALL: overall})


def for_job(job, shown_before: Mapping[str, float] | None = None) -> Progress:
    """The fold of a run's background job (jobs.Job): its events, run and end so far."""
    return fold(job.snapshot(), job.run, None, job.done, job.error, job.unexpected, shown_before)
