"""The Streamlit app through its entry file (AppTest): pages, empty states, the
neighbourhood, a run with the scripted model, results, history, uploads and safety."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from rt_core.types import Paper
from tests.apphelp import (
    APP,
    PRESET,
    DataDir,
    errors,
    goto,
    infos,
    module_data_dir,
    new_app,
    record_downloads,
    shown,
    texts,
)

# A 2025 replay target outside the preset: its shipped five-question summary is the
# reference, and the authors' papers up to 2024 are all before it (nothing is masked away).
REFERENCE = "arxiv:2412.17767"
XSS = "<script>alert(1)</script>"
SCRIPTED_PRESET = "Scripted demo model (tests and demos, no real model)"


data_dir = module_data_dir("app-data")


def delete_rows(s, table: str, ids) -> None:
    """Remove corpus rows a test added ('papers' or 'researchers'): the search index row
    first (it is keyed by rowid), then the row; fields, citations and authorship cascade."""
    assert table in ("papers", "researchers")
    with s.transaction() as db:
        for row_id in ids:
            row = db.execute(f"SELECT rowid FROM {table} WHERE id=?", (row_id,)).fetchone()
            if row is not None:
                db.execute(f"DELETE FROM {table}_fts WHERE rowid=?", (row[0],))
                db.execute(f"DELETE FROM {table} WHERE id=?", (row_id,))


def _ids(s, table: str) -> set[str]:
    return {r[0] for r in s.db.conn.execute(f"SELECT id FROM {table}")}


@pytest.fixture(autouse=True)
def leaves_no_rows():
    """The module's tests share one store: whatever papers, researchers and runs a test
    adds (imports, uploads, runs, copies) are deleted when it ends, pass or fail. The
    starter community is loaded first, so it is never mistaken for a test's rows."""
    from rt_core import community

    s = store()
    community.ensure_loaded(s)
    before = {t: _ids(s, t) for t in ("papers", "researchers", "runs")}
    yield
    added = {t: _ids(s, t) - ids for t, ids in before.items()}
    for run_id in added["runs"]:
        s.runs.delete(run_id)
    delete_rows(s, "researchers", added["researchers"])
    delete_rows(s, "papers", added["papers"])


@pytest.fixture
def fresh_data_dir(tmp_path):
    d = DataDir(tmp_path / "fresh")
    yield
    d.restore()


@pytest.fixture(scope="module")
def model(module_demo):
    return module_demo


def store():
    from rt_core.store import open_store

    return open_store()


