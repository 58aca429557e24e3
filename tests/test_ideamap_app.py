"""The map of ideas on Results and History, through app.py (AppTest): a stored brainstorm run of
four candidates with their nearest papers from the starter store (built by hand, as the loop
would fill it), shown by meaning with the Q1 in the hover escaped, opened by its picker; a
run of one idea and a run with none say so. Also each reviewer's reason on their card.

`mapped_run` is shared with the screenshot test (tests/test_ideamap_browser.py)."""
from __future__ import annotations

import json

import pytest

from rt_core.run.novelty import THRESHOLD, verdict
from rt_core.types import FacetNovelty, NearPaper, Novelty, Proposal, Review, Run, RunConfig
from tests.apphelp import goto, infos, module_data_dir, new_app
from tests.candidates_run import XSS, brainstorm_run

data_dir = module_data_dir("ideamap-app-data")
LOUD = "<b>LOUD</b>"  # a tag plotly would draw (it leaves a <script> as text by itself)
REASON = "Covers Astronomy, drawn on by the proposal; their closest paper matches the proposal at 0.61."
# Each candidate: its Q1, its method, and its nearest stored papers with their similarity.
IDEAS = {
    "c1": ("How can language agents triage the nightly alert stream of the LSST survey?",
           "Agents read each alert's light curve summary and rank follow-up targets.",
           [("arxiv:0805.2366", 0.62), ("arxiv:2307.13854", 0.41)]),
    "c2": ("How can a language model answer astronomers' questions from the Gaia catalogue's documentation?",
           "Retrieval over the Gaia data release papers, answers citing catalogue columns.",
           [("arxiv:2208.00211", 0.81), ("arxiv:2303.18223", 0.44)]),
    "c3": (XSS + " " + LOUD + " How can sparse attention make classifying millions of stellar spectra cheap?",
           "Contextual sparsity and sampling at inference time for a spectra classifier.",
           [("arxiv:2410.16179", 0.66), ("arxiv:2205.14135", 0.52)]),
    "c4": ("Can a simulated research community propose new studies of the Milky Way disk?",
           "Agents modelled on galactic dynamicists write and review proposals.",
           [("arxiv:2412.17767", 0.38), ("arxiv:2406.03541", 0.33)]),
}


def mapped_run(run_id: str, store) -> Run:
    """Four candidates (no merged one) of the case study's neighbourhood, each with its
    nearest starter-store papers, and one review whose reviewer's reason is stored."""
    run = brainstorm_run(run_id)
    run.candidates = [c for c in run.candidates if not c.merged_into]
    run.tournament.merged = 0
    leads = {"c2": (["r-ivezic-zeljko"], ["astronomy"]), "c3": (["r-chen-beidi"], ["nlp", "systems"])}
    for c in run.candidates:
        if c.id in leads:  # three field mixes on the map, not one
            c.lead.author_ids, c.lead.fields = leads[c.id]
        q1, q5, near = IDEAS[c.id]
        c.proposal = Proposal(q1, f"Why {c.id} matters.", f"Why {c.id} is hard.", f"Gap of {c.id}.", q5)
        papers = [NearPaper(title=store.corpus.get_paper(pid).title, similarity=sim, source="store",
                            paper_id=pid, url=f"https://arxiv.org/abs/{pid.split(':')[1]}") for pid, sim in near]
        facet = FacetNovelty("q1", papers, verdict(papers, 120, THRESHOLD), searched=120)
        c.novelty = Novelty([facet], sources=["store"], threshold=THRESHOLD)
    run.proposal = run.candidates[1].proposal
    run.reviews = [Review("r-vallenari-antonella", "Clear data.", "Vague plan.", 7)]
    run.reviewer_reasons = {"r-vallenari-antonella": REASON}
    return run


def store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture(scope="module")
def runs():
    from rt_core import community

    s = store()
    community.ensure_loaded(s)
    four = mapped_run("imap4", s)
    one = Run(id="imap1", config=RunConfig(model="scripted/demo"), status="done",
              proposal=Proposal(q1="How do stars form?", q5="We watch them."))
    none = Run(id="imap0", config=RunConfig(model="scripted/demo", candidates=4), status="failed")
    for r in (four, one, none):
        s.runs.save(r)
    yield {"four": four, "one": one, "none": none}
    for r in (four, one, none):
        s.runs.delete(r.id)


