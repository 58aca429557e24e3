"""Decisions are values, put into words only where they are shown: why a revision round
stopped (rt_core/stops.py), which automatic check failed (run/stem_checks.py), and which
agent is the meta-reviewer (studio/rounds_view.py). Scripted model, the test community."""
from __future__ import annotations

import json

import pytest

from rt_core import fiveq
from rt_core.errors import InputError
from rt_core.run.pipeline import jobs
from rt_core.run.revision import more as revise_more
from rt_core.run.revision.report import rounds_markdown, stop_words
from rt_core.run.revision.stem import flags, stems_for
from rt_core.run.styles.grounding import Grounding
from rt_core.run.styles.stem_checks import CheckKind, run_checks
from rt_core.types import Proposal, Researcher, Review, Run, Stop, StopReason
from tests.revisehelp import improving
from tests.test_revise_more import finished


def _stored_row(store, run_id: str) -> dict:
    """The run as the store keeps it, through its JSON (what a later version reads)."""
    return json.loads(json.dumps(store.runs.load(run_id).to_dict()))


def test_a_stop_survives_the_store_as_its_value_and_reads_as_its_words(community, scripted):
    scripted.responder = improving(ceiling=5)
    run = finished(community, revision_rounds=3)
    row = _stored_row(community, run.id)
    assert row["rounds"][2]["stopped"]["reason"] == "not_improved"  # stored as the value, no words
    assert row["rounds"][2]["stopped"]["words"] == ""
    loaded = community.runs.load(run.id).rounds
    assert [r.stopped.reason if r.stopped else None for r in loaded] == [None, None, StopReason.NOT_IMPROVED]
    assert loaded[2].stopped == Stop(StopReason.NOT_IMPROVED, 5.0, 5.0, kept=1)
    assert stop_words(loaded[2]) == ("The mean score did not improve (5.00 before, 5.00 now), so the "
                                     "revision stopped here; the run keeps round 1, the best-scored.")
    assert f"_{stop_words(loaded[2])}_" in rounds_markdown(loaded)  # the export says the same words


def test_a_run_stored_with_a_stop_in_words_loads_shows_them_and_is_refused_as_before(community, scripted):
    scripted.responder = improving(ceiling=10)
    row = _stored_row(community, finished(community, revision_rounds=1).id)
    said = "Round 2 changed nothing: no answer was rewritten, so there was nothing new to review."
    row["rounds"][1]["stopped"] = said  # how runs were stored before stops were values
    old = Run.from_dict(row)
    assert old.rounds[1].stopped.reason is StopReason.CHANGED_NOTHING
    assert stop_words(old.rounds[1]) == said
    with pytest.raises(InputError, match="changed nothing, and asking again"):
        revise_more.check(old)


def test_revision_is_refused_by_the_stop_value_alone(community, scripted):
    scripted.responder = improving(ceiling=10)
    run = finished(community, revision_rounds=1)
    revise_more.check(run)  # the last of the rounds asked for: it may go on
    run.rounds[1].stopped = Stop(StopReason.CHANGED_NOTHING)  # the value, no words at all
    community.runs.save(run)
    stored = community.runs.load(run.id)
    with pytest.raises(InputError, match="changed nothing, and asking again"):
        revise_more.plan(stored, 1, community)
    assert stop_words(stored.rounds[1]).startswith("Round 2 changed nothing")


def test_the_rounds_view_counts_meta_reviews_when_a_reviewer_is_named_like_the_meta_reviewer(community,
                                                                                             scripted):
    from studio.rounds_view import reviewed_rounds

    scripted.responder = improving(ceiling=10)
    community.corpus.upsert_researchers([Researcher(id="meta-reviewer-ada", name="Ada Meta", fields=["astronomy"],
                                                    publication_ids=["p-gaia", "p-spectra"])])
    base = finished(community, reviewer_ids=["meta-reviewer-ada", "r-lee"])
    job = jobs.start_revision(community, base.id, 2)
    assert job.wait(timeout=120) and job.error is None and not job.unexpected, (job.error, job.unexpected)
    named = [e.agent for e in job.snapshot() if e.agent.startswith("meta-reviewer") and e.status == "done"]
    assert "meta-reviewer-ada" in named  # the trap is real: a reviewer's name starts alike
    assert reviewed_rounds(job) == 2 == len([r for r in job.run.rounds[1:] if r.meta_review])


