"""What the end of a background job means (rt_core/run/pipeline/job_end.py), decided once for
the three pages that poll one: each end state gives its own words, the error to put in words,
and whether the results can be opened next. Real background threads; the work they do is
set by each test (a run's stages are not what is under test here)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from rt_core.errors import AllowanceSpent, InputError
from rt_core.run.pipeline.job_end import CANCELLED, DONE, FAILED, ending
from rt_core.run.pipeline.jobs import BackgroundJob
from rt_core.types import Proposal, Run, RunConfig, StageError


@dataclass(kw_only=True)
class Ended(BackgroundJob):
    """A job whose work is `work`, with a run as a run's job has."""
    work: Callable[[Run], None]
    run_record: Run | None = None
    kind: str = "run"

    @property
    def run(self) -> Run:
        return self.run_record

    def _work(self) -> None:
        self.work(self.run_record)


def finish(work, kind: str = "run"):
    job = Ended(work=work, kind=kind, run_record=Run(id="run-7", config=RunConfig()))
    job.launch("test-job")
    assert job.wait(30)
    return job


def status(value: str, proposal: bool = False, **more):
    def work(run: Run) -> None:
        run.status = value
        run.proposal = Proposal() if proposal else None
        for k, v in more.items():
            setattr(run, k, v)
    return work


def raising(exc: Exception):
    def work(run: Run) -> None:
        run.status = "failed"
        raise exc
    return work


def test_a_running_job_has_no_end():
    job = Ended(work=status("done"), run_record=Run(id="r", config=RunConfig()))
    assert ending(job) is None  # never launched: still to run


@pytest.mark.parametrize("work, kind, state, words, opens, announce", [
    (status("done", proposal=True, timings={"read": 1.0, "write": 2.5}), "run", DONE,
     "Done. The proposal, reviews and scores are on the Results page.", "run-7", True),
    (status("cancelled"), "run", CANCELLED, "The run was cancelled; finished work is kept.", "", False),
    (status("cancelled", proposal=True), "run", CANCELLED, "The run was cancelled", "run-7", False),
    (status("failed"), "run", FAILED, "The run failed; finished work is kept.", "", False),
    (status("failed", errors=[StageError("write", "run", "AllowanceSpent", "used up")]), "run",
     FAILED, "the shared demo's tokens for today are used up", "", False),
    (raising(AllowanceSpent("no tokens left today")), "run", FAILED,
     "the shared demo's tokens for today are used up", "", False),
    (status("done"), "revise", DONE, "The new revision rounds are in", "", False),
    (status("failed"), "revise", FAILED, "The revision failed", "", False),
])
def test_each_end_state_gives_its_words(work, kind, state, words, opens, announce):
    end = ending(finish(work, kind))
    assert end.state == state
    assert words in end.message
    assert end.results_run == opens
    assert end.announce is announce


def test_an_expected_error_is_handed_on_and_an_unexpected_one_named():
    bad = InputError("the topic is empty")
    end = ending(finish(raising(bad)))
    assert end.state == FAILED and end.error is bad and end.unexpected == ""
    end = ending(finish(raising(KeyError("profile")), kind="revise"))
    assert end.state == FAILED and end.error is None
    assert end.unexpected == "The revision stopped unexpectedly: KeyError: 'profile'"


def test_a_replay_ends_without_a_run_of_its_own():
    class ReplayLike(BackgroundJob):
        kind = "replay"

        def _work(self) -> None:
            return None

    job = ReplayLike()
    job.launch("test-replay")
    assert job.wait(30)
    end = ending(job)
    assert (end.state, end.message, end.results_run) == (DONE, "The replay finished.", "")


def test_a_finished_run_says_its_time_in_the_words_results_and_history_use():
    """The Run page's end line once had its own wording of the time ("Done in 3.5 s") beside
    Results' and History's "Wall time: estimated ..., took ..."; now it carries theirs."""
    job = finish(status("done", proposal=True, timings={"read": 1.0}))
    end = ending(job, "Wall time: estimated about 3 s, took about 4 s")
    assert end.message == ("Done. Wall time: estimated about 3 s, took about 4 s. The proposal, "
                           "reviews and scores are on the Results page.")
