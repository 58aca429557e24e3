"""What litellm's Router adds to a model call, and what a fleet gains under latency.

Against loopback OpenAI-compatible servers (tests/openai_server.py), through the model
client (rt_core.models.client.LLMClient, no store, so no cache):
  1. per-call time, one call at a time, to one server: direct (`openai/m` with a base
     URL) versus routed (a router file with that one server): the Router's own overhead;
  2. wall time of a batch of calls at once, each server answering after `--latency`
     seconds and serving one request at a time: one server direct versus three servers
     behind the Router: what spreading the load buys.
Prints medians over the repeats. Run:

    .venv/bin/python bench/bench_router.py [--calls 40] [--latency 0.2] [--repeats 3]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rt_core.models import router  # noqa: E402
from rt_core.models.client import LLMClient, ModelSettings  # noqa: E402
from rt_core.models.registry import run_async  # noqa: E402
from tests.fleet import write_router_file  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402


class OneAtATime(OpenAIServer):
    """A server that answers one request at a time (a single GPU), after `latency`."""

    def __init__(self, latency: float):
        self.gate = threading.Lock()
        super().__init__(responder=self._answer, latency=0.0)
        self.delay = latency

    def _answer(self, messages) -> str:
        return "ok"

    def _next(self, path, body, headers):
        with self.gate:
            time.sleep(self.delay)  # the simulated model's own time, not synchronisation
            return super()._next(path, body, headers)


def settings(model: str, base_url: str = "") -> ModelSettings:
    return ModelSettings(model=model, base_url=base_url, api_key="k" if base_url else "",
                         timeout=60)


async def one_by_one(s: ModelSettings, calls: int, tag: str) -> list[float]:
    client = LLMClient(s)
    times = []
    for i in range(calls):
        start = time.perf_counter()
        await client.complete([{"role": "user", "content": f"{tag} {i}"}], max_tokens=8)
        times.append(time.perf_counter() - start)
    return times


async def at_once(s: ModelSettings, calls: int, tag: str) -> float:
    client = LLMClient(s, concurrency=calls)
    start = time.perf_counter()
    await asyncio.gather(*[client.complete([{"role": "user", "content": f"{tag} {i}"}], max_tokens=8)
                           for i in range(calls)])
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-router-"))
    single = OpenAIServer(responder=lambda messages: "ok")
    slow = [OneAtATime(args.latency) for _ in range(3)]
    direct_ms, routed_ms, one_s, fleet_s = [], [], [], []
    try:
        for r in range(args.repeats):
            router.install(write_router_file(folder / f"one{r}.yaml", [single]))
            direct_ms.append(1000 * statistics.median(
                run_async(one_by_one(settings("openai/m", single.base_url), args.calls, f"d{r}"))))
            routed_ms.append(1000 * statistics.median(
                run_async(one_by_one(settings("lab-llm"), args.calls, f"r{r}"))))
            router.install(write_router_file(folder / f"three{r}.yaml", slow))
            one_s.append(run_async(at_once(settings("openai/m", slow[0].base_url), args.calls, f"o{r}")))
            fleet_s.append(run_async(at_once(settings("lab-llm"), args.calls, f"f{r}")))
            router.uninstall()
    finally:
        router.uninstall()
        for s in (single, *slow):
            s.close()
    med = statistics.median
    print(f"calls {args.calls}, latency {args.latency}s, repeats {args.repeats} (medians)")
    print("| measure | direct | router | ratio |")
    print("|---|---|---|---|")
    print(f"| per call, one at a time, one server (ms) | {med(direct_ms):.1f} | {med(routed_ms):.1f} "
          f"| {med(routed_ms) / med(direct_ms):.2f} |")
    print(f"| {args.calls} calls at once: 1 server direct vs 3 behind the Router (s) | "
          f"{med(one_s):.2f} | {med(fleet_s):.2f} | {med(one_s) / med(fleet_s):.2f}x faster |")


if __name__ == "__main__":
    main()
