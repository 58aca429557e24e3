"""Settings: where data lives, and how to reach a model.

Nothing here writes a key anywhere: `ModelSettings` keeps the key in memory
and hides it from repr, so it cannot leak through logs or tracebacks.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

LOCAL_MODEL = "local/gemma-3-270m"
LOCAL_EMBEDDER = "local/all-MiniLM-L6-v2"

# Keep libraries offline and quiet unless the user opts in.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def data_dir() -> Path:
    """The user data folder: $RT_DATA_DIR, else the XDG data home (never the repo)."""
    explicit = os.environ.get("RT_DATA_DIR")
    if explicit:
        path = Path(explicit)
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "researchtown-studio"
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path() -> Path:
    return Path(os.environ.get("RT_DB") or data_dir() / "studio.sqlite3")


# Environment variables litellm reads for each provider prefix; used only to
# tell the user whether a key is already configured, never to copy it.
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "voyage": "VOYAGE_API_KEY",
}


def provider_of(model: str) -> str:
    """'anthropic/claude-x' -> 'anthropic'; bare names like 'gpt-4o-mini' -> 'openai'."""
    if "/" in model:
        return model.split("/", 1)[0]
    return "openai"


def env_key_for(model: str) -> str:
    """The API key the environment holds for this model's provider, or ''."""
    var = PROVIDER_KEY_ENV.get(provider_of(model))
    return os.environ.get(var, "") if var else ""


@dataclass
class ModelSettings:
    """How to reach one chat model. The key lives only in this object."""

    model: str = LOCAL_MODEL
    api_key: str = field(default="", repr=False)
    base_url: str = ""
    temperature: float = 0.0
    timeout: float = 120.0
    max_retries: int = 4
    backoff_base: float = 1.0  # seconds; doubled on each retry
    backoff_cap: float = 60.0
    prompt_style: str = "auto"  # auto, chat, stem

    @property
    def is_local(self) -> bool:
        return self.model.startswith("local/")

    @property
    def style(self) -> str:
        """'stem' (plain completion, one field per call) for base models, else 'chat'."""
        if self.prompt_style != "auto":
            return self.prompt_style
        return "stem" if self.is_local else "chat"

    def public(self) -> dict:
        """What may be stored or exported: everything but the key."""
        return {"model": self.model, "base_url": self.base_url, "temperature": self.temperature,
                "prompt_style": self.style}
