"""From command-line arguments to the objects a run or a model call takes: a RunRequest
(run, resume, replay, bench) or ModelSettings (the judge), each key chosen by the one rule
in rt_core.keys.

API keys come from the environment only, never from an argument (other users can read a
process's arguments). `--api-key-env VAR` names the variable holding the key for the
model and base URL given on the same command line, and that key goes there. Without it,
the provider's usual variable (OPENAI_API_KEY, ...) is the operator's key: it goes to the
provider's own endpoint, or to a --base-url listed in RT_ALLOWED_BASE_URLS, and nowhere
else.
"""
from __future__ import annotations

import dataclasses
import os

from .. import keys
from ..errors import InputError
from ..models.settings import ModelSettings
from ..types import RunConfig, RunRequest


def typed_key(args, model: str, base_url: str) -> keys.Typed | None:
    """The key `--api-key-env VAR` names, for exactly this model and base URL."""
    var = getattr(args, "api_key_env", None)
    if not var:
        return None
    value = os.environ.get(var, "")
    if not value:
        raise InputError(f"--api-key-env names {var}, but the environment variable {var} is "
                         "not set (or is empty)",
                         f"Export {var} with the key before the command, or leave --api-key-env "
                         "out to use the provider's usual variable.")
    return keys.Typed(value, model, base_url, f"environment variable {var} (--api-key-env)")


def key_for(args, model: str, base_url: str = "", *, typed: bool = True) -> keys.Key:
    """The key for `model` at `base_url` by the one rule; `typed=False` leaves
    --api-key-env out (it belongs to another model of the same command)."""
    given = typed_key(args, model.strip(), base_url.strip()) if typed else None
    return keys.resolve(model, base_url, given)


def request_for(args, config: RunConfig) -> RunRequest:
    """A RunRequest for a config, with the run's, the evaluator's and the embedder's keys."""
    run = key_for(args, config.model, config.base_url)
    evaluator = (key_for(args, config.evaluator_model, config.evaluator_base_url)
                 if config.evaluator_model.strip() else keys.Key())
    embedder = key_for(args, config.embedder, "", typed=False)
    return RunRequest(config, api_key=run.value, server_key=run.server, timeout=args.timeout,
                      evaluator_key=evaluator.value, evaluator_server_key=evaluator.server,
                      embedder_key=embedder.value)


def run_request(args, researcher_ids: list[str], paper_ids: list[str]) -> RunRequest:
    """`run`: the neighbourhood and the settings given on the command line."""
    cfg = RunConfig(researcher_ids=researcher_ids, paper_ids=paper_ids, model=args.model,
                    mode=args.mode, num_reviewers=args.reviewers, reviewer_ids=ids(args.reviewer_ids),
                    cutoff_year=args.cutoff, reference_paper_id=args.reference or "",
                    embedder=args.embedder, temperature=args.temperature,
                    base_url=args.base_url or "", concurrency=args.concurrency,
                    max_tokens=args.max_tokens, max_cost=args.max_cost,
                    revision_rounds=getattr(args, "revision_rounds", 0))
    return request_for(args, cfg)


def replay_request(args) -> RunRequest:
    """`replay` and `bench`: the run's model and the evaluator."""
    cfg = RunConfig(model=args.model, base_url=args.base_url or "", temperature=args.temperature,
                    num_reviewers=args.reviewers, embedder=args.embedder,
                    concurrency=args.concurrency, evaluator_model=args.evaluator_model or "",
                    evaluator_base_url=args.evaluator_base_url or "",
                    keep_undated=args.keep_undated, max_tokens=args.max_tokens,
                    max_cost=args.max_cost)
    return request_for(args, cfg)


def with_cap(args, config: RunConfig) -> RunConfig:
    """`resume --max-tokens/--max-cost`: a new cap replaces the stored one; none keeps it."""
    caps = {k: getattr(args, k, None) for k in ("max_tokens", "max_cost")}
    return dataclasses.replace(config, **{k: v for k, v in caps.items() if v is not None})


def judge_settings(args) -> ModelSettings:
    """`similarity --judge`: the judge model, checked by the key rule before any call."""
    key = key_for(args, args.model, args.base_url or "")
    settings = ModelSettings.with_key(args.model, key, args.base_url or "",
                                      temperature=args.temperature, timeout=args.timeout)
    keys.check(settings.model, settings.base_url, settings.api_key, settings.server_key)
    return settings


def ids(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]
