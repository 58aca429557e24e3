"""Whole runs on the scripted model: modes, reviewers, failures, resume, cancel."""
import os
import threading
import time

import pytest

from rt_core.errors import ConfigError, InputError, NotFoundError, ProviderError
from rt_core.models.scripted import demo_responder
from rt_core.run.evidence.evaluate import evaluate_against
from rt_core.run.pipeline.simulation import Simulation
from rt_core.store.runs import HOST, RunConflict
from rt_core.types import Proposal, Run, RunConfig, RunRequest


def request(**cfg) -> RunRequest:
    return RunRequest(RunConfig(**{"model": "scripted/demo", **cfg}), max_retries=0)


def simulate(store, **cfg):
    return Simulation(request(**cfg), store)


def prompts_sent(scripted):
    return ["\n".join(m["content"] for m in h["messages"]) for h in scripted.history]


def test_global_run_reads_writes_reviews_and_evaluates(community, demo):
    events = []
    community.references.put("p-llm", "summary", Proposal(
        q1="How does instruction tuning change language models?", q2="Assistants depend on it.",
        q3="Behaviour shifts are hard to measure.", q4="Earlier studies were small.",
        q5="We tune models of many sizes and compare them."))
    # The reference is from 2023, so profiles read only papers up to 2022.
    sim = simulate(community, researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia", "p-agents"],
                   num_reviewers=2, reference_paper_id="p-llm")
    sim.on_progress = events.append
    run = sim.run_sync()
    assert run.status == "done" and run.errors == []
    assert set(run.profiles) >= {"r-ada", "r-nia"}
    assert all(getattr(run.proposal, k) for k in ("q1", "q2", "q3", "q4", "q5"))
    assert [d.author_id for d in run.proposal.drafts] == ["r-ada", "r-nia"]
    reviewers = [r.reviewer_id for r in run.reviews]
    assert len(reviewers) == 2 and not {"r-ada", "r-nia"} & set(reviewers)
    assert run.meta_review.score == pytest.approx(sum(r.score for r in run.reviews) / 2)
    assert set(run.similarity.per_question) == {"q1", "q2", "q3", "q4", "q5"}
    assert run.similarity.reference_source.startswith("shipped summary")
    assert "p-llm" not in run.profiles["r-nia"].paper_ids
    stages_seen = [e.stage for e in events if e.status == "done"]
    assert stages_seen.index("read") < stages_seen.index("write") < stages_seen.index("review")
    # the stored run is the same run
    assert community.runs.load(run.id).proposal == run.proposal


def test_reviewers_are_the_closest_non_authors(community, demo):
    run = simulate(community, researcher_ids=["r-nia"], paper_ids=["p-agents"], num_reviewers=1).run_sync()
    # The proposal is about web agents; Lee Tokens wrote the web-agents paper. (Nia, the
    # author, wrote it too, and authors are never reviewers.)
    assert [r.reviewer_id for r in run.reviews] == ["r-lee"]


def test_named_reviewers_are_used(community, demo):
    run = simulate(community, researcher_ids=["r-ada"], paper_ids=["p-gaia"],
                   reviewer_ids=["r-cole"]).run_sync()
    assert [r.reviewer_id for r in run.reviews] == ["r-cole"]


@pytest.mark.parametrize("mode,reads,has_papers,has_persona,drafts", [
    ("self", 0, False, False, 1),
    ("data", 0, True, False, 1),
    ("agent", 2, False, True, 2),
    ("global", 2, True, True, 2),
])
def test_aggregation_modes_send_what_the_paper_describes(community, demo, mode, reads, has_papers,
                                                         has_persona, drafts):
    run = simulate(community, researcher_ids=["r-ada", "r-cole"], paper_ids=["p-llm"],
                   num_reviewers=0, mode=mode).run_sync()
    assert run.status == "done"
    assert len(run.profiles) == reads
    assert len(run.proposal.drafts) == drafts
    write_prompts = [p for p in prompts_sent(demo) if "[Question 1]" in p and "Draft 1" not in p]
    assert len(write_prompts) == drafts
    assert all(("Scaling instruction-tuned" in p) == has_papers for p in write_prompts)
    assert all(("I study" in p) == has_persona for p in write_prompts)


