"""Which key a model call carries, decided once for every door (app, CLI, evaluator, judge).

The rule, in `resolve`: a key typed for exactly this model and base URL; else the
operator's key for the model's provider (its environment variable, then the secrets the
app injects through a `Secrets` reader), but only where `server_key_allowed` permits: the
provider's own endpoint (no base URL) or a base URL the operator lists in
RT_ALLOWED_BASE_URLS (comma or whitespace separated). A base URL someone typed gets a key
typed for it, or none. `check` then refuses, before any call, a request the rule forbids
or one that lacks a key its provider needs; the client re-applies the destination half
(`guard`) as its last line of defence. A model name served by a router file
(rt_core.models.router) gets no key from this rule: each of its deployments carries the
key the file gives it, for its own address only.

Every door asks the rule the same way: a run's endpoints (its model, the tournament's
judge, the evaluator, a hosted embedder: rt_core.settings.endpoint) get their keys from
`request_keys`, given what the door was handed for each (the CLI's --*-api-key-env, the
app's key fields); a paper source's key (S2_API_KEY) comes from `service_key`; what a page
says before Start about a missing key is `problem`, the same answer `check` gives.

Shared-demo mode (RT_DEMO=1): visitors use the operator's model, base URL, embedder and
key (`demo_settings`), type no key, and spend from a daily allowance per visitor
(RT_DEMO_MAX_TOKENS, default 200,000) and for the whole deployment (RT_DEMO_TOTAL_TOKENS),
kept in the store and decided by rt_core.allowance.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..settings import endpoint as ep
from ..settings.endpoint import Endpoint, Key
from . import registry

# Sent instead of nothing when no key may be used: litellm falls back to the provider's
# environment variable when api_key is empty, which would leak the operator's key.
NO_KEY = "no-key"

BLOCKED = "blocked"  # the operator holds a key, but not for this base URL
# A name a router file serves: each deployment carries its own key from that file, so no
# typed or server key is handed to it (rt_core.models.router).
ROUTED = "the router file (each deployment's own key)"


def normalise_url(url: str) -> str:
    return (url or "").strip().rstrip("/").lower()


def allowed_base_urls() -> set[str]:
    raw = os.environ.get("RT_ALLOWED_BASE_URLS", "")
    return {normalise_url(u) for u in re.split(r"[,\s]+", raw) if u.strip()}


def server_key_allowed(base_url: str) -> bool:
    """May a key the server holds be sent to this base URL? Only to the provider's own
    endpoint (no base URL) or to one the operator listed."""
    url = normalise_url(base_url)
    if not url or url in allowed_base_urls():
        return True
    d = demo()  # the operator chose the demo's base URL
    return d is not None and url == normalise_url(d.base_url)


# -- where a key comes from ----------------------------------------------------------------
@dataclass(frozen=True)
class Typed:
    """A key someone gave for one model at one base URL (the Run page's field, the CLI's
    --api-key-env). It is used for exactly that target and nothing else."""
    key: str = field(repr=False)
    model: str
    base_url: str = ""
    label: str = "given for this model"  # where it was typed, for messages

    def fits(self, model: str, base_url: str) -> bool:
        return bool(self.key) and self.model.strip() == model.strip() and \
            normalise_url(self.base_url) == normalise_url(base_url)


@dataclass(frozen=True)
class Secrets:
    """The operator's secrets besides the environment (the app's Streamlit secrets):
    `read(variable name)` returns the value or ''. rt_core never reads them itself."""
    label: str
    read: Callable[[str], str]


def operator_key(model: str, secrets: Secrets | None = None) -> Key:
    """The operator's key for the model's provider: its environment variable, then secrets."""
    var = registry.key_env(model)
    if not var:
        return Key()
    if os.environ.get(var):
        return Key(os.environ[var], f"environment variable {var}", server=True)
    value = str(secrets.read(var) or "") if secrets is not None else ""
    return Key(value, secrets.label, server=True) if value else Key()


def resolve(model: str, base_url: str = "", typed: Typed | None = None,
            secrets: Secrets | None = None) -> Key:
    """THE key rule: the key for `model` at `base_url`, and where it came from.

    A key typed for exactly this model and base URL wins; else the operator's key where
    `server_key_allowed` permits; else none (source BLOCKED when the operator holds a key
    that may not go there, so a page can say why none is used). In-process models need
    no key."""
    model, base_url = model.strip(), base_url.strip()
    if model and registry.routed(model):
        return Key("", ROUTED)
    if typed is not None and typed.fits(model, base_url):
        return Key(typed.key, typed.label)
    if not model or registry.in_process(model):
        return Key()
    held = operator_key(model, secrets)
    if not held.value:
        return Key()
    if not server_key_allowed(base_url):
        return Key("", BLOCKED)
    return held


# -- the check before any call ---------------------------------------------------------------
def guard(model: str, base_url: str, api_key: str, server_key: bool) -> None:
    """Refuse to send the operator's key to a base URL that is not allowed."""
    if server_key and api_key and not server_key_allowed(base_url):
        raise ConfigError(f"the server's API key may not be sent to {base_url.strip()}",
                          "Type your own API key for this server, or ask the operator to list "
                          "the URL in RT_ALLOWED_BASE_URLS.",
                          "Type your own key for this server in the API key field, or ask whoever "
                          "runs this app to allow this address.")