def test_the_failed_check_is_carried_by_its_value_with_its_field():
    """Two fields shown under one name: the failure names each field by its id, and the
    revision's stems are seeded with that field's concepts, not a namesake's."""
    g = Grounding([], _concepts={"astro": ["stellar spectra"], "hep": ["dark matter halos"]},
                  field_names={"astro": "Physics", "hep": "Physics"})
    p = Proposal(q1="How can agents book flights?", q2="b", q3="c", q4="d", q5="We will think.")
    failed = {(c.kind, c.field) for c in run_checks(p, g) if not c.passed}
    assert failed == {(CheckKind.Q1_CONCEPT, "astro"), (CheckKind.Q1_CONCEPT, "hep"),
                      (CheckKind.Q5_DATA_METRIC, "")}
    found = flags(p, [], g)
    assert [(f.check, f.field, f.source) for f in found["q1"]] == [
        (CheckKind.Q1_CONCEPT, "astro", "check"), (CheckKind.Q1_CONCEPT, "hep", "check")]
    assert found["q5"][0].check is CheckKind.Q5_DATA_METRIC
    seeded = stems_for(fiveq.BY_KEY["q1"], found["q1"][0], g, 0)
    assert all("stellar spectra" in s for s in seeded), seeded


def test_what_a_style_can_do_is_asked_of_the_registry_and_follows_the_override():
    from rt_core.config import LOCAL_MODEL
    from rt_core.models import registry
    from rt_core.models.settings import ModelSettings

    assert not registry.follows_instructions(LOCAL_MODEL)  # the embedded base model
    assert registry.follows_instructions("openai/gpt-4o-mini")
    assert not registry.follows_instructions("openai/gpt-4o-mini", override=registry.STEM)
    forced = ModelSettings(model="openai/gpt-4o-mini", prompt_style=registry.STEM)
    assert forced.traits.ends_at_token_budget and not forced.traits.follows_instructions
    assert ModelSettings(model=LOCAL_MODEL, prompt_style=registry.CHAT).traits.follows_instructions


def test_a_point_is_an_automatic_check_by_the_reviews_field_not_by_its_words():
    p = Proposal(q1="How can agents book flights?", q2="b", q3="c", q4="d", q5="We use the survey data and error.")
    filled = Review("r1", weaknesses="- Automatic check: Q2 does not say why it matters.", checked=["weaknesses"])
    posing = Review("r2", weaknesses="- Automatic check: Q3 never says what makes it hard.")  # a reviewer's words
    found = flags(p, [filled, posing], Grounding([]))
    assert [(f.check, f.source) for f in found["q2"]] == [(None, "check")]
    assert [(f.check, f.source) for f in found["q3"]] == [(None, "review")]
    # A review stored before the field: the label its section began with says it was filled.
    old = Review.from_dict({k: v for k, v in filled.to_dict().items() if k != "checked"})
    assert old.checked == ["weaknesses"] and Review.from_dict(posing.to_dict()).checked == []


def test_a_novelty_stored_before_its_warning_field_still_warns_once():
    from rt_core.types import Novelty

    said = "every online source failed, so the store is the literature (OpenAlex: HTTP 500)"
    old = Novelty.from_dict({"notes": ["a facet had no words", said]})
    assert old.warning == said
    assert Novelty.from_dict(Novelty(notes=[said]).to_dict()).warning == ""  # the field decides now