def test_reference_paper_is_masked_from_writing_and_reading(community, demo):
    run = simulate(community, researcher_ids=["r-nia"], paper_ids=["p-llm", "p-agents"],
                   num_reviewers=0, reference_paper_id="p-llm").run_sync()
    assert run.profiles["r-nia"].paper_ids == ["p-agents"]
    write_prompts = [p for p in prompts_sent(demo) if "Propose one new research idea" in p]
    assert write_prompts and all("Scaling instruction-tuned" not in p for p in write_prompts)


def test_the_cutoff_comes_from_the_reference_and_undated_papers_need_consent(community, demo):
    from rt_core.types import Paper

    community.corpus.upsert_papers([Paper(id="p-undated", title="Agents that browse without a date",
                                          abstract="An undated preprint about web agents.")])
    community.corpus.upsert_researchers([__import__("rt_core.types").types.Researcher(
        id="r-nia", name="Nia Lang", publication_ids=["p-undated"])])
    # A 2023 reference: Nia's 2023 paper is after the cut-off; the undated one may be too.
    run = simulate(community, researcher_ids=["r-nia"], paper_ids=["p-gaia"], num_reviewers=0,
                   reference_paper_id="p-llm", cutoff_year=2030).run_sync()
    assert run.profiles["r-nia"].paper_ids == ["p-agents"]
    kept = simulate(community, researcher_ids=["r-nia"], paper_ids=["p-gaia"], num_reviewers=0,
                    reference_paper_id="p-llm", keep_undated=True).run_sync()
    assert sorted(kept.profiles["r-nia"].paper_ids) == ["p-agents", "p-undated"]


def test_cutoff_year_limits_what_a_profile_reads(community, demo):
    run = simulate(community, researcher_ids=["r-nia"], paper_ids=["p-gaia"], num_reviewers=0,
                   cutoff_year=2022).run_sync()
    assert run.profiles["r-nia"].paper_ids == ["p-agents"]


@pytest.mark.parametrize("cfg,error", [
    (dict(), InputError),
    (dict(researcher_ids=["r-nobody"], paper_ids=["p-llm"]), NotFoundError),
    (dict(researcher_ids=["r-ada"], paper_ids=["p-missing"]), NotFoundError),
    (dict(paper_ids=["p-llm"], mode="global"), InputError),
    (dict(researcher_ids=["r-ada"], mode="data"), InputError),
    (dict(researcher_ids=["r-ada"], paper_ids=["p-llm"], reviewer_ids=["r-ada"]), InputError),
    (dict(researcher_ids=["r-ada"], paper_ids=["p-llm"], mode="nonsense"), InputError),
    (dict(researcher_ids=["r-ada"], paper_ids=["p-llm"], num_reviewers=99), InputError),
])
def test_bad_input_fails_before_any_model_call(community, demo, cfg, error):
    with pytest.raises(error) as info:
        simulate(community, **cfg).run_sync()
    assert str(info.value)
    assert demo.history == []


def failing_for(marker):
    def responder(messages, params):
        text = "\n".join(m["content"] for m in messages)
        if marker in text:
            raise ProviderError("the provider fell over", "Try again.")
        return demo_responder(messages, params)
    return responder


def test_one_failing_author_is_recorded_and_the_run_goes_on(community, demo):
    demo.responder = failing_for("Cole Crim")  # only Cole's profile prompt names him
    run = simulate(community, researcher_ids=["r-ada", "r-cole"], paper_ids=["p-gaia"],
                   num_reviewers=0).run_sync()
    assert run.status == "done"
    assert [(e.stage, e.agent, e.kind) for e in run.errors] == [("read", "r-cole", "ProviderError")]
    assert run.errors[0].hint == "Try again."
    assert [d.author_id for d in run.proposal.drafts] == ["r-ada"]


