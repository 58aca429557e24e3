"""A map of ideas: every candidate and version of a run (or of many runs) on one plane by
meaning, with the prior work found nearest to them as a second kind of point.

Why a map: a list of candidates says which won, not which ideas are really the same idea in
other words, nor which sit alone far from anything published. Each idea is embedded (its
problem and method, as the novelty check reads them) with the same embedder as everything
else (the bundled MiniLM unless told otherwise), the nearest papers its novelty check
retrieved are embedded from their title and abstract, and all of them are projected onto
their two main axes (principal components through numpy's SVD: no fitting, no seed, the
same picture for the same points). Each point carries what the page needs to draw and open
it: its Q1, its field mix (the shares of the fields its authors, papers and lead draw on)
and its novelty distance (1 minus the similarity of the closest prior paper found).

No Streamlit here: studio/idea_map_view.py draws it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .run.novelty.nearest import facet_text
from .run.steer import table as steer_table
from .run.steer import tree as steer_tree
from .sources.ids import normalise_title
from .store.paper_vectors import paper_text
from .text import clip
from .types import Candidate, NearPaper, Novelty, Proposal, Run

IDEA, PRIOR = "idea", "prior"
NEAREST_EACH = 3  # nearest papers per facet of each idea that join the map
TEXT_LIMIT = 700  # characters of an idea embedded (the embedder's window is short)
MIX_SHOWN = 0.25  # a field with at least this share is named in the mix


@dataclass
class Point:
    """One dot: an idea (a candidate, a proposal or a version) or a prior paper."""
    id: str  # unique on the map: "<run>/c2", "<run>/proposal", "<run>/round 1", "paper/<key>"
    kind: str  # IDEA or PRIOR
    run_id: str
    label: str  # "c2", "proposal", "round 1" or a paper's title
    q1: str  # an idea's problem (Q1); a paper's title
    text: str  # what was embedded
    fields: dict[str, float] = field(default_factory=dict)  # field -> share, summing to 1
    novelty: float | None = None  # 1 - similarity of the nearest prior paper; None: not checked
    candidate_id: str = ""  # the candidate a click opens
    url: str = ""  # a paper's address
    year: int | None = None
    near_to: list[str] = field(default_factory=list)  # prior: the ideas it was found for
    answers: dict[str, str] = field(default_factory=dict)  # an idea's five answers, to open it
    x: float = 0.0
    y: float = 0.0


@dataclass
class IdeaMap:
    points: list[Point]
    explained: float = 0.0  # share of the points' spread the two axes show (0..1)

    @property
    def ideas(self) -> list[Point]:
        return [p for p in self.points if p.kind == IDEA]

    @property
    def priors(self) -> list[Point]:
        return [p for p in self.points if p.kind == PRIOR]

    def find(self, point_id: str) -> Point | None:
        return next((p for p in self.points if p.id == point_id), None)


# -- the points -------------------------------------------------------------------------------

def idea_text(p: Proposal) -> str:
    """What an idea means on the map: its problem and method, without the question frame."""
    return clip(" ".join(t for t in (facet_text(p.q1), facet_text(p.q5)) if t) or p.q1, TEXT_LIMIT)


def novelty_distance(novelty: Novelty | None) -> float | None:
    """1 minus the similarity of the closest paper any facet's check found (None: not checked)."""
    if novelty is None:
        return None
    sims = [n.similarity for f in novelty.facets for n in f.nearest]
    return round(1.0 - max(sims), 3) if sims else 1.0


def field_mix(corpus, author_ids: list[str], paper_ids: list[str], lead_fields: list[str] = ()) -> dict:
    """Shares of fields: each author and each paper counts one, split over its fields, and
    each field a candidate leads with counts one. Unknown ids count nothing."""
    weights: dict[str, float] = {}

    def add(fields: list[str]) -> None:
        for f in fields:
            weights[f] = weights.get(f, 0.0) + 1.0 / len(fields)

    for rid in author_ids:
        if corpus.researcher_exists(rid):
            add(corpus.researcher_fields([rid]))
    papers = [pid for pid in paper_ids if corpus.paper_exists(pid)]
    for p in corpus.get_papers(papers):
        if p.fields:
            add(list(p.fields))
    for f in lead_fields:
        add([f])
    total = sum(weights.values())
    return {f: round(w / total, 3) for f, w in sorted(weights.items(), key=lambda kv: -kv[1])} if total else {}


def mix_fields(mix: dict[str, float]) -> list[str]:
    """The fields a mix is named by: those with a fair share, else its largest one."""
    named = [f for f, share in mix.items() if share >= MIX_SHOWN]
    return sorted(named) or list(mix)[:1]


def _idea(run: Run, key: str, label: str, proposal: Proposal, mix: dict, novelty: Novelty | None,
          candidate_id: str = "") -> Point:
    return Point(f"{run.id}/{key}", IDEA, run.id, label, proposal.q1, idea_text(proposal), mix,
                 novelty_distance(novelty), candidate_id, answers=proposal.answers())