def start_run(at: AppTest, **settings) -> object:
    """Start a run from the Run page with the scripted model; return the finished job."""
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED_PRESET).run()
    for k, v in settings.items():
        at.session_state[k] = v
    at.run()
    at.button(key="run_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300), "the run did not finish"
    at.run()
    return job


# -- a fresh store: every page renders, with helpful empty states --------------------------

def test_every_page_renders_on_a_fresh_store_with_empty_states(fresh_data_dir):
    at = new_app()
    assert "neighbourhood is empty" in infos(at)
    assert at.button(key=f"preset_{PRESET}")  # the case studies are one click away
    goto(at, "run")
    assert "neighbourhood is empty" in infos(at)
    assert "tiny offline demo model" in infos(at)  # the default model says what it is
    goto(at, "results")
    assert "No run open yet" in infos(at)
    goto(at, "history")
    assert "No runs stored yet" in infos(at)
    goto(at, "settings")
    assert any("studio.sqlite3" in c.value for c in at.code)
    assert any("2412.17767" in m.value for m in at.markdown)
    goto(at, "neighbourhood")


def test_search_and_add_to_the_neighbourhood():
    at = new_app()
    at.text_input(key="search_text").input("Milky Way").run()
    ids = [p.id for p in store().corpus.search_papers("Milky Way")]
    assert ids, "the starter community has a Milky Way paper"
    at.button(key=f"sp_{ids[0]}").click().run()
    assert at.session_state["hood_p"] == [ids[0]]
    rid = store().corpus.search_researchers("Neubig")[0].id
    at.text_input(key="search_text").input("Neubig").run()
    at.button(key=f"sr_{rid}").click().run()
    assert at.session_state["hood_r"] == [rid]
    assert at.button(key=f"hr_{rid}").label == "✕"
    assert at.button(key=f"sr_{rid}").label == "Remove"
    at.button(key=f"hr_{rid}").click().run()
    assert at.session_state["hood_r"] == []


def test_search_without_matches_says_what_to_do():
    at = new_app()
    at.text_input(key="search_text").input("zzzqqqxxy").run()
    assert infos(at).count("Nothing in the store matches these words or their meaning") == 2


def test_search_finds_people_by_their_work_and_says_when_by_meaning():
    """'brain' is in no researcher's name: a neuroscientist is found through their papers;
    a paper with none of the words of 'social inequality' is marked as found by meaning."""
    at = new_app()
    at.text_input(key="search_text").input("brain").run()
    captions = [c.value for c in at.caption]
    assert any("Neuroscience" in c and "works on this" in c for c in captions), captions
    at.text_input(key="search_text").input("social inequality").run()
    assert any("found by meaning, not by its words" in c.value for c in at.caption)


def test_preset_loads_the_case_study_and_reads_out_interdisciplinarity():
    from rt_core import community

    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    pr = community.preset(PRESET)
    assert at.session_state["hood_r"] == pr["researcher_ids"]
    assert at.session_state["hood_p"] == pr["paper_ids"]
    assert any("Loaded case study" in s.value for s in at.success)
    from rt_core.graph import interdisciplinarity

    s = store()
    fields = [f for x in [*s.corpus.get_researchers(pr["researcher_ids"]), *s.corpus.get_papers(pr["paper_ids"])]
              for f in x.fields]
    info = interdisciplinarity(fields, community.field_domains(s))
    assert info["n_domains"] == 2 and not info["warning"]
    assert [m.value for m in at.metric][:2] == [str(info["n_fields"]), "2"]
    assert at.get("plotly_chart"), "the community graph is drawn"


def test_four_distant_fields_warn():
    s = store()
    pick = {}
    for r in s.corpus.search_researchers(limit=200):
        for f in r.fields:
            pick.setdefault(f, r.id)
    at = new_app()
    at.session_state["hood_r"] = list(pick.values())
    at.run()
    assert any("four or more distant fields" in w.value for w in at.warning)


def test_sessions_keep_their_own_selection():
    a, b = new_app(), new_app()
    a.button(key=f"preset_{PRESET}").click().run()
    b.run()
    assert a.session_state["hood_r"] and not b.session_state["hood_r"]


def test_empty_selection_gives_a_clear_error(model):
    at = new_app()
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED_PRESET).run()
    start = at.button(key="run_start")
    assert start.disabled and "neighbourhood is empty" in start.help
    assert any("Start is off: the neighbourhood is empty" in c.value for c in at.caption)
    assert "Your neighbourhood is empty" in infos(at)
    assert not at.session_state["jobs"]


def test_a_start_that_fails_does_not_show_the_last_runs_done_panel(model, monkeypatch):
    """The previous run's "Done. ..." stayed under the new error, reading as its outcome."""
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    job = start_run(at, num_reviewers=0)
    store().runs.delete(job.run_id)
    assert any(shown(s.value).startswith("Done.") for s in at.success)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at.session_state["model"] = "openai/gpt-4o-mini"
    at.session_state["base_url"] = ""
    at.run()
    at.button(key="run_start").click().run()
    assert "OPENAI_API_KEY is not set" in errors(at)
    assert not any(shown(s.value).startswith("Done.") for s in at.success)


def run_page(mode: str) -> AppTest:
    """The Run page with one researcher, the scripted model and the given mode."""
    at = new_app()
    at.session_state["hood_r"] = ["r-neubig-graham"]
    goto(at, "run")
    at.selectbox(key="provider").select(SCRIPTED_PRESET).run()
    at.session_state["mode"] = mode
    at.run()
    return at


def test_data_mode_without_papers_is_refused_before_any_call(model):
    at = run_page("data")
    at.button(key="run_start").click().run()
    assert "mode 'data' needs at least one paper" in errors(at)


# -- the golden path ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def finished(model):
    """One full run with the scripted model: preset, reference paper, 2 reviewers."""
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    job = start_run(at, reference_id=REFERENCE, num_reviewers=2)
    yield at, job
    store().runs.delete(job.run_id)


