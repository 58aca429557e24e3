"""The Results page of a revised run, through app.py: the score trajectory per reviewer,
the per-question diff as text, and the weakness each change answers."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from rt_core.run.revision.report import stop_words
from tests.apphelp import APP, errors, goto, module_data_dir, new_app
from tests.revisehelp import REAL, revised_run

data_dir = module_data_dir("rounds-app")


def test_results_show_the_trajectory_and_the_diff_of_each_round(module_demo):
    from rt_core.store import open_store

    run = revised_run(open_store())
    assert run.status == "done" and len(run.rounds) == 3, run.errors
    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    assert "Revision rounds" in [h.value for h in at.header]
    charts = [c.proto.spec for c in at.get("plotly_chart") if "round (0 = first proposal)" in c.proto.spec]
    assert len(charts) == 1
    spec = json.loads(charts[0])
    lines = {t["name"]: t["y"] for t in spec["data"]}
    names = open_store().corpus.researcher_names([rv.reviewer_id for rv in run.rounds[0].reviews])
    # One line per reviewer (by name, a score per round) and the mean.
    assert set(lines) == {*names.values(), "mean"}
    means = [r.meta_review.score for r in run.rounds]
    assert lines["mean"] == means and means[1] == means[0] + 1 and means[2] == means[1]
    for rid, name in names.items():
        assert lines[name] == [next(rv.score for rv in r.reviews if rv.reviewer_id == rid)
                               for r in run.rounds]
    codes = [c.value for c in at.code]
    assert len(codes) == 2  # round 1 rewrote Q1, round 2 rewrote Q2: one diff each
    assert "{+IMPROVED:" in codes[0] and codes[0].startswith(f"- {run.rounds[0].proposal.q1}")
    captions = " ".join(c.value for c in at.caption)
    assert "Q1" in captions and "Q2" in captions and "vague" in captions
    assert REAL.split()[1] in captions
    stops = " ".join(i.value for i in at.info)
    assert "did not improve" in stops


def test_a_run_started_with_a_revision_round_shows_its_bar_and_its_rounds(module_demo):
    """The Run page's loop setting reaches the run: a 'Revising' progress bar from the
    plan, and rounds on the Results page (the demo model's reviews never change their
    score, so the round stops and says why)."""
    from rt_core.run.pipeline.plan import GROUPS
    from tests.apphelp import PRESET
    from tests.test_app import start_run

    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    job = start_run(at, num_reviewers=2, loop_rounds=1)
    assert job.run.status == "done", job.run.errors
    assert job.run.config.revision_rounds == 1 and job.run.rounds
    bars = [m.value.strip("*") for m in at.markdown if m.value.strip("*") in GROUPS.values()]
    assert bars[-1] == "Revising: rounds after review"
    at.button(key=f"open_results_{job.run_id}").click().run()
    assert "Revision rounds" in [h.value for h in at.header]
    stopped = [stop_words(r) for r in job.run.rounds if r.stopped]
    assert stopped and any(stopped[-1][:30] in i.value for i in at.info)


def test_a_finished_run_is_revised_from_the_results_page(module_demo, monkeypatch):
    """'Revise this run': the estimate before the button, a background job, then the
    rounds view with the new round; a shared link shows no button."""
    from rt_core.store import open_store
    from tests.apphelp import shown, texts
    from tests.revisehelp import improving

    store = open_store()
    run = revised_run(store, rounds=0, ceiling=10, reviewers=(2, 4))  # calls of its own
    assert run.status == "done" and not run.rounds, run.errors
    monkeypatch.setenv("RT_SHARED", "1")  # a stranger's link on a shared server: read-only
    shared = new_app()
    shared.query_params["run"] = run.id
    goto(shared, "results")
    assert any("read-only" in c.value for c in shared.caption)
    assert not [b for b in shared.button if b.key == f"revise_more_go_{run.id}"]
    monkeypatch.delenv("RT_SHARED")  # the personal server's user revises it

    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    assert "Revision rounds" not in [h.value for h in at.header]
    field = at.number_input(key=f"revise_more_n_{run.id}")
    assert field.value == 1
    field.set_value(4).run()  # the bound is checked by the page, which says so beside the field
    assert "More revision rounds must be from 1 to 3; 4 is out of range." in errors(at)
    assert not [b for b in at.button if b.key == f"revise_more_go_{run.id}"]
    at.number_input(key=f"revise_more_n_{run.id}").set_value(1).run()
    assert not at.error
    assert any("Revising: round 1," in shown(c.value) for c in at.caption)  # the estimate comes first
    old = module_demo.responder
    module_demo.responder = improving(10, spread=True)
    try:
        before = len(module_demo.history)
        at.button(key=f"revise_more_go_{run.id}").click().run()
        assert not at.exception, [e.value for e in at.exception]
        job = at.session_state["jobs"][run.id]
        assert job.wait(timeout=300), "the revision did not finish"
        at.run()
    finally:
        module_demo.responder = old
    assert not at.exception, [e.value for e in at.exception]
    assert job.run.status == "done", job.run.errors
    # Only round 1's calls: a review each (new reviewers), the revision and the meta-review
    # (the same authors' revision and alike scripted reviews may be cached by another test
    # of this module's store); nothing of round 0 is asked again.
    kinds = [_kind(h["messages"]) for h in module_demo.history[before:]]
    assert kinds.count("review") == len(run.reviews), kinds
    assert set(kinds) <= {"revise", "review", "meta"}, kinds
    assert "Revision rounds" in [h.value for h in at.header]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
              if "round (0 = first proposal)" in c.proto.spec]
    assert len(charts) == 1
    mean = next(t for t in charts[0]["data"] if t["name"] == "mean")
    assert mean["x"] == [0, 1] and mean["y"] == [r.meta_review.score for r in job.run.rounds]
    assert len(at.code) == 1 and "{+IMPROVED:" in at.code[0].value  # round 1's diff, as text
    assert store.runs.load(run.id).config.revision_rounds == 1
    assert any(t.startswith("meta-reviewer (round 1): done") for t in texts(at))  # how it ended
    at.number_input(key=f"revise_more_n_{run.id}").set_value(3).run()  # one round used of three
    assert "More revision rounds must be from 1 to 2; 3 is out of range." in errors(at)


def test_a_run_without_reviews_offers_no_revision(module_demo):
    from rt_core import community
    from rt_core.run.pipeline.simulation import Simulation
    from rt_core.store import open_store
    from rt_core.types import RunConfig, RunRequest

    store = open_store()
    community.ensure_loaded(store)
    preset = community.preset("nlp-astronomy")
    cfg = RunConfig(model="scripted/demo", researcher_ids=preset["researcher_ids"][:2],
                    paper_ids=preset["paper_ids"][:1], reviewer_ids=[], num_reviewers=0,
                    embedder="local/all-MiniLM-L6-v2")
    run = Simulation(RunRequest(cfg, max_retries=0), store).run_sync()
    assert run.status == "done" and not run.reviews, run.errors
    at = new_app()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    assert not [n for n in at.number_input if n.key == f"revise_more_n_{run.id}"]
    assert not [b for b in at.button if b.key == f"revise_more_go_{run.id}"]


def _kind(messages) -> str:
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    prompt = messages[-1]["content"]
    if "The reviews are in" in system:
        return "revise"
    if "Summarise the reviews" in prompt:
        return "meta"
    return "review" if "Score:" in prompt and "Strengths:" in prompt else "other"


def test_a_revision_in_a_shared_demo_counts_its_tokens_against_the_visitors_allowance(module_demo, monkeypatch):
    """In a shared demo each visitor has a daily allowance (rt_core.allowance). A revision of a
    finished run spends new tokens under the same run id: they are counted in the store as
    its calls are made, once, beside what the visitor had spent before."""
    import datetime as dt

    from rt_core import allowance
    from rt_core.deployment import token_hash
    from rt_core.store import open_store

    store = open_store()
    run = revised_run(store, rounds=0, ceiling=10, reviewers=(3, 4))
    assert run.status == "done", run.errors
    monkeypatch.setenv("RT_DEMO", "1")
    monkeypatch.setenv("RT_DEMO_MODEL", "scripted/demo")
    monkeypatch.setenv("RT_DEMO_MAX_TOKENS", "1000000")
    token = "demo-visitor-owner-token-01"  # a shared demo: the run is this browser's own
    store.db.conn.execute("UPDATE runs SET owner_hash=? WHERE id=?", (token_hash(token), run.id))
    today = allowance.day(dt.datetime.now(dt.UTC))
    store.demo_spending.add(today, token_hash(token), 100)  # this visitor's earlier run
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["_owner_token"] = token  # what this browser's cookie holds
    at.run()
    at.session_state["results_run"] = run.id
    goto(at, "results")
    at.button(key=f"revise_more_go_{run.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state["jobs"][run.id]
    assert job.wait(timeout=300), "the revision did not finish"
    at.run()
    at.run()  # a later rerun must not count it again
    spent = job.run.usage.prompt_tokens + job.run.usage.completion_tokens
    assert job.run.status == "done" and spent > 0, job.run.errors
    assert store.demo_spending.spent(today, token_hash(token))[0] == 100 + spent