def steered_versions(store, run: Run) -> list[tuple[str, str, Proposal]]:
    """(id, label, proposal) of each version made by steering this run, parents before
    children (rt_core/run/steer: `versions_of`, read here from the run at hand with
    `tree_of` so the run is not loaded twice). The tree's roots, the run's proposal and
    its candidates, are on the map already."""
    return [(v.id, f"{v.id} ({'you' if v.author == steer_tree.YOU else 'community'})", v.proposal)
            for v in steer_table.tree_of(store, run).ordered() if v.parent]


def ideas_of_run(store, run: Run) -> list[Point]:
    """Every candidate (merged near-duplicates too), else the run's proposal, then each
    revision round after the first proposal and each version a steer made."""
    corpus, cfg = store.corpus, run.config
    run_mix = field_mix(corpus, cfg.researcher_ids, cfg.paper_ids)
    out = [_candidate(corpus, run, c) for c in run.candidates if c.proposal.q1 or c.proposal.q5]
    if not out and run.proposal is not None and (run.proposal.q1 or run.proposal.q5):
        out.append(_idea(run, "proposal", "proposal", run.proposal, run_mix, run.novelty))
    for r in run.rounds[1:]:
        out.append(_idea(run, f"round {r.number}", f"round {r.number}", r.proposal, run_mix, None))
    for vid, label, proposal in steered_versions(store, run):
        out.append(_idea(run, f"version {vid}", f"version {label}", proposal, run_mix, None))
    return out


def _candidate(corpus, run: Run, c: Candidate) -> Point:
    mix = field_mix(corpus, c.lead.author_ids, c.lead.paper_ids, c.lead.fields)
    label = c.id + (f" (merged into {c.merged_into})" if c.merged_into else "")
    return _idea(run, c.id, label, c.proposal, mix, c.novelty, c.id)


def _novelty_of(run: Run, idea: Point) -> Novelty | None:
    if idea.candidate_id:
        return next((c.novelty for c in run.candidates if c.id == idea.candidate_id), None)
    return run.novelty if idea.label == "proposal" else None


def priors_of(store, runs: list[Run], ideas: list[Point]) -> list[Point]:
    """The nearest papers each idea's novelty check found (the best few per facet), each
    paper once however many ideas found it (by its title: an online copy and the store's
    are one paper), embedded from its stored title and abstract when the store has it."""
    by_run = {r.id: r for r in runs}
    found: dict[str, Point] = {}
    for idea in ideas:
        novelty = _novelty_of(by_run[idea.run_id], idea)
        for facet in (novelty.facets if novelty else []):
            for near in facet.nearest[:NEAREST_EACH]:
                point = found.setdefault(normalise_title(near.title), _prior(store, idea.run_id, near))
                if idea.id not in point.near_to:
                    point.near_to.append(idea.id)
    return list(found.values())




def _prior(store, run_id: str, near: NearPaper) -> Point:
    text, fields = near.title, {}
    if near.paper_id and store.corpus.paper_exists(near.paper_id):
        paper = store.corpus.get_paper(near.paper_id)
        text = paper_text(paper.title, paper.abstract)
        fields = {f: round(1 / len(paper.fields), 3) for f in paper.fields}
    key = "paper/" + (near.paper_id or normalise_title(near.title))
    return Point(key, PRIOR, run_id, near.title, near.title, clip(text, TEXT_LIMIT), fields,
                 url=near.url, year=near.year)


# -- the plane -------------------------------------------------------------------------------------

def project(vectors: np.ndarray) -> tuple[np.ndarray, float]:
    """n x 2 coordinates on the two main axes of the centred vectors, and the share of the
    spread they show. One point sits at the origin (share 1); identical points all do. Each
    axis's sign is fixed (its largest loading positive), so a redraw never mirrors the map."""
    vectors = np.asarray(vectors, dtype=np.float64)
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2)), 0.0
    centred = vectors - vectors.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    total = float((s ** 2).sum())
    if total <= 1e-12:
        return np.zeros((n, 2)), 1.0
    k = min(2, len(s))
    signs = np.sign(vt[np.arange(k), np.abs(vt[:k]).argmax(axis=1)])
    coords = np.zeros((n, 2))
    coords[:, :k] = u[:, :k] * s[:k] * signs
    return coords, float((s[:k] ** 2).sum() / total)


def build(store, runs: list[Run], embedder) -> IdeaMap:
    """The map of these runs' ideas and their nearest prior work, projected together."""
    ideas = [p for run in runs for p in ideas_of_run(store, run)]
    points = ideas + priors_of(store, runs, ideas)
    if not points:
        return IdeaMap([])
    coords, explained = project(embedder.encode([p.text for p in points]))
    for p, (x, y) in zip(points, coords, strict=True):
        p.x, p.y = round(float(x), 4), round(float(y), 4)
    return IdeaMap(points, round(explained, 3))