def test_run_shows_progress_and_finishes(finished):
    at, job = finished
    assert job.run.status == "done", job.run.errors
    assert job.error is None and not job.unexpected
    assert any(shown(s.value).startswith("Done.") for s in at.success)
    assert at.button(key=f"open_results_{job.run_id}")
    labels = [m.label for m in at.metric]
    assert {"Model calls", "Tokens", "Cost"} <= set(labels)
    assert int(at.metric[labels.index("Model calls")].value) == job.run.usage.calls > 0
    listed = "\n".join(texts(at))
    assert "✅" in listed  # each agent's status and partial output
    # One bar per group of the run's own plan, in the plan's order.
    from rt_core.run.pipeline.plan import GROUPS, progress_groups

    bars = [m.value.strip("*") for m in at.markdown if m.value.strip("*") in GROUPS.values()]
    assert bars == [title for _, title in progress_groups(job.run.config)]
    assert len(bars) == 4  # read, write, review and (a reference was given) evaluate


def test_results_show_five_questions_reviews_and_similarity(finished):
    at, job = finished
    at.button(key=f"open_results_{job.run_id}").click().run()
    assert not at.exception
    run = job.run
    md = [m.value for m in at.markdown]
    for i in range(1, 6):
        assert any(v.startswith(f"**Q{i}.") for v in md), f"question {i} missing"
    shown = texts(at)
    for k in ("q1", "q2", "q3", "q4", "q5"):
        assert getattr(run.proposal, k) in shown
    exp = [e.label for e in at.expander]
    assert sum(label.startswith("Draft by") for label in exp) == len(run.proposal.drafts) > 0
    assert sum(label.startswith("Review by") for label in exp) == len(run.reviews) == 2
    assert any(h.value == "Meta-review" for h in at.subheader)
    assert run.similarity is not None
    sim = [m for m in at.metric if m.label == "Mean similarity over Q1-Q5"]
    assert sim and sim[0].value == f"{run.similarity.mean:.3f}"
    assert any("evaluator" in c.value and "summary" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) >= 3  # scores, similarity, graph


def test_downloads_contain_the_proposal(finished, monkeypatch):
    _, job = finished
    seen = record_downloads(monkeypatch)
    at = new_app()
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    buttons = {b.label for b in at.get("download_button")}
    assert buttons == {"Download Markdown", "Download JSON", "Download reviews (CSV)"}
    md = seen[f"researchtown-{job.run_id}.md"].decode()
    js = seen[f"researchtown-{job.run_id}.json"].decode()
    assert job.run.proposal.q1 in md and job.run.proposal.q5 in md
    assert job.run.proposal.q1 in js
    names = store().corpus.researcher_names(r.reviewer_id for r in job.run.reviews)
    assert all(f"Review by {name} (score" in md for name in names.values())
    csv = seen[f"researchtown-{job.run_id}-reviews.csv"].decode()
    assert all(name in csv for name in names.values())


def test_reopen_from_history_makes_no_model_call(finished, model):
    _, job = finished
    calls = len(model.history)
    at = new_app()  # a new browser session: the run comes from the store
    goto(at, "history")
    assert job.run_id in list(at.dataframe[0].value["id"])
    at.selectbox(key="hist_pick").set_value(job.run_id).run()
    at.button(key="hist_open").click().run()
    assert not at.exception
    assert job.run.proposal.q1 in texts(at)
    assert len(model.history) == calls


def test_history_filter_compare_and_delete(finished, model):
    _, job = finished
    s = store()
    other = s.runs.load(job.run_id)
    other.id = "copy0000test"
    other.created_at = "2000-01-01T00:00:00+00:00"
    other.version = 0  # a new row (saving a loaded run under another id would be refused)
    s.runs.save(other)
    at = new_app()
    goto(at, "history")
    at.text_input(key="hist_text").input("no-such-run-title").run()
    assert "No run matches the filter" in infos(at)
    at.text_input(key="hist_text").input("").run()
    at.selectbox(key="hist_cmp_a").set_value(job.run_id).run()
    at.selectbox(key="hist_cmp_b").set_value("copy0000test").run()
    assert texts(at).count(job.run.proposal.q2) >= 2  # both columns
    at.selectbox(key="hist_pick").set_value("copy0000test").run()
    at.button(key="hist_delete").click().run()
    assert any("permanently" in w.value for w in at.warning)
    at.button(key="hist_delete_no").click().run()
    assert "copy0000test" in [r["id"] for r in s.runs.list()]
    at.selectbox(key="hist_pick").set_value("copy0000test").run()
    at.button(key="hist_delete").click().run()
    at.button(key="hist_delete_yes").click().run()
    assert "copy0000test" not in [r["id"] for r in s.runs.list()]
    assert any("Deleted run" in x.value for x in at.success)