def check(model: str, base_url: str, api_key: str, server_key: bool = False, *,
          deep: bool = True, caps: registry.Capabilities | None = None) -> None:
    """Before any call: the key may go where it is sent (`guard`), and a provider that
    needs a key has one, so a missing key fails once, in plain words, instead of once per
    agent in the provider's. At a base URL someone typed only a key given for it counts:
    a server that needs no key accepts any text as one. `caps`: the model's declaration, as
    a run's start read it (None: asked here)."""
    guard(model, base_url, api_key, server_key)
    model, base_url = model.strip(), base_url.strip()
    caps = caps if caps is not None else registry.capabilities(model)
    if caps.client == registry.ROUTER:
        _check_routed(model, base_url, api_key)
        return
    if api_key or caps.in_process:
        return
    var = caps.key_env
    if base_url:
        if var:
            raise ConfigError(f"no API key for model '{model}' at {base_url}",
                              "Type this server's key in the Run page's API key field (or pass "
                              "--api-key-env to the CLI); the server's own keys only go to their "
                              "provider or RT_ALLOWED_BASE_URLS. A server that needs no key "
                              "accepts any text, e.g. 'none'.",
                              "Type this server's key in the API key field: keys this app holds "
                              "only go to their own provider. If the server needs no key, type "
                              "any text, such as none.")
        return
    missing = [var] if var else _missing_by_litellm(model) if deep else []
    if missing:
        raise ConfigError(f"no API key for model '{model}': {missing[0]} is not set",
                          f"Set {missing[0]} before starting the app (or pass --api-key-env to the "
                          "CLI), or type the key in the Run page's API key field.",
                          "No API key for this provider yet: type one in the API key field (it "
                          "stays in this browser session), or ask whoever runs this app to set "
                          f"{missing[0]}.")


def _missing_by_litellm(model: str) -> list[str]:
    """The key variables litellm says a model it knows needs (none for one it cannot map:
    the first call will say what is wrong)."""
    try:
        env = registry.litellm().validate_environment(model=model)
    except Exception:
        return []
    return [k for k in env.get("missing_keys") or [] if "KEY" in k or "TOKEN" in k]


def problem(model: str, key: Key, base_url: str = "", *, deep: bool = False) -> ConfigError | None:
    """What `check` would refuse for this endpoint, or None: what a page shows before Start.
    `deep=False` skips asking litellm about a model the registry has no key variable for."""
    try:
        check(model, base_url, key.value, key.server, deep=deep)
    except ConfigError as exc:
        return exc
    return None


