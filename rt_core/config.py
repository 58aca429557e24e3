"""Settings: where data lives, the default models, and the libraries kept offline.

What each model is (prompt style, key variable, context window...) is declared in the
model registry (`rt_core/models/registry.py`); which key a call carries is decided in
`rt_core/models/keys.py`.
"""
from __future__ import annotations

import os
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


def db_path() -> Path | str:
    """Where the store is: RT_DB (a SQLite file, or a postgresql:// URL kept as text) or
    the user data folder."""
    where = os.environ.get("RT_DB") or ""
    if where.startswith(("postgresql://", "postgres://")):
        return where
    return Path(where or data_dir() / "studio.sqlite3")
