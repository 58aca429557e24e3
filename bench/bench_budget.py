"""The budget's estimate against what a run really spends, on the loopback
OpenAI-compatible server (tests/openai_server.py) with a price registered in litellm for a
made-up model name ($1 per million prompt tokens, $2 per million reply tokens).

Two runs on the starter community's NLP + Astronomy neighbourhood, M = 3 authors and
k = 3 reviewers: an instruction-model (chat) run, and a base-model (stem) run with the
server's model declared a stem model in the registry, as the embedded model is. The
server answers with the scripted demo model's replies. For each run the bench prints the
estimate (rt_core.run.pipeline.budget.estimate: calls, tokens, dollars) and the actual figures
two ways: as the server reported them (it counts words, which the run's usage and cost
record), and re-counted with litellm's tokenizer (tiktoken cl100k) over the very
requests and replies the server saw, which is what a hosted provider would bill.

    .venv/bin/python bench/bench_budget.py
    .venv/bin/python bench/bench_budget.py --loop   # the whole brainstorm plan: 4 candidates,
                                                    # their tournament, novelty, 1 revision round
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RT_DATA_DIR", tempfile.mkdtemp())
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from rt_core import community  # noqa: E402
from rt_core.models import registry  # noqa: E402
from rt_core.models.embed import Embedder  # noqa: E402
from rt_core.models.scripted import demo_responder  # noqa: E402
from rt_core.run.pipeline import budget  # noqa: E402
from rt_core.run.pipeline.simulation import Simulation  # noqa: E402
from rt_core.store import Store  # noqa: E402
from rt_core.types import RunConfig, RunRequest  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402

IN_PRICE, OUT_PRICE = 1e-6, 2e-6  # dollars per token, made up


def register(model: str) -> None:
    registry.litellm().register_model({model: {
        "input_cost_per_token": IN_PRICE, "output_cost_per_token": OUT_PRICE,
        "litellm_provider": "openai", "mode": "chat", "max_tokens": 8192}})


def tokenizer_counts(server: OpenAIServer) -> tuple[int, int]:
    """Prompt and reply tokens of every chat request the server answered, by tiktoken."""
    lm = registry.litellm()
    prompt = reply = 0
    for req in server.chat_requests():  # each request once: cache hits never reach it
        msgs = req["body"].get("messages") or []
        prompt += lm.token_counter(model="gpt-4o-mini", messages=msgs)
        reply += lm.token_counter(model="gpt-4o-mini", text=demo_responder(msgs, {}), count_response_tokens=True)
    return prompt, reply


def pct(est: float, actual: float) -> str:
    return f"{100 * (est - actual) / actual:+.0f}%" if actual else "n/a"


LOOP = {"candidates": 4, "check_novelty": True, "revision_rounds": 1}


def one(label: str, model: str, store: Store, authors: list[str], papers: list[str],
        loop: dict) -> None:
    server = OpenAIServer(responder=lambda msgs: demo_responder(msgs, {}))
    try:
        cfg = RunConfig(researcher_ids=authors, paper_ids=papers, num_reviewers=3, concurrency=6,
                        model=model, base_url=server.base_url, **loop)
        est = budget.estimate(cfg, store)
        run = Simulation(RunRequest.with_key(cfg, "sk-bench"), store,
                         embedder=Embedder(store=store)).run_sync()
        assert run.status == "done", run.errors
        u = run.usage
        pt, ct = tokenizer_counts(server)
        real_cost = pt * IN_PRICE + ct * OUT_PRICE
        t = est.total
        print(f"\n{label}: model {model}, M = {len(authors)}, k = 3, {len(papers)} papers"
              + (f", {loop}" if loop else ""))
        asked = u.calls + u.cache_hits  # identical prompts (same canned persona) share one call
        print(f"  calls      estimate {t.calls} (up to {t.max_calls})   actual {u.calls} made + "
              f"{u.cache_hits} answered by the cache = {asked}   error {pct(t.calls, asked)}")
        print(f"  tokens     estimate {t.tokens:,} ({t.prompt_tokens:,} in, {t.completion_tokens:,} out)")
        print(f"             server-reported {u.prompt_tokens + u.completion_tokens:,} "
              f"({u.prompt_tokens:,} in, {u.completion_tokens:,} out)   error "
              f"{pct(t.tokens, u.prompt_tokens + u.completion_tokens)}")
        print(f"             tiktoken {pt + ct:,} ({pt:,} in, {ct:,} out)   error {pct(t.tokens, pt + ct)} "
              f"(in {pct(t.prompt_tokens, pt)}, out {pct(t.completion_tokens, ct)})")
        print(f"  cost       estimate ${est.cost:.5f}   recorded ${u.cost:.5f} (error {pct(est.cost, u.cost)})"
              f"   at tiktoken counts ${real_cost:.5f} (error {pct(est.cost, real_cost)})")
    finally:
        server.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loop", action="store_true", help="the whole brainstorm plan, not one proposal")
    loop = LOOP if ap.parse_args().loop else {}
    tmp = Path(tempfile.mkdtemp())
    chat_model, stem_model = "openai/rt-bench-priced", "openai/rt-bench-priced-stem"
    register(chat_model)
    register(stem_model)
    registry.declare(stem_model, registry.Capabilities(prompt_style=registry.STEM))
    for label, model in (("chat style", chat_model), ("stem style", stem_model)):
        store = Store(tmp / f"{model.rsplit('/', 1)[1]}.sqlite3")
        community.ensure_loaded(store)
        nlp = [r.id for r in store.corpus.search_researchers(fields=["nlp"], limit=10)]
        astro = [r.id for r in store.corpus.search_researchers(fields=["astronomy"], limit=10)]
        authors = nlp[:2] + astro[:1]
        papers = [p.id for p in store.corpus.search_papers(fields=["nlp"], limit=2)] + \
                 [p.id for p in store.corpus.search_papers(fields=["astronomy"], limit=2)]
        one(label, model, store, authors, papers, loop)
        store.close()
    print(f"\nprices: ${IN_PRICE * 1e6:g} / ${OUT_PRICE * 1e6:g} per million prompt / reply tokens "
          "(registered for the bench's made-up model names)")


if __name__ == "__main__":
    main()