def test_similarity_after_the_fact(finished, model):
    from rt_core.run.pipeline import jobs
    from rt_core.types import RunConfig, RunRequest

    _, first = finished
    job = jobs.start(RunRequest(RunConfig(researcher_ids=first.run.config.researcher_ids[:2],
                                          paper_ids=first.run.config.paper_ids[:3],
                                          num_reviewers=0, model="scripted/demo")), store())
    assert job.wait(timeout=300) and job.run.similarity is None
    at = new_app()
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    assert "No reviews" in infos(at)
    at.selectbox(key=f"sim_ref_{job.run_id}").set_value(REFERENCE).run()
    at.button(key=f"sim_go_{job.run_id}").click().run()
    assert not at.exception and not at.error, errors(at)
    stored = store().runs.load(job.run_id)  # the run keeps no reference; the comparison is beside it
    assert stored.similarity is None and stored.config.reference_paper_id == ""
    assert [c.paper_id for c in store().comparisons.for_run(job.run_id)] == [REFERENCE]
    assert any(m.label == "Mean similarity over Q1-Q5" for m in at.metric)


def test_llm_judge_scores_the_proposal_against_its_reference(finished, model):
    _, job = finished
    at = new_app()
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    assert at.button(key=f"judge_go_{job.run_id}").disabled  # the tiny local model cannot judge
    at.session_state["model"] = "scripted/demo"
    at.run()
    calls = len(model.history)
    at.button(key=f"judge_go_{job.run_id}").click().run()
    assert not at.exception and not at.error, errors(at)
    assert "Rate from 1 to 10" in model.history[calls]["messages"][-1]["content"]
    judged = store().runs.load(job.run_id).judge
    assert judged["topic"] == 7 and judged["overall"] == 6
    assert any(m.label.startswith("Novelty") for m in at.metric)


def test_reviews_compared_with_a_real_review(finished):
    _, job = finished
    at = new_app()
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    at.text_area(key=f"real_review_{job.run_id}").input("Strengths:\n- clear question\n"
                                                        "Weaknesses:\n- vague data plan\nScore: 4").run()
    at.button(key=f"review_sim_go_{job.run_id}").click().run()
    assert not at.exception and not at.error, errors(at)
    rs = store().runs.load(job.run_id).review_similarity
    assert rs["delta_s"] == abs(job.run.meta_review.score - 4)
    assert 0 < rs["weaknesses"] <= 1  # "The data plan is vague" is among the generated points
    assert any(m.label == "Weaknesses recall" for m in at.metric)


def test_a_real_review_without_parts_is_a_clear_error(finished):
    _, job = finished
    at = new_app()
    at.session_state["results_run"] = job.run_id
    goto(at, "results")
    at.text_area(key=f"real_review_{job.run_id}").input("I liked it.").run()
    at.button(key=f"review_sim_go_{job.run_id}").click().run()
    assert "no Strengths or Weaknesses part" in errors(at)


# -- imports ------------------------------------------------------------------------------

def test_malformed_upload_names_the_line_and_imports_the_rest():
    at = new_app()
    data = (b"title,year,abstract\n"
            b"Tidal streams as probes of dark matter,2021,We model stellar streams.\n"
            b",2020,A row without a title.\n")
    at.file_uploader(key="imp_upload").set_value(("papers.csv", data, "text/csv")).run()
    at.button(key="imp_upload_go").click().run()
    assert not at.exception
    assert "line 3" in errors(at) and "title" in errors(at)
    assert any("Imported 1 papers" in s.value for s in at.success)
    found = store().corpus.search_papers("Tidal streams dark matter")
    assert found and found[0].id in at.session_state["hood_p"]


