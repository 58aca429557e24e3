"""A finished brainstorm run built by hand (the records the core fills), so the app's
Candidates view is tested without running the loop: four candidates of the case study's
neighbourhood and a fifth merged into one of them, ranked by a judge or by signals.

Candidate c2 wins, then c4, c1, c3 (the order is deliberately not the writing order). One
title is a script tag and one nearest paper has a javascript: link, both to be shown
as text and never followed.
"""
from __future__ import annotations

from rt_core.config import LOCAL_MODEL
from rt_core.run.novelty import THRESHOLD, verdict
from rt_core.types import (
    Candidate,
    FacetNovelty,
    Judgement,
    Lead,
    MetaReview,
    NearPaper,
    Novelty,
    Proposal,
    Review,
    Run,
    RunConfig,
    Tournament,
)

AUTHORS = ["r-neubig-graham", "r-chen-beidi", "r-zhao-wayne-xin", "r-talwalkar-ameet",
           "r-ivezic-zeljko", "r-vallenari-antonella"]
PAPERS = ["arxiv:2410.16179", "arxiv:2311.04076", "arxiv:2303.18223", "arxiv:2307.13854",
          "arxiv:2208.00211", "arxiv:2406.03541", "arxiv:1808.07445"]
ORDER = ["c2", "c4", "c1", "c3"]
XSS = "<script>alert(1)</script>"
REASON = "The second proposal names a measurable benchmark; the first stays vague."
NEAR = NearPaper(title="Gaia Data Release 3: summary of the content", similarity=0.81, year=2023,
                 url="https://arxiv.org/abs/2208.00211", source="store", paper_id="arxiv:2208.00211")
FAR = NearPaper(title=NEAR.title, similarity=0.41, year=NEAR.year, url=NEAR.url, source="store")
BAD_LINK = NearPaper(title="A paper with a hostile link", similarity=0.3, year=2020,
                     url="javascript:alert(1)", source="openalex")


def _proposal(cid: str) -> Proposal:
    first = XSS if cid == "c3" else f"How can {cid} use language models to read stellar survey logs?"
    return Proposal(first + " More words follow.", *(f"Answer {k} of {cid}." for k in range(2, 6)))


def _facet(key: str, papers: list[NearPaper]) -> FacetNovelty:
    return FacetNovelty(key, papers, verdict(papers, 120, THRESHOLD), searched=120)


def _novelty(cid: str) -> Novelty:
    """c1's problem has close prior work (NEAR); every other facet has none."""
    q1 = _facet("q1", [NEAR, BAD_LINK] if cid == "c1" else [BAD_LINK])
    return Novelty([q1, _facet("q5", [FAR])], sources=["store"], online=False, threshold=THRESHOLD)


def _candidate(n: int) -> Candidate:
    cid = f"c{n}"
    lead = Lead(author_ids=[AUTHORS[n - 1]], fields=["nlp", "astronomy"],
                concepts=[f"concept {n}"], paper_ids=[PAPERS[n - 1]])
    reviews = [Review("r-vallenari-antonella", f"Strength of {cid}.", f"Weakness of {cid}.", 5 + n)]
    return Candidate(cid, _proposal(cid), lead, seed=n, reviews=reviews,
                     meta_review=MetaReview("s", "w", 5.0 + n), novelty=_novelty(cid),
                     signals={"review_score": 0.5 + n / 20, "novelty": 0.3 + n / 30, "fluency": -1.0 - n / 10})


def _judgements() -> list[Judgement]:
    out = []
    for i, a in enumerate(ORDER):
        for b in ORDER[i + 1:]:
            out += [Judgement(a, b, a, REASON), Judgement(b, a, a, f"{a} over {b}, shown second.")]
    out[-1] = Judgement(out[-1].first, out[-1].second, "", "")  # one reply with no decision
    return out


def brainstorm_run(run_id: str, method: str = "judge") -> Run:
    cands = [_candidate(n) for n in range(1, 5)]
    dup = _candidate(5)
    dup.merged_into = "c2"
    cands.append(dup)
    ranks = {cid: n for n, cid in enumerate(ORDER)}
    t = Tournament(method=method, order=list(ORDER),
                   scores={c: 1.5 - 0.8 * r for c, r in ranks.items()},
                   intervals={c: [1.2 - 0.8 * r, 1.8 - 0.8 * r] for c, r in ranks.items()},
                   merged=1, merge_threshold=0.9)
    if method == "judge":
        t.judge_model = "scripted/judge"
        t.judgements = _judgements()
        for j in t.judgements:
            if j.winner:
                loser = j.second if j.winner == j.first else j.first
                row = t.wins.setdefault(j.winner, {})
                row[loser] = row.get(loser, 0) + 1
        decided = [j for j in t.judgements if j.winner]
        t.position_bias = sum(j.winner == j.first for j in decided) / len(decided)  # 6 of 11
    # Signals are what a base model's run gets: the embedded model wrote those candidates.
    model = "scripted/demo" if method == "judge" else LOCAL_MODEL
    config = RunConfig(researcher_ids=list(AUTHORS), paper_ids=list(PAPERS), model=model,
                       candidates=5, check_novelty=True)
    run = Run(id=run_id, config=config, status="done", created_at="2026-11-23T23:00:00",
              candidates=cands, tournament=t)
    run.proposal = cands[1].proposal
    return run
