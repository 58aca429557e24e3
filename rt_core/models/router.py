"""A fleet of model endpoints behind litellm's Router, named by a router file.

A lab that serves one open model on several machines lists them in one YAML file, in
litellm's own `model_list` format (the one its proxy reads), and points
RT_ROUTER_CONFIG (or the CLI's --router-config) at it:

    model_list:
      - model_name: lab-llama                 # the name a run asks for
        litellm_params:
          model: openai/llama-3.1-8b          # what this deployment serves
          api_base: http://gpu1:8000/v1
          api_key: os.environ/GPU1_KEY        # this deployment's own key
    router_settings: {num_retries: 2, allowed_fails: 0, cooldown_time: 60}

Every chat and embedding call for a name in the file then goes through one
`litellm.Router`, which spreads calls across the deployments of that name, retries a
failed call on another one and sets a failing one aside for `cooldown_time` seconds. The
model client (client.py) asks `serving(model)` and calls the fleet instead of litellm; its
cache, budget, call claims and usage counting stay as they are, keyed by the model name,
never by the deployment that answered.

Why keys are handled here: a deployment's key is written in the router file by the
operator for that deployment's address, so it goes there and nowhere else. The run's own
key (typed or the server's) is never handed to a routed name (`keys.resolve`), and a
deployment at an address with no key gets `keys.NO_KEY`, so litellm cannot fill in the
operator's provider key for someone else's server. Deployments are shown by name and
address only; the key is never part of `Deployment`.

The file is read once per process (`install`); the Router itself is built at the first
call, since importing litellm takes seconds.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import redact
from ..errors import ConfigError, Unreachable
from . import keys, registry

ENV = "RT_ROUTER_CONFIG"
ENV_PREFIX = "os.environ/"  # litellm's way of naming an environment variable in a config
# The Router settings a file may set (litellm's names); anything else is a typo to report.
SETTINGS = ("routing_strategy", "num_retries", "allowed_fails", "cooldown_time", "retry_after",
            "timeout", "routing_strategy_args")
DEFAULTS = {"num_retries": 2, "allowed_fails": 1, "cooldown_time": 30.0}
# Checked here, so a typo stops the start-up rather than the first call (which is when
# litellm, slow to import, would see it).
COUNTS, SECONDS = ("num_retries", "allowed_fails"), ("cooldown_time", "retry_after", "timeout")
STRATEGIES = ("simple-shuffle", "least-busy", "usage-based-routing", "usage-based-routing-v2",
              "latency-based-routing", "cost-based-routing")
HINT = ("Point RT_ROUTER_CONFIG (or --router-config) at a YAML file whose model_list names at "
        "least one deployment (model_name and litellm_params.model), as in "
        "docs/lab/router.example.yaml.")


@dataclass(frozen=True)
class Deployment:
    """One endpoint of the fleet, as it may be shown: never its key."""
    id: str
    model_name: str
    model: str
    api_base: str
    context_tokens: int = 0  # model_info.max_input_tokens, when the file gives it


class Fleet:
    """The deployments of one router file, their litellm Router, and calls served by each."""

    def __init__(self, path: str, model_list: list[dict], settings: dict):
        self.path = path
        self._model_list = model_list  # holds the keys: handed to litellm only
        self._settings = settings
        self.deployments = tuple(
            Deployment(d["model_info"]["id"], d["model_name"], d["litellm_params"]["model"],
                       redact.hide_url(str(d["litellm_params"].get("api_base") or "")),  # shown
                       _int(d["model_info"].get("max_input_tokens"))) for d in model_list)
        self.names = frozenset(d.model_name for d in self.deployments)
        self._router: Any = None
        self._lock = threading.Lock()
        self._served: Counter[str] = Counter()

    def __repr__(self) -> str:
        return f"Fleet({self.path!r}, {len(self.deployments)} deployments)"

    def capabilities(self, name: str) -> registry.Capabilities:
        """What a routed name can do (registry.ROUTED), with the smallest context window
        its deployments declare when every one declares it (prompts must fit them all)."""
        windows = [d.context_tokens for d in self.deployments if d.model_name == name]
        smallest = min(windows) if windows and all(windows) else 0
        return dataclasses.replace(registry.ROUTED, context_tokens=smallest)

    def router(self) -> Any:
        """litellm's Router over the file's model_list, built once at the first call."""
        with self._lock:
            if self._router is None:
                lm = registry.litellm()
                self._router = lm.Router(model_list=[_copy(d) for d in self._model_list],
                                         **self._settings)
            return self._router

    async def acompletion(self, **kwargs: Any) -> Any:
        return await self._call("acompletion", kwargs)

    async def aembedding(self, **kwargs: Any) -> Any:
        return await self._call("aembedding", kwargs)

    async def _call(self, method: str, kwargs: dict) -> Any:
        from litellm.types.router import (  # noqa: PLC0415  (slow: litellm)
            RouterRateLimitError,
            RouterRateLimitErrorBasic,
        )

        router = self.router()
        try:
            response = await getattr(router, method)(**kwargs)
        except (RouterRateLimitError, RouterRateLimitErrorBasic):  # every deployment set aside
            raise Unreachable(f"every deployment of model '{kwargs.get('model')}' in the router "
                              "file is cooling down after failures",
                              "Start the model servers again, or wait for the router's "
                              "cooldown_time to pass.") from None
        self._count(response)
        return response

    def _count(self, response: Any) -> None:
        hidden = getattr(response, "_hidden_params", None) or {}
        model_id = hidden.get("model_id") if isinstance(hidden, dict) else None
        if model_id:
            with self._lock:
                self._served[str(model_id)] += 1

    def served(self) -> dict[str, int]:
        """Calls each deployment answered in this process, by deployment id."""
        with self._lock:
            return {d.id: self._served.get(d.id, 0) for d in self.deployments}

    def cooling(self) -> set[str]:
        """The ids of deployments the Router has set aside right now."""
        with self._lock:
            router = self._router
        if router is None:
            return set()
        active = router.cooldown_cache.get_active_cooldowns(model_ids=router.get_model_ids(),
                                                            parent_otel_span=None)
        return {str(entry[0]) for entry in active or []}


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _copy(deployment: dict) -> dict:
    """A deployment for litellm: its own dicts, so litellm's changes stay out of ours."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in deployment.items()}