def test_unreadable_upload_shows_the_message_and_hint():
    at = new_app()
    at.file_uploader(key="imp_upload").set_value(("notes.csv", b"\xff\xfe\x00bad", "text/csv")).run()
    at.button(key="imp_upload_go").click().run()
    assert "not UTF-8" in errors(at)
    assert "UTF-8" in infos(at)


def test_pasted_abstract_becomes_a_paper_in_the_neighbourhood():
    at = new_app()
    at.text_input(key="imp_paste_title").input("Language models read galaxy spectra").run()
    at.text_area(key="imp_paste_abstract").input("We prompt a language model with spectra.").run()
    at.button(key="imp_paste_go").click().run()
    assert not at.exception and not at.error, errors(at)
    assert len(at.session_state["hood_p"]) == 1
    at.text_input(key="imp_paste_title").input("No abstract").run()
    at.text_area(key="imp_paste_abstract").input("").run()
    at.button(key="imp_paste_go").click().run()
    assert "the abstract is empty" in errors(at)


def test_arxiv_import_over_http_adds_the_paper_and_names_unknown_ids(monkeypatch, fake_server):
    from tests.test_sources_arxiv import ATTENTION, feed

    monkeypatch.setenv("RT_ARXIV_URL", fake_server.url)
    fake_server.route("/api/query", (200, {}, feed(ATTENTION)))
    at = new_app()
    at.text_area(key="imp_arxiv_ids").input("1706.03762\n2401.99999").run()
    at.button(key="imp_arxiv_fetch").click().run()
    assert "arXiv has no paper with id 2401" in errors(at)  # the unknown id is named ...
    assert "arxiv:1706.03762" in at.session_state["hood_p"]  # ... and the known one imported
    assert store().corpus.get_paper("arxiv:1706.03762").abstract_source == "arxiv"
    assert fake_server.hits("/api/query")[0].param("id_list") == "1706.03762,2401.99999"


def test_ambiguous_author_offers_candidates(monkeypatch, fake_server):
    from tests.test_sources_s2 import GREEN_AI, S2_PAPER, SMITH_BIO, SMITH_NLP, G, search_body

    monkeypatch.setenv("RT_S2_URL", fake_server.url + G)
    fake_server.json(G + "/author/search", search_body(SMITH_NLP, SMITH_BIO))
    fake_server.json(G + "/author/1741101", {"authorId": "1741101", "name": "Noah A. Smith",
                                             "affiliations": ["University of Washington"],
                                             "paperCount": 402})
    fake_server.json(G + "/author/1741101/papers", {"offset": 0, "data": [S2_PAPER, GREEN_AI]})
    at = new_app()
    at.text_input(key="imp_s2_name").input("Noah Smith").run()
    at.button(key="imp_s2_find").click().run()
    radio = at.radio(key="imp_s2_pick")
    assert len(radio.options) == 2  # never picked arbitrarily
    radio.set_value(0).run()
    at.button(key="imp_s2_import").click().run()
    assert not at.exception
    assert "s2:1741101" in at.session_state["hood_r"]
    assert set(store().corpus.get_researcher("s2:1741101").publication_ids) == {"arxiv:1706.03762",
                                                                         "arxiv:1907.10597"}


# -- share links and keys ------------------------------------------------------------------

def test_share_link_round_trips_without_the_key():
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    at.session_state["model"] = "gpt-4o-mini"
    at.session_state["api_key"] = "sk-never-share-me"
    at.session_state["mode"] = "data"
    at.run()
    at.toggle(key="share_link").set_value(True).run()
    url = at.code[0].value
    assert "sk-never" not in url and "gpt-4o-mini" in url and "mode=data" in url

    from urllib.parse import parse_qs, urlsplit

    params = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    b = AppTest.from_file(APP, default_timeout=60)
    b.query_params.update(params)
    b.run()
    assert not b.exception
    assert b.session_state["hood_r"] == at.session_state["hood_r"]
    assert b.session_state["hood_p"] == at.session_state["hood_p"]
    assert b.session_state["model"] == "gpt-4o-mini" and b.session_state["mode"] == "data"
    assert b.session_state["api_key"] == ""
    assert any("shared link" in s.value for s in b.success)


