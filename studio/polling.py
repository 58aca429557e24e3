"""How often a page redraws work that is still going (progress of a run, a replay, a
revision round, a steered idea): every POLL_SECONDS, and not at all once it is done.

Why not every second: on the machine that runs the model, the browser is a contender. The
app's default run on the embedded model, started in Chromium on the same two cores, took
244-247 s with the Run page redrawn every second, 173 s every 2 s, 132 s every 4 s, and
97 s with the page closed (docs/PERFORMANCE.md, "The page that watches the run"). Each
redraw cost Chromium about a quarter of a CPU-second, and llama.cpp's threads, which wait
for each other at every token, slow down badly beside a busy core. Three seconds is still
often enough to see the bars move in a run that lasts a minute or more.
"""
from __future__ import annotations

POLL_SECONDS = 3.0


def every(done: bool) -> float | None:
    """A fragment's `run_every`: None (no redraws) for finished work."""
    return None if done else POLL_SECONDS
