"""Leave-one-out credit: who matters, only the changed calls, and what cannot be compared."""
import pytest

from rt_core.errors import InputError
from rt_core.models import registry
from rt_core.run.credit import variants as credit
from rt_core.run.pipeline.simulation import Simulation
from rt_core.types import RunConfig, RunRequest
from tests import credit_script

AUTHORS = ["r-ada", "r-nia", "r-cole"]


def finished_run(store, scripted, authors=AUTHORS, papers=("p-gaia", "p-agents")):
    scripted.responder = credit_script.responder
    config = RunConfig(model="scripted/demo", researcher_ids=list(authors), paper_ids=list(papers),
                       num_reviewers=2)
    run = Simulation(RunRequest(config, max_retries=0), store).run_sync()
    assert run.status == "done", run.errors
    return run


def test_the_researcher_who_matters_is_found(community, scripted):
    run = finished_run(community, scripted)
    scripted.history.clear()
    result = credit.leave_one_out(run, community)
    by_id = {c.id: c for c in result.credits}
    assert list(by_id) == AUTHORS
    ada = by_id["r-ada"]
    # Without Ada every answer loses her sentence, and the reviewers' score drops 8 -> 4.
    assert ada.score_change == -4
    assert all(ada.moved[q] < min(by_id["r-nia"].moved[q], by_id["r-cole"].moved[q]) for q in ada.moved)
    assert by_id["r-nia"].score_change == 0 and by_id["r-cole"].score_change == 0
    assert ada.sentence.startswith("Without Ada Astro, Q") and "kinematics" in ada.sentence.lower()
    # Stored on the run.
    assert [c.id for c in community.runs.load(run.id).credit] == AUTHORS


def test_only_the_changed_calls_are_made(community, scripted):
    run = finished_run(community, scripted)
    scripted.history.clear()
    result = credit.leave_one_out(run, community, save=False)
    m, r = len(AUTHORS), len(run.reviews)
    expected = credit.formula(registry.CHAT, m, r)
    assert expected == m * (1 + r) == result.estimate.calls.calls
    assert len(scripted.history) == result.usage.calls == expected
    assert result.calls_by_variant[credit.FULL] == 0  # the full re-writing is all cache
    sent = ["\n".join(str(m["content"]) for m in h["messages"]) for h in scripted.history]
    assert not any("These are publications by" in s for s in sent)  # profiles: stored
    assert sum("team members' drafts" in s for s in sent) == m  # one aggregate per variant
    # Asked again, everything comes from the cache.
    scripted.history.clear()
    again = credit.leave_one_out(run, community, save=False)
    assert scripted.history == [] and again.usage.calls == 0
    assert [c.moved for c in again.credits] == [c.moved for c in result.credits]


def test_paper_credit_rewrites_the_drafts(community, scripted):
    run = finished_run(community, scripted, papers=("p-gaia", "p-agents", "p-crime"))
    scripted.history.clear()
    result = credit.leave_one_out(run, community, papers=True, save=False)
    assert [c.id for c in result.credits] == ["p-gaia", "p-agents", "p-crime"]
    expected = credit.formula(registry.CHAT, 3, len(run.reviews), papers=3, by_paper=True)
    assert len(scripted.history) == expected == 3 * (3 + 1 + len(run.reviews))
    assert all(c.kind == "paper" and c.sentence.startswith("Without ") for c in result.credits)


def test_a_run_with_one_author_has_nothing_to_compare(community, scripted):
    run = finished_run(community, scripted, authors=["r-ada"])
    scripted.history.clear()
    with pytest.raises(InputError, match="one author.*nothing to compare"):
        credit.leave_one_out(run, community)
    assert scripted.history == []


def test_a_cap_below_the_estimate_is_refused_before_any_call(community, scripted):
    run = finished_run(community, scripted)
    scripted.history.clear()
    need = credit.estimate(run, community).calls.tokens
    with pytest.raises(InputError, match="more than the cap"):
        credit.leave_one_out(run, community, max_tokens=need // 2)
    # Without a cap given, the run's own cap holds.
    run.config.max_tokens = need // 2
    with pytest.raises(InputError, match="more than the cap"):
        credit.leave_one_out(run, community)
    assert scripted.history == []


def test_the_cli_prints_the_estimate_and_writes_csv_and_json(community, store_at, scripted, tmp_path, capsys):
    import json

    from rt_core.__main__ import main

    run = finished_run(community, scripted)
    out = tmp_path / "out"
    assert main(["--db", str(store_at), "credit", run.id, "--out-dir", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.index("Leave-one-out: 3 re-writings, 9 (up to") < err.index("wrote")
    assert "formula M*(agg(M-1)+R), M=3, R=2: 9" in err
    doc = json.loads((out / "credit.json").read_text())
    assert [r["name"] for r in doc["credit"]] == ["Ada Astro", "Nia Lang", "Cole Crim"]
    assert doc["calls"] == doc["estimated_calls"] == 9
    csv = (out / "credit.csv").read_text()
    assert csv.splitlines()[0].startswith("kind,name,lowest_similarity") and "Ada Astro" in csv
    # One author: one clear message, exit code 2, no file.
    single = finished_run(community, scripted, authors=["r-ada"])
    assert main(["--db", str(store_at), "credit", single.id, "--out-dir", str(tmp_path / "x")]) == 2
    assert "nothing to compare" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_with_a_reference_the_change_in_similarity_is_reported(community, scripted):
    from rt_core.types import Proposal

    community.references.put("p-networks", "summary", Proposal(
        q1="Stellar kinematics benchmarks calibrate every transfer test.", q2="It matters.",
        q3="Hard.", q4="New.", q5="Stellar kinematics benchmarks calibrate every transfer test."))
    scripted.responder = credit_script.responder
    config = RunConfig(model="scripted/demo", researcher_ids=AUTHORS, paper_ids=["p-gaia", "p-agents"],
                       num_reviewers=1, reference_paper_id="p-networks")
    run = Simulation(RunRequest(config, max_retries=0), community).run_sync()
    assert run.status == "done" and run.similarity is not None
    by_id = {c.id: c for c in credit.leave_one_out(run, community, save=False).credits}
    # The reference states Ada's sentence: without her the proposal drifts away from it.
    assert by_id["r-ada"].reference_change < 0
    assert by_id["r-ada"].reference_change < by_id["r-nia"].reference_change


def test_the_credit_sentence_quotes_the_proposal_on_screen_or_says_what_it_quotes():
    from rt_core.run.credit.measure import sentence
    from rt_core.types import Proposal, Run

    full = Run("f", RunConfig(), proposal=Proposal(
        q1="How can stellar spectra from the Simons Observatory guide language agents?"))
    without = Run("w", RunConfig(), proposal=Proposal(q1="How can language agents read text?"))
    moves = {"q1": 0.5, "q2": 1.0}
    on_screen = Proposal(q1="How can stellar spectra guide language agents?")
    said = sentence("Ada Astro", moves, full, without, {}, on_screen)
    assert "'stellar spectra'" in said and "Simons" not in said  # only words the reader can see
    elsewhere = sentence("Ada Astro", moves, full, without, {}, Proposal(q1="How can galaxies be counted?"))
    assert "re-written with everyone (not the one on screen)" in elsewhere and "'stellar spectra'" in elsewhere
