"""What the end of a background job means: done, failed or cancelled, the sentence that says so,
what to put in words for the user, and where they can go next.

Why here and not in the pages: three pages poll a background job (a run on the Run page, more
revision rounds on Results, a replay) and each used to read the job's fields and decide for
itself, so the same end read differently depending on the page (one named the unexpected
error, another did not say a run was cancelled). The pages now draw this record
(studio/job_end.py) and nothing else decides.

It reads a job's plain fields only (`done`, `error`, `unexpected`, `kind` and, for a run's job,
`run`), so any BackgroundJob of jobs.py or run/replay fits.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import AllowanceSpent, RTError

DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
NOUNS = {"run": "run", "revise": "revision", "replay": "replay"}


@dataclass(frozen=True)
class End:
    """How one background job ended."""
    state: str  # DONE, FAILED or CANCELLED
    message: str  # the end in one sentence of the app's words
    error: RTError | None = None  # an expected error, for the UI edge to put in words
    unexpected: str = ""  # a sentence naming an error nobody expected ("" when none)
    results_run: str = ""  # the run whose results can be opened next ("" when none)
    announce: bool = False  # the message is the page's success line (a run's own end)


def _spent(job, run) -> bool:
    """The shared demo's allowance stopped it: the job's error, or the run's last stage error."""
    if isinstance(job.error, AllowanceSpent):
        return True
    errors = getattr(run, "errors", None) or []
    return bool(errors) and errors[-1].kind == AllowanceSpent.__name__


def ending(job, took: str = "") -> End | None:
    """The end of `job`, or None while it still runs. `took` is a finished run's wall time in
    the one wording Results and History use ('Wall time: estimated ..., took ...'); without it
    the line says only that the run is done, never a second wording of its time."""
    if not job.done:
        return None
    kind = getattr(job, "kind", "run")
    noun = NOUNS.get(kind, "job")
    run = getattr(job, "run", None)  # a replay's job has several runs, none of its own
    status = getattr(run, "status", "")
    unexpected = f"The {noun} stopped unexpectedly: {job.unexpected}" if job.unexpected else ""
    opens = run.id if kind == "run" and (run.proposal is not None or status == DONE) else ""
    if job.error is not None or job.unexpected or status == FAILED:
        if _spent(job, run):
            message = (f"The {noun} stopped: the shared demo's tokens for today are used up; "
                       "finished work is kept.")
        else:
            message = f"The {noun} failed; finished work is kept."
        return End(FAILED, message, job.error, unexpected, opens)
    if status == CANCELLED:
        return End(CANCELLED, f"The {noun} was cancelled; finished work is kept.",
                   results_run=opens)
    if kind == "run":
        done = f"Done. {took}." if took else "Done."
        return End(DONE, f"{done} The proposal, reviews and scores are on the Results page.",
                   results_run=opens, announce=status == DONE)
    if kind == "revise":
        return End(DONE, "The new revision rounds are in: they are shown above.")
    return End(DONE, f"The {noun} finished.")
