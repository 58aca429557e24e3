"""The Run page's fields, drawn from the settings schema (rt_core/settings/schema.py).

Each field takes its label, help, step and bounds from the option it shows, and is keyed
by the option's session key, so the app offers what the CLI offers under the same
checks. A number field has no Streamlit bounds: a value out of range stays as typed,
the schema's sentence is shown beside it, and Start stays off until it is fixed
(`problems`), instead of the browser quietly keeping the old value.

`values` reads the session back as RunConfig fields: the one place that knows how a
field's session value becomes a stored value (0 is no cap, an unticked cut-off is none,
the "online" box is the literature).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from rt_core.settings import schema
from rt_core.settings.schema import IDS, KEY

from . import fields
from .persist import ACROSS_PAGES

# The budget's plain session keys (0: no cap). Streamlit drops a widget's key on a page
# that does not draw it, and the cap must still be there when History resumes a run:
# studio.budget copies the fields into these.
CAPS = {"max_tokens": "cap_tokens", "max_cost": "cap_cost"}
NAMED_REVIEWERS = "Named reviewers"
CLOSEST_REVIEWERS = "Most relevant researchers"
# The app's default for a field whose session value is not the stored value itself.
_APP_DEFAULTS = {"cutoff_year": 2024, "literature": False}


def defaults() -> dict[str, Any]:
    """Session defaults of every option's field (studio.state.PERSISTENT takes them in)."""
    out: dict[str, Any] = {}
    for o in schema.OPTIONS:
        if o.name in CAPS:
            continue  # studio.budget keeps these
        out[o.key] = _APP_DEFAULTS.get(o.name, schema.default(o.name))
    return out


def _value(o: schema.Option) -> Any:
    """The option's value as the session holds it, as a RunConfig (or request) value."""
    ss = st.session_state
    if o.name in CAPS:
        raw = ss.get(CAPS[o.name]) or 0
        return o.kind(raw) if raw else None
    raw = ss.get(o.key, schema.default(o.name))
    if o.name == "cutoff_year":
        return int(raw) if ss.get("use_cutoff") and raw is not None else None
    if o.name == "literature":
        return "online" if ss.get("loop_novelty") and raw else "store"
    if o.kind is IDS:
        return list(raw or [])
    if o.kind is str:
        return (raw or "").strip()
    return raw


def values() -> dict[str, Any]:
    """Every stored option as the session holds it, with the reviewers as chosen."""
    out = {o.name: _value(o) for o in schema.stored()}
    if st.session_state.get("reviewer_choice") == NAMED_REVIEWERS:
        out["num_reviewers"] = len(out["reviewer_ids"])
    else:
        out["reviewer_ids"] = []
    return out


def session_values(config) -> dict[str, Any]:
    """What `values` reads, written back: the session keys and values that make the fields
    show a stored run's settings, one entry (or two) for every stored option of the schema,
    so an option added there is restored without a line here (a refreshed or linked page,
    studio.state.restore_settings)."""
    out: dict[str, Any] = {}
    for o in schema.stored():
        value = getattr(config, o.name)
        if o.name in CAPS:
            out[CAPS[o.name]] = value or o.kind(0)  # 0: no cap
        elif o.name == "cutoff_year":
            out["use_cutoff"] = value is not None
            if value is not None:
                out[o.key] = value
        elif o.name == "literature":
            out[o.key] = value == "online"
        elif o.kind is IDS:
            out[o.key] = list(value)
        else:
            out[o.key] = value
    out["reviewer_choice"] = NAMED_REVIEWERS if config.reviewer_ids else CLOSEST_REVIEWERS
    return out


def problems() -> list[str]:
    """The schema's sentence for every number field out of range (Start stays off)."""
    given = {**values(), "timeout": _value(schema.option("timeout"))}
    return [m for o in schema.OPTIONS if o.number and o.name in given
            for m in [schema.check(o.name, given[o.name])] if m]


def sentence(name: str, value: Any) -> str | None:
    """The schema's sentence for a value of option `name`, as a field shows it; None if fine."""
    message = schema.check(name, value)
    return None if message is None else f"{message[0].upper()}{message[1:]}. {schema.hint(name)}"


def number(name: str, where=None, **kw) -> None:
    """A bounded number field for one option (studio.fields), saying the schema's sentence
    beside it when the value does not fit; the browser never bounds it itself."""
    o = schema.option(name)
    kw.setdefault("format", "%d" if o.kind is int else None)
    fields.bounded_number(o.label, o.key, o.low or 0, o.high or 0, None, step=o.kind(o.step),
                          help=o.help, where=where, check=lambda v: sentence(name, v),
                          persist_state=ACROSS_PAGES, **kw)


def text(name: str, where=st, **kw) -> None:
    o = schema.option(name)
    if o.kind is KEY:
        where.text_input(o.label, type="password", key=o.key, persist_state=ACROSS_PAGES,
                         help="Kept only in this browser session's memory; never saved or "
                              "exported. " + o.help, **kw)
    else:
        where.text_input(o.label, key=o.key, help=o.help, persist_state=ACROSS_PAGES, **kw)


def checkbox(name: str, where=st, **kw) -> None:
    o = schema.option(name)
    where.checkbox(o.label, key=o.key, help=o.help, persist_state=ACROSS_PAGES, **kw)


def slider(name: str, where=st, **kw) -> None:
    """A bounded option the mouse sets (the slider cannot leave the schema's bounds)."""
    o = schema.option(name)
    where.slider(o.label, o.kind(o.low), o.kind(o.high), step=o.kind(o.step), key=o.key,
                 help=o.help, persist_state=ACROSS_PAGES, **kw)


def select(name: str, choices: list[str], where=st, **kw) -> None:
    o = schema.option(name)
    where.selectbox(o.label, choices, key=o.key, help=o.help, persist_state=ACROSS_PAGES, **kw)