def test_a_failed_stage_keeps_finished_work_and_a_rerun_resumes_from_the_cache(community, demo):
    demo.responder = failing_for("Draft 2:")  # the aggregation prompt
    cfg = dict(researcher_ids=["r-ada", "r-nia"], paper_ids=["p-gaia"], num_reviewers=1)
    failed = simulate(community, **cfg).run_sync()
    assert failed.status == "failed"
    assert [(e.stage, e.agent) for e in failed.errors] == [("write", "aggregator")]
    stored = community.runs.load(failed.id)
    assert set(stored.profiles) == {"r-ada", "r-nia"}  # reading survived
    assert [d.author_id for d in stored.proposal.drafts] == ["r-ada", "r-nia"]  # so did the drafts
    assert stored.proposal.missing == ["q1", "q2", "q3", "q4", "q5"]  # the merge never happened
    calls_before = len(demo.history)

    demo.responder = demo_responder
    resumed = simulate(community, **cfg).run_sync()
    assert resumed.status == "done"
    new_prompts = prompts_sent(demo)[calls_before:]
    assert not any("Propose one new research idea" in p for p in new_prompts)  # drafts came from cache
    assert resumed.usage.cache_hits >= 2

    calls = len(demo.history)
    events = []
    warm = simulate(community, **cfg)
    warm.on_progress = events.append
    again = warm.run_sync()
    assert len(demo.history) == calls and again.usage.calls == 0  # a warm re-run is free
    finished = {(e.stage, e.agent): e.status for e in events if e.status != "started"
                and e.agent not in ("aggregator", "meta-reviewer", "reference")}
    assert finished and set(finished.values()) == {"cached"}  # and says so, agent by agent


def test_cancel_stops_the_run_and_keeps_finished_work(community, demo):
    cancel = threading.Event()
    sim = Simulation(request(researcher_ids=["r-ada", "r-nia", "r-cole"], paper_ids=["p-gaia"],
                             num_reviewers=2), community, cancel=cancel)
    # cancel as soon as the first draft is finished: the other authors are still writing
    sim.on_progress = lambda e: cancel.set() if e.stage == "write" and e.status == "done" else None
    run = sim.run_sync()
    assert run.status == "cancelled"
    stored = community.runs.load(run.id)
    assert stored.status == "cancelled"
    assert len(stored.profiles) == 3
    assert len(stored.proposal.drafts) >= 1  # the finished draft is kept
    assert stored.reviews == []


def test_evaluate_a_stored_run_against_another_reference(community, demo):
    run = simulate(community, researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=0).run_sync()
    assert run.similarity is None
    # Ada's profile read her spectra paper: comparing with it would measure copying.
    with pytest.raises(InputError, match="profile"):
        evaluate_against(run, "p-spectra", request(), community)
    with pytest.raises(InputError, match="writers read"):
        evaluate_against(run, "p-gaia", request(), community)
    made = evaluate_against(run, "p-networks", request(), community)
    stored = community.runs.load(run.id)
    # The comparison sits beside the run; the run keeps the reference it started with (none).
    assert stored.config.reference_paper_id == "" and stored.similarity is None
    assert community.comparisons.for_run(run.id) == [made]
    # No five answers exist for that paper: the whole proposal against its abstract, labelled.
    assert made.similarity.kind == "whole-text" and "abstract" in made.similarity.evaluator
    assert -1 <= made.similarity.mean <= 1


def test_background_job_reports_progress_and_finishes(community, demo):
    from rt_core.run.pipeline import jobs

    job = jobs.start(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1),
                     community)
    assert job.wait(timeout=120)
    assert job.run.status == "done" and job.error is None
    assert {e.stage for e in job.snapshot()} >= {"read", "write", "review"}


def test_background_job_rejects_bad_input_up_front(community, demo):
    from rt_core.run.pipeline import jobs

    with pytest.raises(InputError):
        jobs.start(RunRequest(RunConfig()), community)


