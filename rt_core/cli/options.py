"""The command line's run options, derived from the settings schema (rt_core/settings).

`add` gives a subcommand the flags of the options it takes (all of them for `run` and
`ideate`), with the schema's names, types, defaults, choices and help; what was given
becomes a RunConfig in settings.py (`config_from_args`). Values are checked where every door's are,
before the run starts (rt_core/run/pipeline/validation.py), so a bad value gets the same sentence
as in the app.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from ..settings import schema
from ..settings.schema import IDS, KEY, Option

KEY_NOTE = ("names the environment variable holding it (keys are never given as arguments, "
            "which other users can read); without it, a key the server holds is used, and only "
            "at the provider's own endpoint or a base URL listed in RT_ALLOWED_BASE_URLS")


def dest(o: Option) -> str:
    """The attribute of the parsed arguments: the flag's own name for a key option (it
    holds a variable's name, not a key), else the option's name."""
    return o.cli_flag[2:].replace("-", "_") if o.kind is KEY else o.name


def _help(o: Option, default: Any, cap_note: str) -> str:
    text = o.help.rstrip(".")
    if o.kind is KEY:
        return f"{o.label}: {KEY_NOTE}"
    if o.name in ("max_tokens", "max_cost"):
        text += cap_note
    if o.number and o.low is not None and o.high is not None:
        text += f" ({schema.num_text(o.low)} to {schema.num_text(o.high)})"
    if default not in (None, "", []):
        text += f"; default {default}"
    return text.replace("%", "%%")


def add(p: argparse.ArgumentParser, names: Iterable[str] | None = None,
        defaults: dict[str, Any] | None = None, cap_note: str = "") -> None:
    """The flags of the named options (all when None), each as the schema declares it.
    `defaults` overrides a default for this command (ideate writes 4 candidates)."""
    chosen = schema.OPTIONS if names is None else [schema.option(n) for n in names]
    for o in chosen:
        default = (defaults or {}).get(o.name, schema.default(o.name))
        kw: dict[str, Any] = {"dest": dest(o), "help": _help(o, default, cap_note)}
        if o.kind is KEY:
            p.add_argument(o.cli_flag, metavar="VAR", **kw)
        elif o.kind is bool:
            p.add_argument(o.cli_flag, action=argparse.BooleanOptionalAction, default=default, **kw)
        elif o.kind is IDS:
            p.add_argument(o.cli_flag, metavar="IDS", default=None, **kw)
        elif o.choices:
            p.add_argument(o.cli_flag, choices=o.choices, default=default, **kw)
        else:
            p.add_argument(o.cli_flag, type=o.kind, default=default, **kw)
