"""From command-line arguments to the objects a run or a model call takes: a RunRequest
(run, ideate, resume, replay, bench) or ModelSettings (the judge), each key chosen by the one
rule in rt_core.models.keys.

API keys come from the environment only, never from an argument (other users can read a
process's arguments). `--api-key-env VAR` names the variable holding the key for the
model and base URL given on the same command line, and that key goes there; the judge,
the evaluator and the embedder have their own (--judge-api-key-env, ...). Without it,
the provider's usual variable (OPENAI_API_KEY, ...) is the operator's key: it goes to the
provider's own endpoint, or to a --base-url listed in RT_ALLOWED_BASE_URLS, and nowhere
else.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..errors import InputError
from ..models import keys
from ..models.settings import ModelSettings
from ..settings import schema
from ..settings.schema import IDS
from ..types import Given, RunConfig, RunRequest
from . import options


def typed_key(args, model: str, base_url: str, flag: str = "api_key_env") -> keys.Typed | None:
    """The key the flag `flag` (--api-key-env VAR) names, for exactly this model and base URL."""
    var = getattr(args, flag, None)
    if not var:
        return None
    value = os.environ.get(var, "")
    option = "--" + flag.replace("_", "-")
    if not value:
        raise InputError(f"{option} names {var}, but the environment variable {var} is "
                         "not set (or is empty)",
                         f"Export {var} with the key before the command, or leave {option} "
                         "out to use the provider's usual variable.")
    return keys.Typed(value, model, base_url, f"environment variable {var} ({option})")


def key_for(args, model: str, base_url: str = "", *, typed: bool = True) -> keys.Key:
    """The key for `model` at `base_url` by the one rule; `typed=False` leaves
    --api-key-env out (it belongs to another model of the same command)."""
    given = typed_key(args, model.strip(), base_url.strip()) if typed else None
    return keys.resolve(model, base_url, given)


def typed_keys(args, config: RunConfig) -> dict[str, keys.Typed | None]:
    """Each endpoint's key flag (--api-key-env, --judge-api-key-env, ...) the command was
    given, as a key typed for exactly that endpoint's model and base URL."""
    given: dict[str, keys.Typed | None] = {}
    for o in schema.OPTIONS:
        if o.kind is schema.KEY and getattr(args, options.dest(o), None):
            given[o.endpoint] = typed_key(args, *config.target(o.endpoint), flag=options.dest(o))
    return given


def request_for(args, config: RunConfig, given: Given | None = None) -> RunRequest:
    """A RunRequest for a config: every endpoint's key by the one rule (keys.request_keys);
    `given`, records the run stores first (an --input file)."""
    return RunRequest(config, keys=keys.request_keys(config, typed_keys(args, config)),
                      timeout=getattr(args, "timeout", schema.default("timeout")), given=given)


def ids(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def config_from_args(args, **fields) -> RunConfig:
    """The RunConfig of the stored options the command was given (the rest keep their
    defaults), plus `fields` (the neighbourhood)."""
    values: dict[str, Any] = {}
    for o in schema.stored():
        if not hasattr(args, options.dest(o)):
            continue
        value = getattr(args, options.dest(o))
        if o.kind is IDS:
            value = ids(value)
        elif o.kind is str:
            value = (value or "").strip()
        values[o.name] = value
    return RunConfig(**{**values, **fields})


def run_request(args, researcher_ids: list[str], paper_ids: list[str],
                given: Given | None = None) -> RunRequest:
    """`run` and `ideate`: the neighbourhood and every option given on the command line
    (and the records of an --input file, stored when the run starts)."""
    return request_for(args, config_from_args(args, researcher_ids=researcher_ids, paper_ids=paper_ids),
                       given)


def replay_request(args) -> RunRequest:
    """`replay` and `bench`: the options they take (schema.REPLAY); the neighbourhood is
    the hidden paper's."""
    return request_for(args, config_from_args(args))


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

