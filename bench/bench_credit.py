"""Leave-one-out credit against a loopback OpenAI-compatible server (latency L per call):
the calls it makes against the stated formula, and its wall time against its critical path.

A full run (M authors, R reviewers) is made first; then `rt_core.run.credit` re-writes it
without each author in turn. Profiles, reviewer choice and every unchanged call come
from the store and the call cache, so only the changed calls reach the server:
M x (agg(M-1) + R), agg(n) = 1 when n >= 2 drafts remain (the aggregate), 0 for one.
The variants run at the same time, so the critical path is one variant's: the aggregate,
then the R reviews side by side: 2 x L.

The server's replies depend on who is present (each draft carries its author's persona,
the merged proposal names its drafts), as a real model's would; with replies that ignore
the drafts, identical prompts would be cached and fewer calls made than the formula says.

    .venv/bin/python bench/bench_credit.py [--latency 0.5] [--repeats 3] [--authors 5]
"""
from __future__ import annotations

import argparse
import hashlib
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
from rt_core.models import registry  # noqa: E402
from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.models.scripted import demo_responder  # noqa: E402
from rt_core.run.credit import variants as credit  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.run.pipeline.warmup import warm_up  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402

ROUNDS = 2  # aggregate, then the reviews


def responder(msgs: list) -> str:
    """The demo model's replies, made to depend on who wrote what."""
    reply = demo_responder(msgs, {})
    user = str(msgs[-1].get("content", ""))
    if "team members' drafts" in user:  # the merged proposal names its drafts
        tag = hashlib.sha256(user.encode()).hexdigest()[:8]
        return reply.replace("How can methods", f"Drawing on draft set {tag}, how can methods", 1)
    if "[Question 1]" in user and "You are reviewing" not in user:  # a draft: the persona shows
        persona = " ".join(str(msgs[0].get("content", "")).split()[:8])
        return reply.replace("We build", f"{persona} We build", 1)
    return reply


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--authors", type=int, default=5)
    ap.add_argument("--reviewers", type=int, default=3)
    args = ap.parse_args()
    warm_up().join()
    server = OpenAIServer(responder=responder, latency=args.latency)
    tmp = Path(tempfile.mkdtemp())
    walls, calls, expected = [], [], 0
    try:
        for i in range(args.repeats):
            store = Store(tmp / f"credit-{i}.sqlite3")
            community.ensure_loaded(store)
            people = [r.id for r in store.corpus.search_researchers(fields=["nlp"], limit=50)]
            people += [r.id for r in store.corpus.search_researchers(fields=["astronomy"], limit=50)]
            papers = [p.id for p in store.corpus.search_papers(fields=["nlp"], limit=3)] + \
                     [p.id for p in store.corpus.search_papers(fields=["astronomy"], limit=2)]
            cfg = RunConfig(researcher_ids=people[:args.authors], paper_ids=papers,
                            num_reviewers=args.reviewers, concurrency=10, model="openai/bench",
                            base_url=server.base_url)
            request = RunRequest.with_key(cfg, "sk-bench")
            run = Simulation(request, store, embedder=Embedder(store=store)).run_sync()
            assert run.status == "done", run.errors
            r = len(credit.reviewers_of(run))
            expected = credit.formula(registry.CHAT, args.authors, r)
            before = len(server.chat_requests())
            started = time.perf_counter()
            result = credit.leave_one_out(run, store, request)
            walls.append(time.perf_counter() - started)
            calls.append(len(server.chat_requests()) - before)
            assert result.usage.calls == calls[-1], (result.usage.calls, calls[-1])
            store.close()
    finally:
        server.close()
    ideal = ROUNDS * args.latency
    med = statistics.median(walls)
    print(f"latency L={args.latency}s, M={args.authors} authors, R={r} reviewers, {args.repeats} "
          f"repeats; load average {os.getloadavg()[0]:.2f}")
    print(f"calls: median {statistics.median(calls):.0f} (all: {calls}); formula M x (agg(M-1) + R) "
          f"= {expected}; estimate {result.estimate.calls.calls}")
    print(f"wall: median {med:.2f}s (min {min(walls):.2f}, max {max(walls):.2f}); critical path "
          f"{ROUNDS} x L = {ideal:.2f}s; ratio {med / ideal:.3f}")


if __name__ == "__main__":
    main()
