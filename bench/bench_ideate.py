"""Several candidates and their tournament: wall time against the plan's critical path,
model calls against the stated formula, and a warm re-run (0 calls).

Loopback (default): an OpenAI-compatible server on 127.0.0.1 answers every chat call after
a latency L (tests/openai_server.py: the demo responder, whose judge prefers one side by a fixed
rule, and one distinct topic per led candidate, tests/ideas.py). n candidates, M authors, k reviewers, the local
MiniLM embedder, concurrency high enough for the widest round (n x k reviews).

Dependent model rounds of the plan (run/pipeline/plan.py): read authors, drafts, the n led merges
(3 rounds), then the reviewing (read reviewers, reviews, meta-reviews: 3 rounds) and the
tournament's R(n) = ceil(log2 n) + 1 Swiss rounds side by side, since the judge needs no
review. So the plan's own critical path is (3 + max(3, R(n))) x L; the issue's reference
(one candidate's 6 rounds plus the tournament's, run one after the other) is (6 + R(n)) x L.

Calls of a cold run, for n_live candidates left after merging:
    2M (profiles, drafts) + n (led merges) + k (reviewer profiles) + n_live k (reviews)
    + n_live (meta-reviews) + 2 P(n_live) (judge, P from run/candidates/tournament.py) [+ re-asks]

--embedded: n = 4 candidates of the NLP + Astronomy preset on the bundled Gemma 3 270M
against one proposal of the same settings, each on a fresh store (slow: run it once).

    .venv/bin/python bench/bench_ideate.py [--latency 0.5] [--repeats 3] [--candidates 6]
    .venv/bin/python bench/bench_ideate.py --embedded
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())

from rt_core import community  # noqa: E402
from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.models.scripted import demo_responder  # noqa: E402
from rt_core.run.candidates.judging import planned_pairs, rounds  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.run.pipeline.warmup import warm_up  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.ideas import proposal  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402


def neighbourhood(store, m: int) -> tuple[list[str], list[str]]:
    people = [r.id for r in store.corpus.search_researchers(fields=["nlp"], limit=50)]
    people += [r.id for r in store.corpus.search_researchers(fields=["astronomy"], limit=50)]
    authors = people[:m - m // 2] + [r.id for r in store.corpus.search_researchers(
        fields=["astronomy"], limit=m)][:m // 2]
    papers = [p.id for p in store.corpus.search_papers(fields=["nlp"], limit=3)] + \
             [p.id for p in store.corpus.search_papers(fields=["astronomy"], limit=2)]
    return list(dict.fromkeys(authors)), papers


def responder(distinct: bool):
    """The demo responder; with `distinct`, each led candidate gets its own topic
    (tests/ideas.py), so none is merged and the tournament has all n to rank."""
    seen: dict[str, int] = {}

    def reply(msgs: list) -> str:
        prompt = str(msgs[-1].get("content", "")) if msgs else ""
        if distinct and "The direction of this proposal:" in prompt:
            lead = prompt.split("The direction of this proposal:", 1)[1].split("\n", 1)[0]
            return proposal(seen.setdefault(lead, len(seen)) + 1)
        return demo_responder(msgs, {})

    return reply


def formula(m: int, n: int, live: int, k: int) -> int:
    return 2 * m + n + k + live * k + live + 2 * planned_pairs(live)


def one_run(server, store, cfg: RunConfig):
    before = len(server.chat_requests())
    started = time.perf_counter()
    run = Simulation(RunRequest.with_key(cfg, "sk-bench"), store, embedder=Embedder(store=store)).run_sync()
    wall = time.perf_counter() - started
    assert run.status == "done", run.errors
    return wall, len(server.chat_requests()) - before, run


def loopback(args) -> None:
    warm_up().join()  # as the app does before Start can be pressed
    server = OpenAIServer(responder=responder(not args.demo_candidates), latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    walls, extra = [], []
    n, k = args.candidates, args.reviewers
    try:
        for i in range(args.repeats):
            store = Store(tmp / f"ideate-{i}.sqlite3")
            community.ensure_loaded(store)
            authors, papers = neighbourhood(store, args.authors)
            cfg = RunConfig(researcher_ids=authors, paper_ids=papers, num_reviewers=k, candidates=n,
                            concurrency=max(n * k, 2 * len(authors)), model="openai/bench",
                            base_url=server.base_url)
            wall, calls, run = one_run(server, store, cfg)
            live = len(run.tournament.order)
            expected = formula(len(authors), n, live, k)
            walls.append(wall)
            extra.append(calls - expected)
            _, warm_calls, warm = one_run(server, store, cfg)
            assert warm_calls == 0 and warm.usage.calls == 0
            print(f"  run {i}: {wall:.2f}s, {calls} calls (formula {expected}, {live} live of {n}, "
                  f"{run.tournament.merged} merged); re-run {warm_calls} calls; timings {run.timings}")
    finally:
        server.close()
    r = rounds(n)
    plan_path = (3 + max(3, r)) * args.latency
    issue_path = (6 + r) * args.latency
    med = statistics.median(walls)
    print(f"L={args.latency}s n={n} M={args.authors} k={k}, {args.repeats} repeats; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"median wall {med:.2f}s; plan critical path (3 + max(3, R={r})) x L = {plan_path:.2f}s, "
          f"ratio {med / plan_path:.3f}; issue reference (6 + R) x L = {issue_path:.2f}s, ratio "
          f"{med / issue_path:.3f}")
    print(f"calls above the formula (re-asks): median {statistics.median(extra):.0f}; warm re-run: 0 calls")


def embedded(args) -> None:
    from rt_core.models.local import BUNDLED_NAME, engine

    t = time.perf_counter()
    engine(BUNDLED_NAME)  # loaded before either run is timed, so neither pays for it
    print(f"  model load {time.perf_counter() - t:.1f}s (not timed in the runs)")
    tmp = Path(tempfile.mkdtemp())
    out = {}
    for label, n in (("one proposal", 1), (f"{args.embedded_n} candidates", args.embedded_n)):
        store = Store(tmp / f"embedded-{n}.sqlite3")  # fresh: nothing cached
        community.ensure_loaded(store)
        p = community.preset("nlp-astronomy")
        cfg = RunConfig(researcher_ids=p["researcher_ids"], paper_ids=p["paper_ids"], num_reviewers=3,
                        candidates=n)
        t = time.perf_counter()
        run = Simulation(RunRequest(cfg), store).run_sync()
        out[n] = time.perf_counter() - t
        assert run.status == "done", run.errors
        detail = ""
        if run.tournament:
            detail = (f"; {run.tournament.merged} merged, ranked by {run.tournament.method}: "
                      f"{run.tournament.order}; signals {[c.signals for c in run.candidates]}")
        print(f"  {label}: {out[n]:.1f}s wall, {run.usage.calls} calls, timings {run.timings}{detail}; "
              f"store {tmp / f'embedded-{n}.sqlite3'} run {run.id}")
    print(f"embedded, NLP + Astronomy preset, 3 reviewers: {args.embedded_n} candidates "
          f"{out[args.embedded_n]:.1f}s vs one proposal {out[1]:.1f}s: ratio "
          f"{out[args.embedded_n] / out[1]:.2f} (goal <= 2.5); load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--authors", type=int, default=3)
    ap.add_argument("--reviewers", type=int, default=3)
    ap.add_argument("--demo-candidates", action="store_true",
                    help="the demo responder's candidates (one frame, two concepts each: some merge)")
    ap.add_argument("--embedded", action="store_true", help="the embedded-model figure instead")
    ap.add_argument("--embedded-n", type=int, default=4)
    args = ap.parse_args()
    embedded(args) if args.embedded else loopback(args)


if __name__ == "__main__":
    main()
