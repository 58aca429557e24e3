"""The Candidates view on Results, through app.py (AppTest), on stored brainstorm runs built by
hand (tests/candidates_run.py): the ranked cards, novelty with its papers as links, the judge's
win matrix, bias and reasons, or the measured signals of a base model (never called a judge),
the lead graph, Send to a study, and the ranking's downloads. Also the app's default of four
candidates on the Run page."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from math import comb

import pytest

from tests.apphelp import ROOT, errors, goto, infos, module_data_dir, new_app, record_downloads, shown, texts
from tests.candidates_run import BAD_LINK, NEAR, ORDER, REASON, XSS, brainstorm_run

data_dir = module_data_dir("candidates-app-data")


def store():
    from rt_core.store import open_store

    return open_store()


@pytest.fixture
def stored():
    """Save runs built by hand; delete them (and the studies made from them) afterwards."""
    from rt_core import community

    s = store()
    community.ensure_loaded(s)
    saved: list[str] = []

    def save(run_id: str, method: str = "judge"):
        run = brainstorm_run(run_id, method)
        s.runs.save(run)
        saved.append(run_id)
        return run

    yield save
    for run_id in saved:
        s.runs.delete(run_id)


def results_for(run_id: str):
    at = new_app()
    at.session_state["results_run"] = run_id
    return goto(at, "results")


def _all_words(at) -> list[str]:
    return [*(m.value for m in at.markdown), *(c.value for c in at.caption), *(i.value for i in at.info),
            *(h.value for h in at.subheader), *(h.value for h in at.header), *(e.label for e in at.expander),
            *(m.label for m in at.metric)]


def test_cards_follow_the_tournament_with_scores_leads_and_novelty(stored):
    run = stored("cands0judge")
    at = results_for(run.id)
    assert any(h.value == "Candidates" for h in at.header)
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert [c.split(" · ")[1].rstrip("*") for c in cards] == ORDER, "best first, the tournament's order"
    assert "(c3)" not in "".join(cards)
    scores = [m.value for m in at.metric if m.label == "Bradley-Terry score"]
    assert scores == [f"{run.tournament.scores[c]:.2f}" for c in ORDER]
    captions = [shown(c.value) for c in at.caption]
    assert "interval 1.20 to 1.80 (bootstrap)" in captions
    assert "1 near-duplicate merged at similarity ≥ 0.9" in captions
    assert any(c.startswith("Leads with authors Graham Neubig") and "concepts concept 1" in c for c in captions)
    md = "\n".join(m.value for m in at.markdown)
    verdicts = [shown(v.value) for v in [*at.success, *at.warning]]
    assert sum("no close match found in 120 papers searched" in v for v in verdicts) == 7
    assert [v for v in verdicts if "close prior work" in v] == [
        f'**Problem (Q1)**: close prior work: "{NEAR.title}" ({NEAR.year})'], "c1's problem, naming its paper"
    assert f"]({NEAR.url})" in md, "a nearest paper is a link"
    assert BAD_LINK.title in shown(md) and "](javascript" not in md, "a hostile link is never a link"
    assert sum(c.startswith("Offline: the papers in this store are the literature") for c in captions) == 4
    assert any(e.label == "Merged near-duplicates (1)" for e in at.expander)
    # Model text is text: the script-tag title is escaped Markdown and literal st.text.
    assert any(XSS in shown(c) for c in cards) and XSS + " More words follow." in texts(at)
    assert not any(m.proto.allow_html for m in [*at.markdown, *at.caption])
    assert "Answer 5 of c4." in texts(at) and "Strengths: Strength of c4.\nWeaknesses: Weakness of c4." in texts(at)


def test_judge_variant_shows_win_matrix_bias_and_reasons(stored):
    run = stored("cands1judge")
    at = results_for(run.id)
    assert any(h.value == "How the judge compared them" for h in at.subheader)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Position bias"] == "55%"
    assert metrics["Judgements"] == "11 of 12 decided"
    charts = {c.proto.id for c in at.get("plotly_chart")}
    assert any("cand_wins" in c for c in charts) and any("cand_graph" in c for c in charts)
    assert not any("never compared" in c.value for c in at.caption), "every pair was judged"
    reasons = next(e for e in at.expander if e.label.startswith("The judge's reasons"))
    assert reasons.label.endswith("(6 pairs)")
    assert REASON in texts(at) and "(no reason given)" in texts(at)
    assert any(shown(c.value) == "c3 shown first · no decision" for c in at.caption)


def test_signals_variant_says_the_base_model_cannot_judge_and_shows_the_signals(stored):
    run = stored("cands2signal", method="signals")
    at = results_for(run.id)
    assert "The embedded base model cannot judge proposals" in infos(at)
    said = [w for w in _all_words(at) if "cannot judge" in w]
    assert len(said) == 1, f"explained once, not repeated in the summary line: {said}"
    words = " ".join(_all_words(at)).lower()
    assert "the judge" not in words and "judgement" not in words
    assert any(h.value == "The measured signals" for h in at.subheader)
    assert [m.value for m in at.metric if m.label == "Signal score"] == ["1.50", "0.70", "-0.10", "-0.90"]
    table = next(d for d in at.dataframe if {"review_score", "fluency"} <= set(d.value.columns))
    assert list(table.value["candidate"]) == ORDER
    assert not any("cand_wins" in c.proto.id for c in at.get("plotly_chart"))


def test_lead_graph_highlights_the_chosen_candidates_authors_and_papers(stored):
    from studio import charts

    run = stored("cands3graph")
    at = results_for(run.id)
    pick = at.selectbox(key=f"cand_graph_pick_{run.id}")
    assert pick.value == "c2"
    pick.select("c3").run()
    assert not at.exception
    chart = next(c for c in at.get("plotly_chart") if "cand_graph" in c.proto.id)
    spec = json.loads(chart.proto.spec)
    ringed = [(t["marker"]["line"]["width"], t["hovertext"]) for t in spec["data"]
              if t.get("mode") == "markers" and t.get("hovertext")]
    hot = [h for widths, hovers in ringed for w, h in zip(widths, hovers, strict=True) if w > 1]
    assert len(hot) == 3, "c3's author, its paper and the candidate itself"
    lead = run.candidates[2].lead
    who = store().corpus.researcher_names(lead.author_ids)[lead.author_ids[0]]
    title = store().corpus.paper_titles(lead.paper_ids)[lead.paper_ids[0]]
    assert sorted(h.split("<br>")[1].split(" · ")[0] for h in hot) == ["paper", "proposal", "researcher"]
    assert any(h.startswith(who) for h in hot) and any(h.startswith(title[:20]) for h in hot)
    assert charts.HIGHLIGHT_RING in json.dumps(spec)


def test_send_to_a_study_creates_a_pairwise_study_of_the_candidates(stored):
    run = stored("cands4study")
    at = results_for(run.id)
    before = {s["id"] for s in store().studies.list()}
    at.button(key=f"cand_study_{run.id}").click().run()
    assert not at.exception and not errors(at)
    made = [s for s in store().studies.list() if s["id"] not in before]
    assert len(made) == 1
    s = store()
    study = s.studies.get(made[0]["id"])
    items = s.studies.items(study["id"])
    assert study["mode"] == "pairwise" and made[0]["units"] == len(s.studies.units(study["id"])) == comb(4, 2)
    assert sorted(i.arm for i in items.values()) == sorted(
        f"{c} (tournament #{n})" for n, c in enumerate(ORDER, 1)), "c5 was merged: not an item"
    assert {i.run_id for i in items.values()} == {run.id}
    by_arm = {i.arm.split(" ")[0]: i for i in items.values()}
    assert by_arm["c4"].answers["q5"] == "Answer 5 of c4."
    assert any(f"Code **{study['code']}**" in m.value for m in at.success)
    codes = [c.value for c in at.code]
    assert any(f"?study={study['code']}" in c for c in codes) and any("organiser=" in c for c in codes)
    assert study["id"] in at.session_state["study_unlocked"]
    s.studies.delete(study["id"])


def test_downloads_hold_the_ranking(stored, monkeypatch):
    seen = record_downloads(monkeypatch)
    run = stored("cands5dl")
    at = results_for(run.id)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"Ranking (Markdown)", "Ranking (JSON)", "Ranking (CSV)"} <= labels
    rows = list(csv.DictReader(io.StringIO(seen[f"researchtown-{run.id}-ranking.csv"].decode())))
    assert [r["candidate"] for r in rows] == [*ORDER, "c5"]
    assert [r["rank"] for r in rows] == ["1", "2", "3", "4", ""]
    assert rows[-1]["merged_into"] == "c2" and rows[0]["authors"] == "Beidi Chen"
    assert rows[2]["novelty_q1"].startswith("close prior work") and NEAR.title in rows[2]["nearest_q1"]
    assert rows[0]["novelty_q5"] == "no close match found in 120 papers searched"
    doc = json.loads(seen[f"researchtown-{run.id}-candidates.json"])
    assert [c["id"] for c in doc["ranking"]] == ORDER and doc["method"] == "judge"
    assert doc["merged"] == 1 and doc["merged_candidates"][0]["merged_into"] == "c2"
    assert doc["ranking"][0]["candidate"]["proposal"]["q5"] == "Answer 5 of c2."
    assert any(j["reason"] == REASON for j in doc["judgements"])
    md = seen[f"researchtown-{run.id}-candidates.md"].decode()
    assert md.index("## #1 · c2") < md.index("## #2 · c4") < md.index("## #4 · c3")
    assert "1 near-duplicates merged at similarity >= 0.90" in md and REASON in md
    assert "ranked by pairwise judgements of scripted/judge" in md


def test_the_apps_default_is_four_candidates_when_the_operator_sets_none(tmp_path):
    """A fresh process (the default is read at import) with RT_APP_CANDIDATES unset."""
    env = {k: v for k, v in os.environ.items() if k != "RT_APP_CANDIDATES"}
    env.update(RT_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    code = ("from tests.apphelp import new_app, goto\n"
            "at = goto(new_app(), 'run')\n"
            "print('CANDIDATES', at.number_input(key='loop_candidates').value)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "CANDIDATES 4" in out.stdout


def test_empty_and_unranked_states_say_what_happened(stored):
    s = store()
    run = stored("cands6empty")
    run.candidates, run.tournament = [], None
    s.runs.save(run)
    at = results_for(run.id)
    assert "asked for 5 candidate proposals and none is finished yet" in infos(at)
    unranked = stored("cands7unranked")
    unranked.tournament = None
    s.runs.save(unranked)
    at = results_for(unranked.id)
    assert "Not ranked yet: the run ended before its candidates were compared" in infos(at)
    cards = [m.value for m in at.markdown if m.value.startswith("**Unranked")]
    assert [c.split(" · ")[1].rstrip("*") for c in cards] == ["c1", "c2", "c3", "c4"], "in writing order"
    assert not any(h.value == "How the judge compared them" for h in at.subheader)
    assert at.button(key=f"cand_study_{unranked.id}").disabled is False


def test_a_shared_read_only_view_shows_the_ranking_but_makes_no_study(stored, monkeypatch):
    monkeypatch.setenv("RT_SHARED", "1")  # a link's view is read-only on a shared server
    run = stored("cands8shared")
    at = new_app()
    at.query_params["run"] = run.id
    goto(at, "results")
    assert any("read-only" in c.value for c in at.caption)
    assert [m.value for m in at.metric if m.label == "Bradley-Terry score"][0] == "1.50"
    assert at.button(key=f"cand_study_{run.id}").disabled


def test_a_pair_never_compared_is_an_empty_cell_not_a_loss(stored):
    s = store()
    run = stored("cands9swiss")
    t = run.tournament
    t.judgements = [j for j in t.judgements if {j.first, j.second} != {"c1", "c3"}]
    t.wins["c1"].pop("c3", None)
    s.runs.save(run)
    at = results_for(run.id)
    assert any("that pair was never compared" in c.value for c in at.caption)
    chart = next(c for c in at.get("plotly_chart") if "cand_wins" in c.proto.id)
    z = json.loads(chart.proto.spec)["data"][0]["z"]
    c1, c3 = ORDER.index("c1"), ORDER.index("c3")
    assert z[c1][c3] is None and z[c3][c1] is None
    assert z[ORDER.index("c3")][ORDER.index("c2")] == 0, "compared and lost stays 0"
    assert z[ORDER.index("c2")][ORDER.index("c3")] == 2


def test_each_card_names_its_closest_earlier_idea(stored):
    """Issue 51: a candidate written again in a later run says so on its card and links to the
    earlier one; the earlier run's cards say there is none. Planted: the card's
    `show_earlier` call removed (no card named an earlier idea)."""
    stored("cands-early")  # the same texts, an earlier run (same time: the run id orders them)
    stored("cands-late")
    at = results_for("cands-late")
    said = [shown(v.value) for v in [*at.warning, *at.info] if "Closest earlier idea" in v.value]
    assert len(said) == 4, said  # one per card shown (the merged candidate has no card)
    for cid in ORDER:
        assert any(f"Closest earlier idea: cands-early:{cid} of run cands-early" in s
                   and "seen before" in s for s in said), cid
    links = [p.proto.label for p in at.get("page_link") if "Open idea cands" in shown(p.proto.label)]
    assert len(links) == 4
    first = results_for("cands-early")
    none = [shown(i.value) for i in first.info if "Closest earlier idea" in i.value]
    assert len(none) == 4 and all("none" in s for s in none)


def test_a_card_written_from_facets_names_the_two_papers_it_pairs_not_its_lead(stored):
    """A base model's candidate is a pairing of two papers' facets; its lead's authors and
    concepts played no part in it (the Chromium walk: "Leads with ... Graham Neubig" above
    LIME carried to LSST). Planted: _lead_words without the pairing (the lead came back);
    sources_named without the grounds' papers (the card named the paper by its id)."""
    from rt_core.types import Ground
    from tests.candidates_run import PAPERS

    run = stored("cands-facets", "signals")
    c2 = next(c for c in run.candidates if c.id == "c2")
    # The problem's paper is an author's own, not among the chosen: named by its title all the same.
    c2.proposal.grounds = {"q1": [Ground(PAPERS[0], "mechanism", "A method.", "nlp"),
                                  Ground("arxiv:1804.09365", "purpose", "A problem.", "astronomy")]}
    store().runs.save(run)
    at = results_for(run.id)
    captions = [shown(c.value) for c in at.caption]
    pairs = [c for c in captions if c.startswith("Pairs “")]
    assert len(pairs) == 1 and "(NLP" in pairs[0] and "with the problem of “" in pairs[0], pairs
    assert "(Astronomy" in pairs[0] and "“Gaia Data Release 2" in pairs[0], pairs
    assert sum(c.startswith("Leads with") for c in captions) == 3, "the other live candidates keep their lead"
