"""From the Run page's widgets to one RunRequest: provider presets, the session's keys,
and the builder. The page reads nothing else; rt_core receives nothing else.

Which key a call carries is decided by rt_core.models.keys.resolve, the rule every door shares;
this module only hands it what the app alone knows: the key typed in this browser session
(for the model and base URL it was typed for) and a reader of Streamlit secrets. In
shared-demo mode (RT_DEMO=1) `demo_settings` replaces the session's model, base URL and
embedder, here and on the Run page, and visitors type no key; every request names this
browser's owner hash as its payer, whose daily demo allowance its calls are counted against
(rt_core.allowance decides; nothing of it lives in the session, which a reload forgets).
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from rt_core import allowance
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL
from rt_core.models import keys, registry, scripted
from rt_core.settings import schema
from rt_core.types import Run, RunConfig, RunRequest

from . import identity, run_fields

SCRIPTED_PRESET = "Scripted demo model (tests and demos, no real model)"
PROVIDERS: dict[str, dict[str, str]] = {
    "Embedded offline demo model": {"model": LOCAL_MODEL, "base_url": ""},
    "OpenAI": {"model": "gpt-4o-mini", "base_url": ""},
    "Anthropic": {"model": "anthropic/claude-3-5-haiku-latest", "base_url": ""},
    "DeepSeek": {"model": "deepseek/deepseek-chat", "base_url": ""},
    "Together": {"model": "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "base_url": ""},
    "Ollama (local server)": {"model": "ollama/llama3.1", "base_url": "http://localhost:11434"},
    "Any OpenAI-compatible URL": {"model": "openai/my-model", "base_url": "http://localhost:8000/v1"},
}
EMBEDDERS = [LOCAL_EMBEDDER, "text-embedding-3-large", "text-embedding-3-small", "voyage/voyage-3"]
NAMED_REVIEWERS = run_fields.NAMED_REVIEWERS


def scripted_available() -> bool:
    """The scripted fake model serves requests in this process (RT_SCRIPTED=demo or a test)."""
    return scripted.installed()


def provider_names() -> list[str]:
    names = list(PROVIDERS)
    if scripted_available():
        names.append(SCRIPTED_PRESET)
    return names


def provider_defaults(name: str) -> dict[str, str]:
    if name == SCRIPTED_PRESET:
        return {"model": "scripted/demo", "base_url": ""}
    return PROVIDERS.get(name, PROVIDERS["Embedded offline demo model"])


def provider_for_model(model: str) -> str:
    """The preset a model string belongs to (for share links that name a model): its own
    preset, else the first whose model has the same provider prefix (as the registry
    splits it), else the OpenAI-compatible one."""
    for name in provider_names():
        if provider_defaults(name)["model"] == model:
            return name
    prefix = registry.written_prefix(model)
    return next((name for name, d in PROVIDERS.items()
                 if registry.written_prefix(d["model"]) == prefix), "Any OpenAI-compatible URL")


def shareable_model(model: str) -> bool:
    """A link may name a hosted model or the bundled one, never a file on this server; the
    scripted model only where it is installed."""
    if registry.provider_of(model) == "scripted":
        return scripted_available()
    return model == LOCAL_MODEL or not registry.in_process(model)


def _read_secret(var: str) -> str:
    """A value from .streamlit/secrets.toml, read defensively (the file may not exist)."""
    try:
        return str(st.secrets.get(var, "") or "")
    except Exception:  # StreamlitSecretNotFoundError and friends: no secrets file
        return ""


SECRETS = keys.Secrets("Streamlit secrets", _read_secret)
TYPED = "typed in this browser session"
BLOCKED = keys.BLOCKED


def _typed(field: str, model: str, base_url: str) -> keys.Typed | None:
    """The key typed in this browser session's `field`, for exactly this model at this base
    URL. In a shared demo nobody types a key."""
    ss = st.session_state
    if keys.demo() is not None or not ss.get(field):
        return None
    return keys.Typed(ss[field], model.strip(), base_url.strip(), TYPED)


def key_source(model: str, base_url: str | None = None) -> keys.Key:
    """The key for a model at a base URL (None: the session's base URL) by the one rule
    (rt_core.models.keys.resolve), with the key typed for the session's model and the app's secrets."""
    ss = st.session_state
    target = (ss.get("base_url") or "") if base_url is None else base_url
    typed = _typed("api_key", ss.get("model") or "", ss.get("base_url") or "")
    return keys.resolve(model, target, typed, SECRETS)


def demo_settings() -> dict[str, str]:
    """THE shared-demo override: the settings the operator fixes ({} outside a demo)."""
    demo = keys.demo()
    return demo.settings() if demo is not None else {}


FROM_IDEA = "hood_from_idea"  # the idea the neighbourhood was seeded from (Ideas page); the run stores it


def build_request(**overrides) -> RunRequest:
    """The Run page's settings as one RunRequest: read once, from the session, through the
    settings schema (studio.run_fields). `overrides` replace settings a page decides itself
    (the Replay page: no reviewers)."""
    ss = st.session_state
    config = RunConfig(researcher_ids=list(ss["hood_r"]), paper_ids=list(ss["hood_p"]),
                       from_idea=ss.get(FROM_IDEA, ""), **run_fields.values())
    config = dataclasses.replace(config, **overrides)
    return request_for(config, timeout=float(ss.get("timeout") or schema.default("timeout")))


def request_for(config: RunConfig, **kw) -> RunRequest:
    """A request for a config (a new run, a resumed one, or a stored run being evaluated or
    judged): in a shared demo the operator's settings replace the config's, then every
    endpoint's key comes from the one rule (rt_core.models.keys.request_keys), with the keys typed
    in this session for exactly their model and base URL. This browser pays: in a shared
    demo its calls count against its allowance."""
    config = dataclasses.replace(config, **demo_settings())
    typed = {o.endpoint: _typed(o.key, *config.target(o.endpoint))
             for o in schema.OPTIONS if o.kind is schema.KEY}
    return RunRequest(config, keys=keys.request_keys(config, typed, SECRETS),
                      payer=identity.owner_hash(), **kw)


def demo_left(store) -> allowance.Left | None:
    """What this browser, and the whole server, may still spend today in a shared demo
    (None: no demo, no allowance)."""
    return allowance.left(store, identity.owner_hash())


def resume_request(config: RunConfig) -> RunRequest:
    """A stored run's request for resuming it: the Run page's Budget fields, when set,
    replace the stored cap (a run stopped by its budget resumes with a larger one)."""
    return request_for(dataclasses.replace(config, **typed_caps()))


def typed_caps() -> dict:
    """The Run page's budget fields that are set, for a resume or a revision started on the
    Results page; empty keeps the run's own cap. (A shared demo's allowance is not a cap of
    the run: every run of the visitor's counts against it, rt_core.allowance.)"""
    values = run_fields.values()
    caps = {k: values[k] for k in run_fields.CAPS}
    return {k: v for k, v in caps.items() if v is not None}


def request_for_run(run: Run) -> RunRequest:
    return request_for(run.config)
