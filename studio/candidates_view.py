"""The Candidates view on Results: a brainstorm's ranked candidates as cards, how they were
compared (the judge's win matrix, position bias and reasons, or the measured signals when
the run's base model cannot judge), what each leads with on the community graph, a human
study to check the ranking, and the ranking's downloads.

The order and the words for what ranked them come from rt_core.export.candidates, so the
page and the downloads never disagree. Every title, answer, reason and paper title came
from a model or a paper source: shown with render.show_text or escaped, never as HTML.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import RTError
from rt_core.export import candidates as ec
from rt_core.export.run import Names
from rt_core.fiveq import QUESTIONS
from rt_core.graph import PROPOSAL_NODE, run_graph
from rt_core.ideas import closest as closest_idea
from rt_core.run.facets import rubric
from rt_core.study.candidates import candidate_items, create_from_candidates
from rt_core.types import Run

from . import charts, novelty_view, render, resources, state, study

SIGNAL_WORDS = ("The embedded base model cannot judge proposals, so no judge compared these "
                "candidates. The ranking comes from signals measured on each one (the reviewers' "
                "scores, novelty against the nearest papers, coverage of the chosen fields and the "
                "model's own fluency), combined into one score.")


SCORE_HELP = {"Bradley-Terry score": "The candidate's strength on a log scale fitted to the judge's "
                                     "decisions: only differences between candidates mean something.",
              "Signal score": "The measured signals combined into one number; higher is better."}


def show(run: Run, store, read_only: bool = False) -> None:
    """The whole view; Results calls it when the run asked for, or has, candidates."""
    st.header("Candidates")
    if not run.candidates:
        st.info(f"This run asked for {run.config.candidates} candidate proposals and none is "
                "finished yet. They appear here, ranked, once written; a stopped run can be "
                "resumed above.", icon=":material/lightbulb:")
        return
    rows = ec.ranked(run)
    names = ec.names_for(store, run)
    _summary(run, rows)
    fnames = resources.field_names(store)
    label = "Signal score" if run.tournament and run.tournament.method == "signals" else "Bradley-Terry score"
    earlier = novelty_view.earlier_ideas_of_candidates(store, run)
    for r in rows:
        _card(r, names, fnames, label, earlier.get(r.candidate.id))
    _merged(run)
    _comparisons(run, rows)
    _lead_graph(run, store, rows, names, fnames)
    _send_to_study(run, store, read_only)
    _downloads(run, names)


# -- the ranking ------------------------------------------------------------------------------

def _summary(run: Run, rows: list[ec.Ranked]) -> None:
    t = run.tournament
    best = " The best one is the run's proposal, shown below." if t is not None else ""
    # Measured signals are explained once, in the box below, not again in this line.
    how = "" if t is not None and t.method == "signals" else f", {ec.method_words(run)}"
    st.caption(render.md_escape(f"{len(rows)} candidates{how}.{best}"))
    if ec.merged_count(run):
        n = ec.merged_count(run)
        st.caption(render.md_escape(f"{n} near-duplicate{'s' if n != 1 else ''} merged at similarity "
                                    f"≥ {(t.merge_threshold if t else 0):g}"))
    if t is None:
        st.info("Not ranked yet: the run ended before its candidates were compared. They are shown "
                "in the order they were written.", icon=":material/pause_circle:")
    elif t.method == "signals":
        st.info(SIGNAL_WORDS, icon=":material/straighten:")
    for note in ec.tournament_notes(run):
        st.caption(render.md_escape(note))


def _lead_words(c, names: Names, fnames: dict[str, str]) -> str:
    """Where a candidate comes from: for one written from the papers' facets, the two papers
    it pairs (its lead's authors and concepts played no part in it: a card of the walk said
    "Leads with ... Graham Neubig" above a pairing of LIME with LSST); else its lead."""
    pair = rubric.paired(c.proposal)
    if pair is not None:
        a, b = pair
        return (f"Pairs “{names.paper(a.paper_id)}” ({fnames.get(a.field, a.field)}) with the problem of "
                f"“{names.paper(b.paper_id)}” ({fnames.get(b.field, b.field)})")
    lead = c.lead
    parts = [("authors", ", ".join(names.person(i) for i in lead.author_ids)),
             ("fields", " × ".join(fnames.get(f, f) for f in lead.fields)),
             ("concepts", " + ".join(lead.concepts)),
             ("papers", "; ".join(render.short(names.paper(i), 70) for i in lead.paper_ids))]
    said = [f"{k} {v}" for k, v in parts if v]
    return "Leads with " + " · ".join(said) if said else "Leads with nothing in particular (its own seed)"


def _card(r: ec.Ranked, names: Names, fnames: dict[str, str], label: str,
          earlier: closest_idea.Closest | None = None) -> None:
    c = r.candidate
    with st.container(border=True):
        place = f"#{r.rank}" if r.rank else "Unranked"
        st.markdown(f"**{place} · {c.id}** · " + render.md_escape(ec.title_of(c)))
        left, right = st.columns([1, 3])
        with left:
            if r.score is None:
                st.metric(label, "—", help="Not ranked: no score.")
            else:
                st.metric(label, f"{r.score:.2f}", help=SCORE_HELP.get(label))
                if r.interval:
                    st.caption(f"interval {r.interval[0]:.2f} to {r.interval[1]:.2f} (bootstrap)")
        with right:
            st.caption(render.md_escape(_lead_words(c, names, fnames)))
            if c.novelty is None:
                st.caption("Novelty was not checked for this candidate.")
            novelty_view.show(c.novelty, f"cand-{c.id}")
            novelty_view.show_earlier(earlier, f"cand-{c.id}")
        with st.expander(f"The five answers and reviews of {c.id}"):
            _answers_and_reviews(c, names)


def _answers_and_reviews(c, names: Names) -> None:
    for q in QUESTIONS:
        st.markdown(f"**Q{q.number}. {q.title}**")
        text = getattr(c.proposal, q.key)
        if text:
            render.show_text(text)
        else:
            st.warning(f"Missing: no answer to question {q.number}.", icon="❓")
    if not c.reviews:
        st.caption("No reviews of this candidate.")
    for v in c.reviews:
        score = v.score if v.score is not None else "missing"
        st.markdown(render.md_escape(f"Review by {names.person(v.reviewer_id)} · score {score}"))
        render.show_text(f"Strengths: {v.strengths or '(missing)'}\nWeaknesses: {v.weaknesses or '(missing)'}")
    if c.meta_review and c.meta_review.score is not None:
        st.caption(f"Mean review score {c.meta_review.score:.1f}")


def _merged(run: Run) -> None:
    gone = ec.merged(run)
    if gone:
        with st.expander(f"Merged near-duplicates ({len(gone)})"):
            for c in gone:
                st.markdown(render.md_escape(f"{c.id} was merged into {c.merged_into}: {ec.title_of(c)}"))


# -- how they were compared ---------------------------------------------------------------------

def _comparisons(run: Run, rows: list[ec.Ranked]) -> None:
    t = run.tournament
    if t is None:
        return
    if t.method == "signals":
        _signals(run, rows)
        return
    st.subheader("How the judge compared them")
    ids = [r.candidate.id for r in rows if r.rank]
    decided = sum(1 for j in t.judgements if j.winner)
    st.caption(render.md_escape(f"Judge: {t.judge_model or run.config.model}. Every pair it was given "
                                "was judged in both orders; the scores are a Bradley-Terry fit."))
    c2, c3, _ = st.columns(3)
    c2.metric("Judgements", f"{decided} of {len(t.judgements)} decided",
              help="A reply with no decision was asked again, then counted as none; never guessed.")
    c3.metric("Position bias", "—" if t.position_bias is None else f"{t.position_bias:.0%}",
              help="The share of decisions won by the candidate shown first (50% = no bias). Every "
                   "pair was judged in both orders, so a bias cancels in the ranking.")
    if ids and t.wins:
        compared = {frozenset((j.first, j.second)) for j in t.judgements}
        every = len(compared) >= len(ids) * (len(ids) - 1) // 2
        skipped = "" if every else " An empty cell: that pair was never compared."
        st.caption("Win matrix: row beat column that many times; candidates best first." + skipped)
        st.plotly_chart(charts.win_matrix(ids, t.wins, compared), key=f"cand_wins_{run.id}",
                        config=charts.PLOT_CONFIG)
    _reasons(t)


def _reasons(t) -> None:
    pairs: dict[tuple[str, str], list] = {}
    for j in t.judgements:
        pairs.setdefault(tuple(sorted((j.first, j.second))), []).append(j)
    if not pairs:
        st.caption("No judgements were recorded.")
        return
    with st.expander(f"The judge's reasons, pair by pair ({len(pairs)} pairs)"):
        for (a, b), js in sorted(pairs.items()):
            st.markdown("**" + render.md_escape(f"{a} vs {b}") + "**")
            for j in js:
                verdict = f"winner {j.winner}" if j.winner else "no decision"
                st.caption(render.md_escape(f"{j.first} shown first · {verdict}"))
                render.show_text(j.reason or "(no reason given)")


def _signals(run: Run, rows: list[ec.Ranked]) -> None:
    import pandas as pd  # noqa: PLC0415  (slow)

    st.subheader("The measured signals")
    keys = sorted({k for r in rows for k in r.candidate.signals})
    if not keys:
        st.caption("No signals were recorded for these candidates.")
        return
    table = pd.DataFrame([{"rank": r.rank, "candidate": r.candidate.id,
                           "score": None if r.score is None else round(r.score, 3),
                           **{k: r.candidate.signals.get(k) for k in keys}} for r in rows])
    table["rank"] = table["rank"].astype("Int64")
    st.dataframe(table, hide_index=True, key=f"cand_signals_{run.id}")
    st.caption("Each column was measured on the candidate itself; higher is better. The score "
               "combines them; no model was asked which candidate is better.")


# -- the graph ---------------------------------------------------------------------------------

def _lead_graph(run: Run, store, rows: list[ec.Ranked], names: Names, fnames: dict[str, str]) -> None:
    st.subheader("What each candidate leads with, on the community graph")
    by_id = {r.candidate.id: r for r in rows}
    labels = {i: f"{'#' + str(r.rank) if r.rank else 'unranked'} · {i} · {render.short(ec.title_of(r.candidate), 60)}"
              for i, r in by_id.items()}
    pick = st.selectbox("Candidate", list(by_id), key=f"cand_graph_pick_{run.id}",
                        format_func=lambda i, labels=labels: labels.get(i, i))
    if pick is None:
        return
    c = by_id[pick].candidate
    g = run_graph(store.corpus, run, title=f"{c.id}: {ec.title_of(c)}", authors=c.lead.author_ids,
                  papers=c.lead.paper_ids, reviewers=[])
    lead = [*c.lead.author_ids, *c.lead.paper_ids]
    highlight = frozenset(i for i in [*lead, PROPOSAL_NODE] if i in g)
    st.caption(render.md_escape(f"The star is {c.id}; ringed in red are the authors and papers it "
                                "leads with, the rest is faded."))
    outside = [i for i in lead if i not in g]
    if outside:
        st.caption(render.md_escape("Not in this neighbourhood's graph: " +
                                    ", ".join(names.person(i) if i in names.people else names.paper(i)
                                              for i in outside)))
    st.plotly_chart(charts.graph_figure(g, fnames, highlight=highlight), key=f"cand_graph_{run.id}",
                    config=charts.PLOT_CONFIG)


# -- a human study and the downloads --------------------------------------------------------------

def _send_to_study(run: Run, store, read_only: bool) -> None:
    st.subheader("Check the ranking with people")
    n = len(candidate_items(run))
    pairs = n * (n - 1) // 2
    st.caption(f"Send to a study makes a blind pairwise study of these {n} candidates ({pairs} pairs): "
               "raters compare two at a time on novelty, feasibility and overall, never seeing a "
               "rank or a model. Each candidate is an arm named by its place here, so the study's "
               "ranking sits beside this one.")
    ss = st.session_state
    made = ss.setdefault("cand_studies", {}).get(run.id)
    if st.button("Send to a study", key=f"cand_study_{run.id}", disabled=read_only or n < 2,
                 help="Read-only view: open the run from History to make a study." if read_only else None):
        try:
            made = create_from_candidates(store, run)
        except RTError as exc:
            render.show_error(exc)
        else:
            made = {"id": made["id"], "code": made["code"], "token": made["organiser_token"]}
            ss["cand_studies"][run.id] = made  # this session only, as on Create a study
            ss["study_id"] = made["id"]
            study.unlock(made["id"])
            ss["study_new_token"] = (made["id"], made["token"])
    if n < 2:
        st.caption("A study needs at least two candidates with a proposal.")
    if made:
        st.success(f"Study created. Code **{made['code']}**: share the rater link; keep the organiser link.",
                   icon=":material/science:")
        st.caption("Rater link (opens the rating page and nothing else):")
        st.code(study.join_link(made["code"]), language=None)
        st.caption("Organiser link (results, exports, closing):")
        st.code(study.organiser_link(made["token"]), language=None)
        st.warning("Keep the organiser link: it is shown only in this session and stored only as a "
                   "hash. Do not share it with raters.", icon=":material/key:")
        st.page_link(state.PAGES["study_results"], label="Open the study's results", icon=":material/bar_chart:")


def _downloads(run: Run, names: Names) -> None:
    st.subheader("Download the ranking")
    d1, d2, d3, _ = st.columns(4)
    with d1:
        st.download_button("Ranking (Markdown)", ec.ranking_markdown(run, names), mime="text/markdown",
                           file_name=f"researchtown-{run.id}-candidates.md", key=f"cand_dl_md_{run.id}",
                           on_click="ignore")
    with d2:
        st.download_button("Ranking (JSON)", ec.ranking_json(run, names), mime="application/json",
                           file_name=f"researchtown-{run.id}-candidates.json", key=f"cand_dl_json_{run.id}",
                           on_click="ignore")
    with d3:
        st.download_button("Ranking (CSV)", ec.ranking_csv(run, names), mime="text/csv",
                           file_name=f"researchtown-{run.id}-ranking.csv", key=f"cand_dl_csv_{run.id}",
                           on_click="ignore")
