"""The base of every stored record: a dataclass that serialises to JSON with `to_dict()`
and comes back with `from_dict()`, where keys it does not know are ignored so that what
an older version stored still loads."""
from __future__ import annotations

import dataclasses
from typing import Any


class Record:
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Build from a dict, ignoring unknown keys so old exports still load."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})