# -- reading a router file -------------------------------------------------------------------
def load(path: str | os.PathLike) -> Fleet:
    """The fleet a router file names, or one ConfigError saying what is wrong with it."""
    import yaml  # noqa: PLC0415  (only when a router file is used)

    where = f"router file {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist", HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} cannot be read ({type(exc).__name__})", HINT) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(f"{where} is not valid YAML{at}", HINT) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where} is not a mapping with a model_list", HINT)
    entries = data.get("model_list")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where} names no deployments (its model_list is missing or empty)",
                          HINT)
    model_list = [_deployment(where, i, e) for i, e in enumerate(entries, start=1)]
    return Fleet(str(path), model_list, _settings(where, data.get("router_settings")))


def _deployment(where: str, number: int, entry: Any) -> dict:
    """One model_list entry, checked; its id defaults to '<model_name>-<number>'."""
    params = entry.get("litellm_params") if isinstance(entry, dict) else None
    name = entry.get("model_name") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name.strip() or not isinstance(params, dict) \
            or not isinstance(params.get("model"), str) or not params["model"].strip():
        raise ConfigError(f"{where}: deployment {number} needs a model_name and "
                          "litellm_params.model", HINT)
    params = dict(params)
    key = params.get("api_key")
    if isinstance(key, str) and key.startswith(ENV_PREFIX):
        var = key[len(ENV_PREFIX):]
        if not os.environ.get(var):
            raise ConfigError(f"{where}: deployment {number} ('{name}') takes its key from "
                              f"{var}, which is not set",
                              f"Export {var} before starting, or remove api_key if that "
                              "server needs none.")
    elif not key and params.get("api_base"):
        params["api_key"] = keys.NO_KEY  # litellm must not send the provider's key here
    info = dict(entry.get("model_info") or {}) if isinstance(entry.get("model_info"), dict) else {}
    info.setdefault("id", f"{name.strip()}-{number}")
    info["id"] = str(info["id"])
    return {"model_name": name.strip(), "litellm_params": params, "model_info": info}


def _settings(where: str, raw: Any) -> dict:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: router_settings is not a mapping", HINT)
    unknown = sorted(set(raw) - set(SETTINGS))
    if unknown:
        raise ConfigError(f"{where}: unknown router_settings {', '.join(map(str, unknown))}",
                          f"The settings read are: {', '.join(SETTINGS)}.")
    for name, value in raw.items():
        bad = (name in COUNTS and (type(value) is not int or value < 0)) or \
              (name in SECONDS and (type(value) not in (int, float) or value < 0)) or \
              (name == "routing_strategy" and value not in STRATEGIES)
        if bad:
            allowed = ("a whole number >= 0" if name in COUNTS else "seconds >= 0"
                       if name in SECONDS else "one of " + ", ".join(STRATEGIES))
            raise ConfigError(f"{where}: router_settings {name} is {value!r}",
                              f"{name} takes {allowed}.")
    return {**DEFAULTS, **raw}


# -- the process's fleet ---------------------------------------------------------------------
_lock = threading.Lock()
_active: dict[str, Fleet] = {}  # {path: fleet}: at most one entry
_replaced: dict[str, registry.Capabilities | None] = {}  # what each routed name was before


def install(path: str | os.PathLike | None = None) -> Fleet | None:
    """Load the router file at `path` (default: RT_ROUTER_CONFIG) once per process and
    declare its model names in the registry; None when no file is set. A different path
    replaces the fleet (a test, or a CLI flag after the environment)."""
    path = str(path if path is not None else os.environ.get(ENV, "")).strip()
    with _lock:
        if not path:
            return next(iter(_active.values()), None)
        if path in _active:
            return _active[path]
    fleet = load(path)
    with _lock:
        _forget_locked()
        for name in fleet.names:
            _replaced[name] = registry.declare(name, fleet.capabilities(name))
        _active[path] = fleet
    return fleet


def uninstall() -> None:
    """Back to no router: routed names are no longer declared (tests)."""
    with _lock:
        _forget_locked()


def _forget_locked() -> None:
    for name, previous in _replaced.items():
        registry.forget(name, previous)
    _replaced.clear()
    _active.clear()


def active() -> Fleet | None:
    with _lock:
        return next(iter(_active.values()), None)


def serving(model: str) -> Fleet | None:
    """The fleet that serves `model`, or None when the model goes the usual way."""
    fleet = active()
    return fleet if fleet is not None and model.strip() in fleet.names else None


def function(model: str, name: str) -> Any:
    """`acompletion` or `aembedding` for `model`: the fleet's when it serves the model,
    else litellm's own."""
    fleet = serving(model)
    return getattr(fleet if fleet is not None else registry.litellm(), name)
