"""THE list of a run's options: name, type, default, bounds, choices and help, once.

Every door is derived from `OPTIONS`: the flags of `run` and `ideate` (and the subset a
stored run takes again, `AGAIN`: resume, revise, credit), the Run page's fields, the
checks before a run starts (`check`, used by rt_core/run/pipeline/validation.py and beside each
app field) and RunConfig's defaults. Adding an option here adds it to every door; a
test (tests/test_settings_schema.py) fails when a door lacks one.

`name` is the RunConfig field (RunRequest's for `timeout`; a key option is never stored:
it names where a key comes from, an environment variable on the command line, a password
field in the app).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import LOCAL_EMBEDDER, LOCAL_MODEL
from ..errors import SettingError
from . import endpoint
from .modes import MODES

KEY = "key"  # the kind of a key option: not a value, where a key comes from
IDS = "ids"  # a list of ids (comma-separated on the command line)


@dataclass(frozen=True)
class Option:
    name: str  # the RunConfig field, or the request's (`stored=False`)
    kind: Any  # int, float, str, bool, IDS or KEY
    default: Any
    noun: str  # its name in a sentence: "<noun> must be between ..."
    label: str  # the app field's label
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    flag: str = ""  # the CLI flag ("" = --name with dashes)
    app_key: str = ""  # the app's session key ("" = name)
    optional: bool = False  # None is a value: no cap, no cut-off
    stored: bool = True  # a RunConfig field (False: the request's, or a key)
    endpoint: str = ""  # the endpoint (rt_core.settings.endpoint.ROLES) it belongs to
    step: float = 1

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def key(self) -> str:
        return self.app_key or self.name

    @property
    def number(self) -> bool:
        return self.kind in (int, float)


def _key_option(role: str, label: str, flag: str, app_key: str, whose: str) -> Option:
    return Option(f"{role}_key", KEY, "", f"the {whose} key", label,
                  f"Where the {whose} key comes from. It goes to this model at this base URL "
                  "only; a key the server holds goes only to its provider's own endpoint or to "
                  "an address the operator lists in RT_ALLOWED_BASE_URLS.",
                  flag=flag, app_key=app_key, stored=False, endpoint=role)


OPTIONS: tuple[Option, ...] = (
    # -- the run's model --------------------------------------------------------------------
    Option("model", str, LOCAL_MODEL, "the model", "Model",
           "A litellm model string: gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
           "ollama/llama3.1, or openai/<name> with a base URL.", endpoint=endpoint.MODEL),
    Option("base_url", str, "", "the base URL", "Base URL (optional)",
           "For Ollama, vLLM or any OpenAI-compatible server.", endpoint=endpoint.MODEL),
    _key_option(endpoint.MODEL, "API key", "--api-key-env", "api_key", "model's"),
    Option("temperature", float, 0.7, "the temperature", "Temperature",
           "Sampling temperature of the run's model.", low=0.0, high=2.0, step=0.1),
    # -- the tournament's judge --------------------------------------------------------------
    Option("judge_model", str, "", "the judge model", "Judge model (optional)",
           "The model that compares candidates two at a time. Empty: the run's model when it "
           "follows instructions; a base model cannot judge, and candidates are then ranked by "
           "measured signals.", app_key="loop_judge_model", endpoint=endpoint.JUDGE),
    Option("judge_base_url", str, "", "the judge's base URL", "Judge base URL (optional)",
           "Where the judge model is served, when not at its provider.", endpoint=endpoint.JUDGE),
    _key_option(endpoint.JUDGE, "Judge API key", "--judge-api-key-env", "judge_key", "judge's"),
    # -- the evaluator (restates a reference in five questions) -------------------------------
    Option("evaluator_model", str, "", "the evaluator model", "Evaluator model (optional)",
           "A capable model that restates the reference paper in five questions, once (the "
           "result is stored). Empty: a pasted text, a stored restatement or a shipped summary.",
           endpoint=endpoint.EVALUATOR),
    Option("evaluator_base_url", str, "", "the evaluator's base URL",
           "Evaluator base URL (optional)", "Where the evaluator model is served.",
           endpoint=endpoint.EVALUATOR),
    _key_option(endpoint.EVALUATOR, "Evaluator API key", "--evaluator-api-key-env",
                "evaluator_key", "evaluator's"),
    # -- the embedder -------------------------------------------------------------------------
    Option("embedder", str, LOCAL_EMBEDDER, "the embedder", "Embedder (reviewer choice and similarity)",
           "The bundled MiniLM runs offline; a hosted one needs its provider's key.",
           endpoint=endpoint.EMBEDDER),
    _key_option(endpoint.EMBEDDER, "Embedder API key (if different)", "--embedder-api-key-env",
                "embedder_key", "embedder's"),
    # -- the simulation -----------------------------------------------------------------------
    Option("mode", str, "global", "the aggregation mode", "Aggregation mode",
           "Which parts of the neighbourhood the writers read.", choices=tuple(MODES)),
    Option("num_reviewers", int, 3, "the number of reviewers", "Number of reviewers",
           "Chosen by how close their work is to the proposal.", low=0, high=10,
           flag="--reviewers"),
    Option("reviewer_ids", IDS, [], "the named reviewers", "Named reviewers (not in the neighbourhood)",
           "Reviewers by id instead of the closest ones.", stored=True),
    Option("cutoff_year", int, None, "the profile cut-off year", "Read papers up to year",
           "Profiles read only papers up to this year (to mask the future).", low=1900,
           high=2100, flag="--cutoff", optional=True),
    Option("keep_undated", bool, False, "keeping undated papers", "Keep papers without a year",
           "With a cut-off year, authors also read their papers that have no year."),
    Option("reference_paper_id", str, "", "the reference paper", "Reference paper (optional)",
           "A paper to compare the proposal with (node masking): the writers do not see it.",
           flag="--reference", app_key="reference_id"),
    Option("concurrency", int, 4, "the number of model calls at once", "Model calls at once",
           "How many calls run in parallel (a serial model still takes one at a time).",
           low=1, high=32),
    Option("timeout", float, 120.0, "the timeout", "Timeout per call (seconds)",
           "How long one model call may take before it is retried.", low=1.0, high=3600.0,
           stored=False, step=10.0),
    # -- the brainstorm loop ------------------------------------------------------------------
    Option("candidates", int, 1, "the number of candidates", "Candidate proposals",
           "Each candidate leads with a different author, pair of fields or concept pairing; "
           "they are then ranked. 1 = a single proposal.", low=1, high=12,
           app_key="loop_candidates"),
    Option("check_novelty", bool, False, "the novelty check", "Check novelty against prior work",
           "Match each candidate's problem (Q1) and method (Q5) with the nearest papers.",
           flag="--novelty", app_key="loop_novelty"),
    Option("literature", str, "store", "the literature", "Search online literature too",
           "Where the novelty check looks: the store only, or online too (Semantic Scholar, "
           "then OpenAlex, then arXiv).", choices=("store", "online"), app_key="loop_online"),
    Option("revision_rounds", int, 0, "revision rounds", "Revision rounds after review",
           "The authors revise from the reviews and the same reviewers review again; stops "
           "early when the mean score does not rise.", low=0, high=3, app_key="loop_rounds"),
    # -- the budget ---------------------------------------------------------------------------
    Option("max_tokens", int, None, "the token budget", "Budget in tokens (0: no cap)",
           "The run stops cleanly before it would spend more tokens (prompt and reply); "
           "resume it with a larger budget to finish.", low=0, high=10**9, optional=True,
           app_key="cap_tokens_field", step=1000),
    Option("max_cost", float, None, "the dollar budget", "Budget in dollars (0: no cap)",
           "The run stops cleanly before it would spend more, at the model's price in "
           "litellm's cost map.", low=0.0, high=10**6, optional=True,
           app_key="cap_cost_field", step=0.05),
)
BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}

# What a stored run takes anew when it is resumed, revised or credited: its keys (never
# stored), the timeout, and a new budget (replacing the stored one).
AGAIN = ("model_key", "judge_key", "evaluator_key", "embedder_key", "timeout", "max_tokens",
         "max_cost")
# What a replay or a bench offers: the run's model, the evaluator, no tournament.
REPLAY = ("model", "base_url", "model_key", "temperature", "timeout", "num_reviewers",
          "concurrency", "embedder", "embedder_key", "evaluator_model", "evaluator_base_url",
          "evaluator_key", "keep_undated", "max_tokens", "max_cost")


def option(name: str) -> Option:
    return BY_NAME[name]


def default(name: str) -> Any:
    value = BY_NAME[name].default
    return list(value) if isinstance(value, list) else value


def stored() -> tuple[Option, ...]:
    """The options RunConfig stores."""
    return tuple(o for o in OPTIONS if o.stored)


def check_config(config: Any) -> None:
    """Every stored option of a RunConfig within its type, bounds and choices, the first
    one that is not raised as a SettingError in the words of `check` (the sentence the app
    shows beside its field), with `hint`. A run's start asks it before the run's own rules
    (run/pipeline/validation.py), which read the mode and the counts as the schema allows
    them: an unknown mode, or a count that is no number, never reaches them."""
    for o in stored():
        message = check(o.name, getattr(config, o.name))
        if message:
            raise SettingError(message, hint(o.name))


def num_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def check(name: str, value: Any) -> str | None:
    """What is wrong with `value` for option `name`, in one sentence; None when it fits.
    The same sentence whichever door it came through."""
    o = BY_NAME[name]
    if value is None:
        return None if o.optional or not o.number else f"{o.noun} is missing"
    if o.number:
        whole = o.kind is int
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (whole and not float(value).is_integer()):
            return f"{o.noun} must be a {'whole ' if whole else ''}number (got {value!r})"
        if o.low is not None and o.high is not None and not o.low <= value <= o.high:
            return f"{o.noun} must be between {num_text(o.low)} and {num_text(o.high)}, not {num_text(value)}"
    if o.choices and value not in o.choices:
        return f"{o.noun} must be one of: {', '.join(o.choices)} (not {value!r})"
    return None


def hint(name: str) -> str:
    """What to give instead, for the message of `check`."""
    o = BY_NAME[name]
    if o.choices:
        return f"Use one of: {', '.join(o.choices)}."
    if o.number and o.low is not None and o.high is not None:
        return f"Give a value from {num_text(o.low)} to {num_text(o.high)}."
    return ""

