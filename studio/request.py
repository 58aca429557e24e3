"""From the Run page's widgets to one RunRequest: provider presets, the key precedence,
and the builder. The page reads nothing else; rt_core receives nothing else.

Key precedence (the one place it is decided): a key typed in this browser session,
for the model and base URL it was typed for; else, only when rt_core.keys allows the
base URL (the provider's own endpoint, or one the operator listed in
RT_ALLOWED_BASE_URLS), the provider's environment variable, then Streamlit secrets
(read defensively: a fresh machine has no file). A base URL a visitor typed never
receives the server's key. In shared-demo mode (RT_DEMO=1) the operator's model, base
URL and key are used whatever the session says, and visitors type no key.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from rt_core import config as rt_config
from rt_core import keys
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL
from rt_core.models import scripted
from rt_core.types import Run, RunConfig, RunRequest

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
NAMED_REVIEWERS = "Named reviewers"


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
    """The preset a model string belongs to (for share links that name a model)."""
    for name in provider_names():
        if provider_defaults(name)["model"] == model:
            return name
    if model.startswith("ollama/"):
        return "Ollama (local server)"
    if model.startswith("openai/"):
        return "Any OpenAI-compatible URL"
    for name, d in PROVIDERS.items():
        if d["model"].split("/")[0] == model.split("/")[0] and "/" in model:
            return name
    return "OpenAI" if "/" not in model else "Any OpenAI-compatible URL"


def shareable_model(model: str) -> bool:
    """A link may name a hosted model or the bundled one, never a file on this server."""
    if model.startswith("local/"):
        return model == LOCAL_MODEL
    return not model.startswith("scripted/") or scripted_available()


def secret_key_for(model: str) -> str:
    """A key from .streamlit/secrets.toml, read defensively (the file may not exist)."""
    var = rt_config.PROVIDER_KEY_ENV.get(rt_config.provider_of(model))
    if not var:
        return ""
    try:
        return str(st.secrets.get(var, "") or "")
    except Exception:  # StreamlitSecretNotFoundError and friends: no secrets file
        return ""


TYPED = "typed in this browser session"
BLOCKED = "blocked"  # the server holds a key, but not for this base URL


def key_source(model: str, base_url: str | None = None, typed_key: str = "api_key",
               typed_for: str = "model") -> tuple[str, str]:
    """(key, where it came from) for a model at a base URL (None: the session's base URL).

    A typed key belongs to the model and base URL it was typed for; another run's settings
    (a stored run from another session) never get it. The server's key goes only where
    rt_core.keys.server_key_allowed says; otherwise ("", BLOCKED) when the server holds
    one, so the page can say why none is used."""
    ss = st.session_state
    target_url = (ss.get("base_url") or "").strip() if base_url is None else base_url.strip()
    typed = "" if keys.demo() else ss.get(typed_key, "")
    same_target = model == (ss.get(typed_for) or "").strip() and (
        target_url == (ss.get("base_url") or "").strip())
    if typed and same_target:
        return typed, TYPED
    server_key, where = _server_key(model)
    if not server_key:
        return "", ""
    if not keys.server_key_allowed(target_url):
        return "", BLOCKED
    return server_key, where


def _server_key(model: str) -> tuple[str, str]:
    """The operator's key for a model's provider (environment, then secrets)."""
    env = rt_config.env_key_for(model)
    if env:
        var = rt_config.PROVIDER_KEY_ENV.get(rt_config.provider_of(model), "")
        return env, f"environment variable {var}"
    sec = secret_key_for(model)
    if sec:
        return sec, "Streamlit secrets"
    return "", ""


def _embedder_key(name: str) -> str:
    if name.startswith("local/"):
        return ""
    # Hosted embedders are reached at their provider's own endpoint (no base URL).
    return key_source(name, "", typed_key="embedder_key", typed_for="embedder")[0]


def build_request(**overrides) -> RunRequest:
    """The Run page's settings as one RunRequest: read once, here, from the session.
    `overrides` replace settings a page decides itself (the Replay page: no reviewers)."""
    ss = st.session_state
    named = ss["reviewer_choice"] == NAMED_REVIEWERS
    config = RunConfig(
        researcher_ids=list(ss["hood_r"]), paper_ids=list(ss["hood_p"]),
        model=ss["model"].strip(), base_url=ss["base_url"].strip(),
        temperature=float(ss["temperature"]), mode=ss["mode"],
        num_reviewers=len(ss["reviewer_ids"]) if named else int(ss["num_reviewers"]),
        reviewer_ids=list(ss["reviewer_ids"]) if named else [],
        cutoff_year=int(ss["cutoff_year"]) if ss["use_cutoff"] else None,
        reference_paper_id=ss["reference_id"] or "", embedder=ss["embedder"])
    return request_for(dataclasses.replace(config, **overrides))


def request_for(config: RunConfig) -> RunRequest:
    """A request for a config (a new run, a resumed one, or a stored run being evaluated or
    judged): the keys come from the one precedence above, for exactly this model, base URL
    and embedder. In demo mode the operator's model, base URL and embedder replace the
    session's (whatever a widget or a stored run says)."""
    demo = keys.demo()
    if demo is not None:
        config = dataclasses.replace(config, model=demo.model, base_url=demo.base_url,
                                     embedder=demo.embedder)
    api_key, where = key_source(config.model, config.base_url)
    evaluator = config.evaluator_model.strip()
    evaluator_key = key_source(evaluator, config.evaluator_base_url)[0] if evaluator else ""
    return RunRequest(config, api_key=api_key, embedder_key=_embedder_key(config.embedder),
                      evaluator_key=evaluator_key, server_key=bool(api_key) and where != TYPED)


def demo_tokens_left() -> int | None:
    """Tokens this browser session may still spend in demo mode (None: no demo cap)."""
    demo = keys.demo()
    if demo is None:
        return None
    return max(0, demo.max_tokens - int(st.session_state.get("demo_tokens_used", 0)))


def count_demo_tokens(run: Run) -> None:
    """Add a finished run's tokens to this session's demo budget (once per run)."""
    ss = st.session_state
    counted = ss.setdefault("demo_counted", set())
    if run.id in counted:
        return
    counted.add(run.id)
    ss["demo_tokens_used"] = int(ss.get("demo_tokens_used", 0)) + run.usage.prompt_tokens + \
        run.usage.completion_tokens


def request_for_run(run: Run) -> RunRequest:
    return request_for(run.config)
