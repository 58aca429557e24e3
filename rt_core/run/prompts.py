"""Prompt templates as data, checked when loaded.

Templates live in `prompts/*.yaml`. Each declares its `variables`; loading fails if a
template uses a placeholder it does not declare (or a positional `{}`), declares one it
never uses, or carries a key the loader does not know (a misspelt `sytem:` would
otherwise be dropped without a word). A bundled set must hold exactly the prompts the
code asks for (`BUNDLED`): a prompt nobody reads, or one missing, fails at load rather
than halfway through a run. Rendering fails if a declared variable is not supplied.
"""
from __future__ import annotations

import string
from functools import cache
from importlib import resources

import yaml

from .. import fiveq
from ..errors import ConfigError

_TEXT_KEYS = ("system", "user", "text")
_KEYS = frozenset({"variables", *_TEXT_KEYS})

# What the code asks of each bundled set: its prompt names and, for base models, the
# stems a review's parts start with. The seed templates follow the five questions.
BUNDLED: dict[str, dict[str, frozenset[str]]] = {
    "chat": {"prompts": frozenset({"profile", "draft", "aggregate", "review", "meta_review",
                                   "reference_5q", "ask_missing", "bullets", "judge"}),
             "stems": frozenset()},
    "stem": {"prompts": frozenset({"draft_header", "aggregate_header", "review_header", "review_focus",
                                   *(f"seed_{q.key}" for q in fiveq.QUESTIONS)}),
             "stems": frozenset({"strengths", "weaknesses", "score"})},
    "study": {"prompts": frozenset({"restyle", "judge_item", "judge_pair"}), "stems": frozenset()},
    "novelty": {"prompts": frozenset({"explain", "only_labels"}), "stems": frozenset()},
    "candidates": {"prompts": frozenset({"aggregate_led", "aggregate_led_header", "judge_pair",
                                         "judge_again"}), "stems": frozenset()},
    "revise": {"prompts": frozenset({"revise", "stem_header", "stem_concept", "stem_data_metric",
                                     "stem_other"}), "stems": frozenset()},
}


def _placeholders(name: str, template: str) -> set[str]:
    try:
        names = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    except ValueError as exc:  # an unmatched brace
        raise ConfigError(f"prompt '{name}': {exc}") from None
    if "" in names or any(n.isdigit() for n in names):
        raise ConfigError(f"prompt '{name}': positional placeholders ({{}}) are not allowed; "
                          "name every placeholder and declare it under variables")
    return set(names)


class Template:
    def __init__(self, name: str, spec: object):
        if not isinstance(spec, dict):
            raise ConfigError(f"prompt '{name}' must be a mapping of {sorted(_KEYS)}")
        unknown = set(spec) - _KEYS
        if unknown:
            raise ConfigError(f"prompt '{name}': unknown keys {sorted(unknown)} "
                              f"(known: {sorted(_KEYS)})")
        self.name = name
        declared = spec.get("variables") or []
        if not isinstance(declared, list) or not all(isinstance(v, str) for v in declared):
            raise ConfigError(f"prompt '{name}': variables must be a list of names")
        self.variables = set(declared)
        self.parts = {k: spec[k] for k in _TEXT_KEYS if k in spec}
        if not all(isinstance(t, str) for t in self.parts.values()):
            raise ConfigError(f"prompt '{name}': {', '.join(_TEXT_KEYS)} must be text")
        used = set().union(*(_placeholders(name, t) for t in self.parts.values()))
        if used != self.variables:
            raise ConfigError(
                f"prompt '{name}': placeholders {sorted(used)} do not match declared variables "
                f"{sorted(self.variables)}")

    def render(self, **values: str) -> dict[str, str]:
        missing = self.variables - values.keys()
        if missing:
            raise ConfigError(f"prompt '{self.name}' needs {sorted(missing)}")
        return {k: t.format(**{v: values[v] for v in self.variables}) for k, t in self.parts.items()}

    def messages(self, **values: str) -> list[dict[str, str]]:
        """Chat messages for a system/user template (an empty system part is dropped)."""
        parts = self.render(**values)
        msgs = []
        if parts.get("system", "").strip():
            msgs.append({"role": "system", "content": parts["system"].strip()})
        msgs.append({"role": "user", "content": (parts.get("user") or parts.get("text", "")).strip()})
        return msgs


class PromptSet:
    def __init__(self, name: str, data: dict):
        self.name = name
        stems = data.pop("stems", {}) or {}
        if not isinstance(stems, dict) or not all(isinstance(v, str) for v in stems.values()):
            raise ConfigError(f"prompt set '{name}': stems must map names to text")
        self.stems: dict[str, str] = stems
        self.templates = {k: Template(k, v) for k, v in data.items()}

    def __getitem__(self, key: str) -> Template:
        try:
            return self.templates[key]
        except KeyError:
            raise ConfigError(f"prompt set '{self.name}' has no prompt '{key}'") from None

    def check_names(self, prompts: frozenset[str], stems: frozenset[str]) -> None:
        """Exactly these prompts and stems: an extra one is a typo or dead text, a missing
        one would fail halfway through a run."""
        for kind, have, want in (("prompts", set(self.templates), prompts),
                                 ("stems", set(self.stems), stems)):
            if have - want:
                raise ConfigError(f"prompt set '{self.name}': unknown {kind} {sorted(have - want)}")
            if want - have:
                raise ConfigError(f"prompt set '{self.name}': missing {kind} {sorted(want - have)}")


def parse_prompt_set(name: str, text: str) -> PromptSet:
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"prompt file '{name}' must be a mapping")
    return PromptSet(name, data)


@cache
def load(name: str) -> PromptSet:
    """Load `prompts/<name>.yaml` bundled with rt_core ('chat', 'stem', 'study', 'novelty' or
    'revise'),
    checked against what the code asks of it."""
    if name not in BUNDLED:
        raise ConfigError(f"no bundled prompt set '{name}'", f"Use one of {sorted(BUNDLED)}.")
    text = resources.files("rt_core.run").joinpath("prompts", f"{name}.yaml").read_text("utf-8")
    ps = parse_prompt_set(name, text)
    ps.check_names(BUNDLED[name]["prompts"], BUNDLED[name]["stems"])
    return ps
