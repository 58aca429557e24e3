"""A number field with bounds that the page checks, not the browser.

Why not `st.number_input(min_value=..., max_value=...)`: the browser then refuses an
out-of-range value on its own. The field turns red, the reason hides in a tooltip, and the
script keeps running with the *previous* value, so a button below happily acts on a number the
user can no longer see. Here the browser takes whatever is typed, the page says beside the field
what is wrong with it, and the caller gets None, which it uses to keep its action button
disabled until every field holds a number it can use.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

Number = int | float


def _shown(x: Number) -> str:
    """A number as typed: 99999, not 1e+05; 0.5 stays 0.5."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def problem(label: str, value: Number | None, low: Number, high: Number) -> str | None:
    """What is wrong with `value` for this field, in one sentence, or None when it is usable."""
    span = f"from {_shown(low)} to {_shown(high)}"
    if value is None:
        return f"{label}: enter a number {span}."
    if not low <= value <= high:
        return f"{label} must be {span}; {_shown(value)} is out of range."
    return None


def bounded_number(label: str, key: str, low: Number, high: Number, default: Number | None,
                   step: Number = 1, help: str | None = None, where: Any = None,
                   check: Callable[[Number | None], str | None] | None = None,
                   **widget: Any) -> Number | None:
    """The number typed into the field, or None (with the reason shown under the field) when
    it is empty or outside [low, high]. Integers when `step` and `default` are integers.
    `where` is the container to draw in (a column, the sidebar; default: the page); `widget`
    goes on to `st.number_input` (format, disabled, persist_state...). `default=None`: the
    session already holds the field's value (a keyed setting). `check` replaces the sentence
    of `problem` (the Run page says the settings schema's, as the command line does)."""
    where = st if where is None else where
    whole = isinstance(step, int) and (default is None or isinstance(default, int))
    kind = int if whole else float
    if default is not None:
        widget["value"] = kind(default)
    value = where.number_input(label, step=kind(step), key=key, help=help, **widget)
    reason = check(value) if check is not None else problem(label, value, low, high)
    if reason is not None:
        where.error(reason, icon="✋")
        return None
    return value


def all_valid(*values: Number | None) -> bool:
    """True when every field gave a usable number (none returned None)."""
    return all(v is not None for v in values)