def results_with_map(run_id: str):
    at = new_app()
    at.session_state["results_run"] = run_id
    goto(at, "results")
    at.toggle(key=f"ideamap_on_{run_id}").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def map_spec(at, key: str) -> dict:
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id]
    assert len(charts) == 1, "one map"
    return charts[0]


def test_four_candidates_and_their_nearest_papers_on_one_map(runs):
    run = runs["four"]
    at = results_with_map(run.id)
    assert any(h.value == "Map of ideas" for h in at.header)
    traces = map_spec(at, f"ideamap_{run.id}")["data"]
    ideas = [(cd, t) for t in traces if t.get("customdata") and t["marker"].get("symbol") != "diamond"
             for cd in t["customdata"]]
    assert sorted(cd for cd, _ in ideas) == [f"{run.id}/c{i}" for i in range(1, 5)]
    priors = next(t for t in traces if t.get("name") == "nearest prior work")
    assert len(priors["customdata"]) == 8  # two papers per candidate, none shared
    hovers = [h for t in traces for h in t.get("hovertext") or []]
    assert not any("<script>" in h for h in hovers)
    assert any("&lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;LOUD&lt;/b&gt;" in h for h in hovers), "as text"
    assert not any("<b>LOUD" in h for h in hovers)
    assert any("Gaia Data Release 3" in h for h in hovers)
    sizes = {cd: t["marker"]["size"][t["customdata"].index(cd)] for cd, t in ideas}
    # c4's nearest paper is the least similar (0.38), c2's the most (0.81).
    assert sizes[f"{run.id}/c4"] > sizes[f"{run.id}/c1"] > sizes[f"{run.id}/c2"]
    names = {t.get("name") for t in traces}
    assert "NLP + Astronomy" in names or any(n and "+" in n for n in names), names
    assert any(b.label == "Download HTML" for b in at.get("download_button"))
    # Opening a point (what a click does, through the picker under the map).
    at.selectbox(key=f"ideamap_pick_{run.id}").set_value(f"{run.id}/c3").run()
    shown = [t.value for t in at.text]
    assert IDEAS["c3"][0] in shown and "Gap of c3." in shown


def test_a_run_of_one_idea_says_so_and_a_run_without_any_explains(runs):
    at = results_with_map(runs["one"].id)
    assert "a map needs two points" in infos(at)
    assert "How do stars form?" in [t.value for t in at.text]
    assert not [c for c in at.get("plotly_chart") if "ideamap_" in c.proto.id]
    at = results_with_map(runs["none"].id)
    assert "Nothing to map: no candidate or proposal was written" in infos(at)


def test_each_reviewer_card_says_why_they_were_chosen(runs):
    at = new_app()
    at.session_state["results_run"] = runs["four"].id
    goto(at, "results")
    assert any(c.value == "Why this reviewer: " + _md(REASON) for c in at.caption)


def test_history_maps_every_listed_run_on_request(runs):
    at = goto(new_app(), "history")
    assert not [c for c in at.get("plotly_chart") if "ideamap_" in c.proto.id]
    at.toggle(key="ideamap_history_on").set_value(True).run()
    assert not at.exception
    traces = map_spec(at, "ideamap_history")["data"]
    ids = {cd for t in traces for cd in t.get("customdata") or []}
    assert {f"{runs['four'].id}/c1", f"{runs['one'].id}/proposal"} <= ids
    at.selectbox(key="ideamap_pick_history").set_value(f"{runs['one'].id}/proposal").run()
    assert "We watch them." in [t.value for t in at.text]
    at.button(key=f"ideamap_go_{runs['one'].id}/proposal").click().run()
    assert any(t.value == "Results" for t in at.title)  # opened where its reviews and scores are


def _md(text: str) -> str:
    from studio.render import md_escape

    return md_escape(text)
