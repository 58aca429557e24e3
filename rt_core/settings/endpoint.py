"""An endpoint: a model, where it is reached, and the key resolved for it.

A run calls up to four: its own model, the tournament's judge, the evaluator that
restates a reference, and a hosted embedder. Each is the same record, and its key is
decided by the one rule in rt_core.models.keys (`keys.endpoint`), whichever door asked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MODEL, JUDGE, EVALUATOR, EMBEDDER = "model", "judge", "evaluator", "embedder"
ROLES = (MODEL, JUDGE, EVALUATOR, EMBEDDER)


@dataclass(frozen=True)
class Key:
    """A resolved key and where it came from ('' when none; keys.BLOCKED when the operator
    holds one that may not go to the base URL). `server`: the key is the operator's, so it
    goes only where keys.server_key_allowed permits (the client re-checks)."""
    value: str = field(default="", repr=False)
    source: str = ""
    server: bool = False


NO_KEY = Key()


@dataclass(frozen=True)
class Endpoint:
    """One model a run calls, with its key. The key's value never leaves this record but
    for the call itself: it is hidden from repr, and RunConfig stores only model and base URL."""
    model: str = ""
    base_url: str = ""
    key: Key = NO_KEY

    @property
    def named(self) -> bool:
        return bool(self.model.strip())