def test_concurrent_jobs_in_separate_threads_both_finish(community, demo):
    """Browser sessions run simulations at the same time, each in its own thread and loop."""
    from rt_core.run.pipeline import jobs

    started = [jobs.start(request(researcher_ids=[r], paper_ids=[p], num_reviewers=1,
                                  temperature=t), community)
               for r, p, t in (("r-ada", "p-gaia", 0.0), ("r-nia", "p-llm", 0.1),
                               ("r-cole", "p-crime", 0.2))]
    for job in started:
        assert job.wait(timeout=120)
    assert [j.run.status for j in started] == ["done"] * 3, [j.run.errors for j in started]
    assert all(j.error is None and not j.unexpected for j in started)
    assert len({j.run_id for j in started}) == 3
    for job in started:
        assert community.runs.load(job.run_id).status == "done"


def test_a_run_deleted_while_running_stays_deleted(community, demo):
    sim = simulate(community, researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1)
    sim.on_progress = lambda e: community.runs.delete(sim.run.id) if e.stage == "write" else None
    run = sim.run_sync()
    assert run.status == "done"
    assert all(r["id"] != run.id for r in community.runs.list())


def test_runs_left_running_by_a_dead_process_are_marked_interrupted(community):
    from rt_core.types import Run

    community.runs.save(Run(id="orphan", config=RunConfig(), status="running", created_at="2026"))
    assert community.runs.mark_interrupted() == 1
    assert community.runs.load("orphan").status == "interrupted"


def test_the_request_reaches_the_model_unchanged(community, demo):
    """One RunRequest from page or CLI to the call: its model, temperature and key are what
    the model receives, and the caller's objects are not modified."""
    req = request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=0,
                  temperature=0.3)
    Simulation(req, community).run_sync()
    assert {h["model"] for h in demo.history} == {"demo"}  # litellm strips the provider prefix
    assert {h["params"]["temperature"] for h in demo.history} == {0.3}
    assert req.config.temperature == 0.3 and req.config.model == "scripted/demo"


def test_the_temperature_reaches_base_model_stem_calls(community, demo):
    """The slider used to do nothing on the default model: stem calls hard-coded 0.7."""
    req = request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], num_reviewers=1,
                  temperature=0.2, prompt_style="stem")
    run = Simulation(req, community).run_sync()
    assert run.status == "done", run.errors
    stem_calls = [h for h in demo.history if h["params"].get("stop") == ["\n"]]
    assert stem_calls and {h["params"]["temperature"] for h in stem_calls} == {0.2}


def test_building_a_run_reads_checks_and_writes_nothing_until_it_starts(community, demo):
    """A Simulation is a value until `start`: a bad request fails at the start, in the
    caller, and a resume touches the stored run only then."""
    bad = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"], candidates=0), community)
    assert bad.state is None
    with pytest.raises(ConfigError):
        bad.start()
    community.runs.create(Run(id="busy", config=RunConfig(), status="running", created_at="2026"))
    community.db.conn.execute("UPDATE runs SET owner_pid=?, owner_host=?, heartbeat_at=? WHERE id=?",
                              (2 ** 22 + 12345, HOST, 0.0, "busy"))  # an owner that is gone
    resumed = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"]), community,
                         run_id="busy", resume=True)
    assert community.runs.load("busy").status == "running"  # not reaped by building
    resumed.start()  # reaps the orphan, then takes over its history
    assert community.runs.load("busy").status == "interrupted" and resumed.run.created_at == "2026"
    assert demo.history == []
    community.runs.create(Run(id="live", config=RunConfig(), status="running", created_at="2026"))
    community.db.conn.execute("UPDATE runs SET owner_pid=?, owner_host=?, heartbeat_at=? WHERE id=?",
                              (os.getppid(), HOST, time.time(), "live"))  # a live process owns it
    live = Simulation(request(researcher_ids=["r-ada"], paper_ids=["p-gaia"]), community,
                      run_id="live", resume=True)
    with pytest.raises(RunConflict, match="still running"):
        live.start()