def _check_routed(model: str, base_url: str, api_key: str) -> None:
    """A routed name is reached through its deployments' addresses and keys only."""
    if base_url or api_key:
        raise ConfigError(f"model '{model}' is served by the router file's deployments, which "
                          "have their own addresses and keys",
                          "Leave the base URL and API key empty for this model, or use a model "
                          "name that is not in the router file.")


# -- every endpoint of a run, for every door --------------------------------------------------
def endpoint(model: str, base_url: str = "", typed: Typed | None = None,
             secrets: Secrets | None = None) -> Endpoint:
    """An endpoint with its key by THE rule (`resolve`)."""
    return Endpoint(model.strip(), base_url.strip(), resolve(model, base_url, typed, secrets))


def in_use(config) -> tuple[str, ...]:
    """The endpoint roles a run with this config calls (rt_core.settings.endpoint.ROLES)."""
    roles = [ep.MODEL, ep.EMBEDDER]
    if config.candidates > 1 and config.judge_model.strip():  # the tournament's own judge
        roles.append(ep.JUDGE)
    if config.evaluator_model.strip():
        roles.append(ep.EVALUATOR)
    return tuple(roles)


def request_keys(config, typed: dict[str, Typed | None] | None = None,
                 secrets: Secrets | None = None) -> dict[str, Key]:
    """The key of every endpoint a run calls, by the one rule: what a door (the CLI's
    --*-api-key-env, the app's key fields) was given for each, and the operator's held keys.
    A hosted embedder is reached at its provider's own endpoint (no base URL)."""
    given = typed or {}
    return {role: endpoint(*config.target(role), given.get(role), secrets).key
            for role in in_use(config)}


def check_request(request, declared: Mapping[str, registry.Capabilities]) -> None:
    """`check` for every endpoint a run calls but the embedder (its client says what it
    lacks), before the run starts. `declared`: what the registry declares of each model the
    run names, as its start asked (`ModelFacts.declared`, models/facts.py)."""
    for role in in_use(request.config):
        if role != ep.EMBEDDER:
            e = request.endpoint(role)
            check(e.model, e.base_url, e.key.value, e.key.server, caps=declared.get(e.model.strip()))


# -- services that are not models ------------------------------------------------------------
SERVICE_KEYS = {"semantic_scholar": "S2_API_KEY"}


def service_key(service: str, secrets: Secrets | None = None) -> Key:
    """The operator's key for a paper source (Semantic Scholar): its environment variable,
    then the secrets. It goes only to the source's address, which the operator sets
    (RT_S2_URL), never to one a visitor typed."""
    var = SERVICE_KEYS[service]
    if os.environ.get(var):
        return Key(os.environ[var], f"environment variable {var}", server=True)
    value = str(secrets.read(var) or "") if secrets is not None else ""
    return Key(value, secrets.label, server=True) if value and secrets is not None else Key()


# -- the shared demo ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Demo:
    model: str
    base_url: str
    embedder: str
    max_tokens: int  # per visitor and UTC day, prompt + completion (rt_core.allowance)

    def settings(self) -> dict[str, str]:
        """The run settings the operator fixes: they replace a visitor's, wherever set."""
        return {"model": self.model, "base_url": self.base_url, "embedder": self.embedder}


def demo() -> Demo | None:
    """The shared-demo settings when RT_DEMO=1, else None."""
    if os.environ.get("RT_DEMO", "").strip().lower() not in ("1", "true", "yes", "on"):
        return None
    try:
        cap = int(os.environ.get("RT_DEMO_MAX_TOKENS", "200000"))
    except ValueError:
        cap = 200000
    return Demo(model=os.environ.get("RT_DEMO_MODEL", "gpt-4o-mini").strip(),
                base_url=os.environ.get("RT_DEMO_BASE_URL", "").strip(),
                embedder=os.environ.get("RT_DEMO_EMBEDDER", "local/all-MiniLM-L6-v2").strip(),
                max_tokens=max(0, cap))
