"""One settings schema, every door derived from it (rt_core/settings/schema.py): the flags of
`run` and `ideate` (and of the commands that take a stored run again), the Run page's fields
through app.py (AppTest), RunConfig's fields and defaults, and the checks, which give the
same sentence at every door."""
from __future__ import annotations

import argparse
import dataclasses

import pytest

from rt_core.cli import settings
from rt_core.cli.parser import build_parser
from rt_core.errors import ConfigError
from rt_core.settings import schema
from rt_core.settings.schema import IDS, KEY
from rt_core.types import Run, RunConfig
from tests.apphelp import PRESET, goto, module_data_dir, new_app

data_dir = module_data_dir("schema-app-data")

# RunConfig fields that are not options of a door: the neighbourhood (chosen on its own
# page or by --researchers/--papers) and what the run itself records.
NOT_OPTIONS = {"researcher_ids", "paper_ids", "max_profile_papers", "prompt_style", "revision_reopened",
               "from_idea"}


def subcommand(name: str) -> argparse.ArgumentParser:
    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def flags(name: str) -> set[str]:
    return {s for a in subcommand(name)._actions for s in a.option_strings}


# -- the command line ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "ideate"])
def test_run_and_ideate_offer_every_option_of_the_schema(command):
    missing = [o.cli_flag for o in schema.OPTIONS if o.cli_flag not in flags(command)]
    assert not missing, f"`{command}` lacks {missing}"


@pytest.mark.parametrize(("command", "names"), [("resume", schema.AGAIN), ("revise", schema.AGAIN),
                                                ("credit", schema.AGAIN), ("replay", schema.REPLAY),
                                                ("bench", schema.REPLAY)])
def test_commands_on_a_stored_run_or_a_replay_offer_their_options(command, names):
    missing = [schema.option(n).cli_flag for n in names if schema.option(n).cli_flag not in flags(command)]
    assert not missing, f"`{command}` lacks {missing}"


def test_ideate_takes_revision_rounds_and_the_novelty_check_into_the_run():
    args = build_parser().parse_args(["ideate", "--researchers", "r-a", "--out-dir", "x",
                                      "--revision-rounds", "2", "--novelty", "--literature", "online",
                                      "--judge-base-url", "http://127.0.0.1:9/v1", "--cutoff", "2020"])
    c = settings.run_request(args, ["r-a"], []).config
    assert (c.revision_rounds, c.check_novelty, c.literature, c.candidates) == (2, True, "online", 4)
    assert (c.judge_base_url, c.cutoff_year) == ("http://127.0.0.1:9/v1", 2020)


def test_run_takes_the_brainstorm_loop_and_keeps_its_plain_defaults():
    args = build_parser().parse_args(["run", "--candidates", "3", "--judge-model", "openai/j"])
    c = settings.config_from_args(args)
    assert (c.candidates, c.judge_model, c.check_novelty, c.revision_rounds) == (3, "openai/j", False, 0)
    plain = settings.config_from_args(build_parser().parse_args(["run"]))
    assert plain == RunConfig(), "the command line's defaults are the library's"


