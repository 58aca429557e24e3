"""Revision rounds against a loopback OpenAI-compatible server that answers every chat
call after a fixed latency L (tests/openai_server.py), with the local embedder.

A revision round is three dependent model rounds: the authors' revision (one call), the
k reviewers' reviews (k calls at once) and the meta-review (one call), so its critical
path is 3 x L and it makes k + 2 calls. The bench first runs the case study without
revision (filling the cache), then the same run with R rounds: every first-round call
comes from the cache, so the requests the server sees and the time of the 'revise'
group (run.timings, the sum of the round stages' durations) are the rounds' own. The
scripted replies improve on request (tests/revisehelp.py), so no round stops early.
A warm re-run of the revised run must make 0 calls.

    .venv/bin/python bench/bench_revise.py [--latency 0.5] [--repeats 5] [--rounds 2] [--reviewers 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core import community  # noqa: E402
from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.run.pipeline.warmup import warm_up  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402
from tests.revisehelp import improving  # noqa: E402

DEPTH = 3  # revise, review, meta-review


def one_run(server, store, cfg: dict, rounds: int):
    before = len(server.requests)
    config = RunConfig(**cfg, revision_rounds=rounds, model="openai/bench", base_url=server.base_url,
                       concurrency=10)
    run = Simulation(RunRequest.with_key(config, "sk-bench"), store, embedder=Embedder(store=store)).run_sync()
    assert run.status == "done", run.errors
    return run, len(server.requests) - before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--authors", type=int, default=2)
    ap.add_argument("--reviewers", type=int, default=5)
    args = ap.parse_args()
    warm_up().join()
    reply = improving(ceiling=10)
    server = OpenAIServer(responder=lambda msgs: reply(msgs, {}), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    per_round_wall, per_round_calls, reviewers = [], [], []
    try:
        for i in range(args.repeats):
            store = Store(tmp / f"bench-{i}.sqlite3")
            community.ensure_loaded(store)
            preset = community.preset("nlp-astronomy")
            cfg = dict(researcher_ids=preset["researcher_ids"][:args.authors],
                       paper_ids=preset["paper_ids"][:3], num_reviewers=args.reviewers)
            one_run(server, store, cfg, 0)  # the first round, cached
            run, calls = one_run(server, store, cfg, args.rounds)
            done = len(run.rounds) - 1
            assert done == args.rounds, [r.stopped for r in run.rounds]
            per_round_wall.append(run.timings["revise"] / done)
            per_round_calls.append(calls / done)
            # Reviewers whose personas came out identical send identical prompts: one call.
            reviewers.append(len({run.profiles[r.reviewer_id].text for r in run.rounds[0].reviews}))
            _again, warm_calls = one_run(server, store, cfg, args.rounds)
            assert warm_calls == 0 and _again.usage.calls == 0
            store.close()
    finally:
        server.close()
    ideal = DEPTH * args.latency
    med = statistics.median(per_round_wall)
    print(f"latency L={args.latency}s, k={args.reviewers} reviewers, R={args.rounds} rounds, "
          f"{args.repeats} repeats; load average {os.getloadavg()[0]:.2f}")
    k = statistics.median(reviewers)
    print(f"calls per revision round: median {statistics.median(per_round_calls):.0f} "
          f"(expected distinct reviewer prompts + 2 = {k:.0f} + 2, of {args.reviewers} reviewers: the "
          f"scripted personas of some coincide, and an identical prompt is one call); warm re-run: 0")
    print(f"wall per round: median {med:.2f}s (min {min(per_round_wall):.2f}, max "
          f"{max(per_round_wall):.2f}); critical path {DEPTH} x L = {ideal:.2f}s; ratio {med / ideal:.3f}")


if __name__ == "__main__":
    main()