def test_env_key_is_used_but_never_shown(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret")
    at = new_app()
    goto(at, "run")
    at.selectbox(key="provider").select("OpenAI").run()
    assert at.text_input(key="api_key").value == ""
    assert any("OPENAI_API_KEY" in c.value for c in at.caption)
    everything = [e.value for e in [*at.markdown, *at.caption, *at.text, *at.code]]
    assert not any("sk-env-secret" in str(v) for v in everything)


def test_a_real_provider_with_a_typed_key_runs_and_the_key_is_never_stored(openai_server):
    from rt_core.models.scripted import demo_responder

    openai_server.responder = lambda messages: demo_responder(messages, {})
    key = "sk-typed-in-the-page-42"
    at = new_app()
    at.button(key=f"preset_{PRESET}").click().run()
    goto(at, "run")
    at.selectbox(key="provider").select("Any OpenAI-compatible URL").run()
    at.text_input(key="model").input("openai/served-model").run()
    at.text_input(key="base_url").input(openai_server.base_url).run()
    at.text_input(key="api_key").input(key).run()
    at.session_state["num_reviewers"] = 1
    at.run()
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error, errors(at)
    job = at.session_state["jobs"][at.session_state["current_run"]]
    assert job.wait(timeout=300) and job.run.status == "done", job.run.errors
    sent = openai_server.chat_requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {key}" for r in sent)
    assert {r["body"]["model"] for r in sent} == {"served-model"}
    s = store()
    s.close()
    for path in s.path.parent.glob(s.path.name + "*"):
        assert key.encode() not in path.read_bytes()
    from rt_core.export.run import run_json, run_markdown

    assert key not in run_json(job.run) and key not in run_markdown(job.run)


# -- safety ------------------------------------------------------------------------------

def test_hostile_title_renders_literally():
    hostile = Paper(id="xss:1", title=XSS, abstract="A paper whose title is a script tag.",
                    year=2024, fields=["nlp"])
    md_title = "**bold** [click](https://example.com) ![img](https://example.com/x.png) :red[x]"
    store().corpus.upsert_papers([hostile, Paper(id="xss:2", title=md_title, abstract="markdown")])
    at = new_app()
    at.text_input(key="search_text").input("script alert").run()
    assert XSS in texts(at), "the title is shown as text, exactly"
    at.button(key="sp_xss:1").click().run()
    at.text_input(key="search_text").input("bold click").run()
    assert md_title in texts(at)
    for m in [*at.markdown, *at.caption]:
        assert "<script>" not in m.value
        assert not m.proto.allow_html, "no unsafe HTML anywhere"
    assert "📄 " + XSS in texts(at)  # also in the neighbourhood list, as text


def test_missing_parts_and_stage_errors_are_flagged(finished):
    from rt_core.types import StageError

    _, job = finished
    s = store()
    run = s.runs.load(job.run_id)
    run.id = "flawed00test"
    run.version = 0  # a new row
    run.proposal.q3 = ""
    run.proposal.missing = ["q3"]
    run.errors = [StageError("review", "r-neubig-graham", "AuthError", "the key was refused",
                             "Check the API key for this provider.")]
    s.runs.save(run)
    at = new_app()
    at.session_state["results_run"] = "flawed00test"
    goto(at, "results")
    assert any("no answer to question 3" in w.value for w in at.warning)
    assert any(e.label.startswith("Problems during the run (1)") for e in at.expander)
    assert "the key was refused" in errors(at)
    s.runs.delete("flawed00test")


def test_cancel_keeps_finished_work(model):
    import threading

    from rt_core.models.scripted import demo_responder

    gate, entered = threading.Event(), threading.Event()

    def blocking(messages, params):
        entered.set()
        gate.wait(timeout=120)
        return demo_responder(messages, params)

    at = run_page("self")
    model.responder = blocking
    try:
        at.button(key="run_start").click().run()
        job = at.session_state["jobs"][at.session_state["current_run"]]
        assert entered.wait(timeout=120), "the model was never called"
        at.run()
        assert at.button(key="run_start").disabled  # one run at a time per session
        at.button(key=f"cancel_{job.run_id}").click().run()
        assert job.simulation.cancel.is_set()
    finally:
        gate.set()
        model.responder = demo_responder
    assert job.wait(timeout=120)
    at.run()
    assert job.run.status == "cancelled"
    assert store().runs.load(job.run_id).status == "cancelled"