def test_a_value_out_of_range_is_the_same_sentence_on_the_command_line(tmp_path, capsys):
    from rt_core.__main__ import main

    code = main(["--db", str(tmp_path / "s.sqlite3"), "ideate", "--model", "scripted/demo",
                 "--researchers", "r-neubig-graham", "--candidates", "50", "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and f"error: {schema.check('candidates', 50)}" in err and "Traceback" not in err


# -- the stored config --------------------------------------------------------------------------
def test_run_config_stores_every_stored_option_with_the_schemas_default():
    fields = {f.name: f for f in dataclasses.fields(RunConfig)}
    for o in schema.stored():
        assert o.name in fields, f"RunConfig does not store {o.name}"
        assert getattr(RunConfig(), o.name) == schema.default(o.name), o.name
    assert set(fields) - {o.name for o in schema.stored()} == NOT_OPTIONS, "a setting outside the schema"


def test_an_old_stored_config_still_loads():
    """A run stored before the schema (flat endpoint fields, an option since removed)."""
    old = {"id": "old00001", "status": "done",
           "config": {"researcher_ids": ["r-a"], "model": "openai/gpt-4o-mini", "base_url": "",
                      "judge_model": "openai/j", "judge_base_url": "http://h/v1", "num_reviewers": 2,
                      "a_setting_of_long_ago": True}}
    run = Run.from_dict(old)
    assert run.config.target("judge") == ("openai/j", "http://h/v1")
    assert (run.config.num_reviewers, run.config.candidates, run.config.literature) == (2, 1, "store")


@pytest.mark.parametrize(("name", "value"), [("candidates", 13), ("revision_rounds", -1),
                                             ("num_reviewers", 11), ("temperature", 2.5),
                                             ("cutoff_year", 1800), ("mode", "all")])
def test_the_check_before_a_run_is_the_schemas(name, value):
    with pytest.raises(ConfigError) as info:
        schema.check_config(RunConfig(**{name: value}))
    assert str(info.value) == schema.check(name, value) and info.value.hint == schema.hint(name)


def test_the_check_takes_the_bounds_and_kinds_of_the_schema():
    assert schema.check("candidates", 12) is None and schema.check("candidates", 1) is None
    assert schema.check("candidates", 2.5) == "the number of candidates must be a whole number (got 2.5)"
    assert schema.check("candidates", True) is not None
    assert schema.check("max_tokens", None) is None and schema.check("max_tokens", -1) is not None
    assert schema.check("revision_rounds", 5) == "revision rounds must be between 0 and 3, not 5"


# -- the app ------------------------------------------------------------------------------------
WIDGETS = ("number_input", "text_input", "checkbox", "selectbox", "slider", "multiselect", "radio")
# Session values that reveal the fields drawn only when they apply: a hosted model and
# embedder (their key fields), a judge and an evaluator (their addresses and keys), a cut-off.
REVEAL = {"model": "openai/gpt-4o-mini", "embedder": "text-embedding-3-small",
          "loop_judge_model": "openai/judge", "evaluator_model": "openai/restater", "use_cutoff": True}


def app_fields(at) -> set[str]:
    return {w.key for kind in WIDGETS for w in getattr(at, kind) if w.key}


def run_page(**session):
    at = new_app()
    goto(at, "run")
    for k, v in {**REVEAL, **session}.items():
        at.session_state[k] = v
    return at.run()


def test_the_run_page_offers_every_option_of_the_schema():
    closest = app_fields(run_page(reviewer_choice="Most relevant researchers"))
    named = app_fields(run_page(reviewer_choice="Named reviewers"))
    missing = [o.key for o in schema.OPTIONS if o.key not in closest | named]
    assert not missing, f"the Run page lacks {missing}"
    assert {o.label for o in schema.OPTIONS if o.kind is not KEY} >= {"Judge base URL (optional)"}


def test_a_number_out_of_range_is_named_beside_its_field_and_start_waits():
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    assert not at.button(key="run_start").disabled
    at.number_input(key="loop_candidates").set_value(50).run()
    sentence = schema.check("candidates", 50)
    assert at.number_input(key="loop_candidates").value == 50, "kept as typed, not silently reverted"
    assert any(sentence[1:] in e.value for e in at.error), [e.value for e in at.error]
    start = at.button(key="run_start")
    assert start.disabled and sentence in start.help
    at.number_input(key="loop_candidates").set_value(12).run()
    assert not at.button(key="run_start").disabled and not at.error
    at.number_input(key="cap_tokens_field").set_value(-5).run()
    assert at.button(key="run_start").disabled, "a negative budget"


def test_the_settings_page_lists_every_option_with_its_flag():
    at = goto(new_app(), "settings")
    table = next(t.value for t in at.table if "command line" in t.value.columns)
    assert [flag.split()[0] for flag in table["command line"]] == [o.cli_flag for o in schema.OPTIONS]
    assert "1 to 12" in set(table["range or choices"])


def _unusual(o: schema.Option):
    """A stored value of option `o` other than its default, that its field can show."""
    d = schema.default(o.name)
    if o.kind is IDS:
        return ["r-unusual"]
    if o.kind is bool:
        return not d
    if o.choices:
        return next(c for c in o.choices if c != d)
    if o.number:
        return o.kind(o.high)
    return f"unusual-{o.name}"


def test_a_linked_run_restores_every_stored_option_of_the_schema(monkeypatch):
    """A refreshed or linked Run page shows the run's settings, every one the schema stores:
    an option added to the schema is restored too, or this fails (it read the defaults)."""
    import streamlit

    from studio import run_fields, state

    values = {o.name: _unusual(o) for o in schema.stored()}
    values["num_reviewers"] = len(values["reviewer_ids"])  # named reviewers: as many as named
    config = RunConfig(researcher_ids=["r-a"], paper_ids=["p-a"], **values)
    assert all(getattr(config, n) != schema.default(n) for n in values), "every value is not the default"
    session = {**state.PERSISTENT, "hood_r": [], "hood_p": [], "cap_tokens": 0, "cap_cost": 0.0}
    monkeypatch.setattr(streamlit, "session_state", session)
    state.restore_settings(config)
    assert run_fields.values() == values
    assert (session["hood_r"], session["hood_p"]) == (["r-a"], ["p-a"])
    # Back to the closest reviewers, no cut-off, no cap: the page follows that run too.
    plain = dataclasses.replace(config, reviewer_ids=[], num_reviewers=7, cutoff_year=None, max_tokens=None)
    state.restore_settings(plain)
    assert run_fields.values() == {**values, "reviewer_ids": [], "num_reviewers": 7, "cutoff_year": None,
                                   "max_tokens": None}
