"""A run's ranked candidates as CSV rows and Markdown, for the CLI's `ideate` and any page
that offers them as downloads. Text only: model text is never turned into markup here.

Every score says what measured it: the method ("judge": Bradley-Terry on pairwise
judgements, or "signals": measured signals, no judge) heads the Markdown and is a column
of the CSV.
"""
from __future__ import annotations

import csv
import io

from .types import Candidate, Run

COLUMNS = ["rank", "candidate", "method", "score", "low", "high", "review_score", "field_coverage",
           "fluency", "novelty", "merged_into", "lead_authors", "lead_fields", "lead_concepts", "q1"]


def ordered(run: Run) -> list[Candidate]:
    """Ranked candidates first (best first), then the merged ones in their order."""
    t = run.tournament
    order = t.order if t else []
    by_id = {c.id: c for c in run.candidates}
    return [by_id[c] for c in order if c in by_id] + [c for c in run.candidates if c.id not in order]


def rows(run: Run) -> list[dict]:
    t = run.tournament
    out = []
    for c in ordered(run):
        ranked = t is not None and c.id in t.order
        low, high = (t.intervals.get(c.id) or ["", ""]) if t else ["", ""]
        out.append({"rank": t.order.index(c.id) + 1 if ranked else "", "candidate": c.id,
                    "method": t.method if ranked else "", "score": t.scores.get(c.id, "") if ranked else "",
                    "low": low, "high": high,
                    **{k: c.signals.get(k, "") for k in ("review_score", "field_coverage", "fluency",
                                                         "novelty")},
                    "merged_into": c.merged_into, "lead_authors": ";".join(c.lead.author_ids),
                    "lead_fields": ";".join(c.lead.fields), "lead_concepts": ";".join(c.lead.concepts),
                    "q1": c.proposal.q1})
    return out


def ranking_csv(run: Run) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS)
    w.writeheader()
    w.writerows(rows(run))
    return buf.getvalue()


def _method_line(run: Run) -> str:
    t = run.tournament
    if t is None:
        return "Not ranked."
    if t.method == "judge":
        bias = "n/a" if t.position_bias is None else f"{t.position_bias:.2f}"
        return (f"Ranked by a judge ({t.judge_model}): {len(t.judgements)} pairwise judgements, each "
                f"pair in both orders; Bradley-Terry scores with 95% bootstrap intervals. Share of "
                f"decisions that went to the proposal shown first: {bias}.")
    return ("Ranked by measured signals (reviewers' mean score, coverage of the chosen fields, "
            "fluency, novelty where measured), not by a judge.")


def candidates_markdown(run: Run) -> str:
    t = run.tournament
    lines = ["# Candidates", "", _method_line(run), ""]
    if t is not None:
        lines += [f"Near-duplicates merged: {t.merged} (similarity at least {t.merge_threshold:.2f}).", ""]
        lines += [f"- {n}" for n in t.notes] + ([""] if t.notes else [])
    for c in ordered(run):
        ranked = t is not None and c.id in t.order
        head = f"## {t.order.index(c.id) + 1}. {c.id}" if ranked else f"## {c.id} (merged into {c.merged_into})"
        lines += [head, ""]
        if ranked:
            iv = t.intervals.get(c.id)
            lines.append(f"Score {t.scores.get(c.id, 0):.3f}" + (f" [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else "")
                         + f" ({t.method})")
        lead = "; ".join(x for x in (", ".join(c.lead.author_ids), " x ".join(c.lead.fields),
                                     ", ".join(c.lead.concepts)) if x)
        lines += [f"Leads with: {lead or 'nothing in particular'}; seed {c.seed}.",
                  "Signals: " + (", ".join(f"{k} {v:g}" for k, v in sorted(c.signals.items())) or "none"),
                  "", c.proposal.to_markdown(f"Proposal {c.id}").replace("## ", "### ", 1)]
        if c.meta_review is not None:
            lines += ["**Meta-review**", "", f"Strengths: {c.meta_review.strengths}", "",
                      f"Weaknesses: {c.meta_review.weaknesses}", "", f"Mean score: {c.meta_review.score}", ""]
        if t is not None:
            reasons = [j for j in t.judgements if c.id in (j.first, j.second) and j.reason]
            for j in reasons[:4]:
                lines.append(f"- Judge, {j.first} vs {j.second} (winner: {j.winner or 'no decision'}): "
                             f"{j.reason}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
