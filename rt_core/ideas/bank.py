"""The bank of ideas: every run's proposals, candidates, revision rounds and steered versions,
searched together, filtered and paged, as one viewer may see them.

The rows live in the store (store/ideas.py, written when a run is saved); this module adds
what they mean (search by meaning, `seen_before` through seen.py) and who sees which
(rt_core.access: a visitor's bank holds the ideas of their own runs, the operator's all, an
open study's items none). The page and the command line both ask `find`, `one`, `star` and
`note` here and only draw or print what comes back.

Search mixes words and meaning as the store's topic search does (store/topics.py): the ideas
whose answers hold every word, and the ideas nearest the query's meaning (MiniLM, cosine at
least `MEANING_FLOOR`), fused by reciprocal rank, so a query in other words than the idea's
still finds it.
"""
from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .. import deployment
from ..access import Viewer, no_such_idea
from ..access_store import idea_decision, idea_runs
from ..config import LOCAL_EMBEDDER
from ..errors import InputError, NotFoundError
from ..store import Store
from ..store.ideas import Filters
from ..store.search import words
from . import seen

MEANING_FLOOR = 0.35  # a weaker cosine than this is not "the same topic" for MiniLM
MEANING_TOP = 200  # ideas taken from the meaning ranking before fusing
RRF_K = 60
PER_PAGE = 25


@dataclass(frozen=True)
class Idea:
    """One idea as the bank shows it."""
    id: str
    run_id: str
    version: str  # proposal, a candidate's id, round<N>, or a steered version's id
    kind: str  # proposal, candidate, round or version
    created_at: str
    model: str
    mode: str
    q1: str
    answers: dict = field(default_factory=dict)  # q1..q5
    fields: tuple[str, ...] = ()
    researcher_ids: tuple[str, ...] = ()  # its neighbourhood
    paper_ids: tuple[str, ...] = ()
    parent: str = ""
    score: float | None = None  # the meta-review's mean
    closest_paper: float | None = None  # similarity of the closest prior paper its novelty check found
    merged_into: str = ""
    seen_before: str | None = None  # the earlier idea it repeats
    seen_similarity: float | None = None
    group_id: str = ""
    starred: bool = False
    note: str = ""
    match: float | None = None  # cosine to the query, when found by meaning

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("fields", "researcher_ids", "paper_ids"):
            d[k] = list(d[k])
        return d

    @classmethod
    def from_row(cls, r: dict, match: float | None = None) -> Idea:
        return cls(r["id"], r["run_id"], r["version"], r["kind"], r["created_at"], r["model"], r["mode"],
                   r["q1"], json.loads(r["answers_json"]), tuple(json.loads(r["fields_json"])),
                   tuple(json.loads(r["researcher_ids_json"])), tuple(json.loads(r["paper_ids_json"])),
                   r["parent"], r["score"], r["closest_paper"], r["merged_into"], r["seen_before"],
                   r["seen_similarity"], r["group_id"] or "", bool(r["starred"]), r["note"], match)


@dataclass(frozen=True)
class Query:
    """What the viewer asked for. Dates are ISO (`2026-12-01`); `until` is exclusive."""
    text: str = ""
    field: str = ""
    model: str = ""
    min_score: float | None = None
    since: str = ""
    until: str = ""
    starred: bool = False
    one_per_group: bool = False  # near-duplicates shown once, by the first of them
    page: int = 0
    per_page: int = PER_PAGE


@dataclass(frozen=True)
class Page:
    ideas: tuple[Idea, ...]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


class Bank:
    """The bank of one store, with the embedder its meaning is read with (the bundled MiniLM;
    tests give another by name and function)."""

    def __init__(self, store: Store, embed: Callable[[list[str]], np.ndarray] | None = None,
                 model: str = LOCAL_EMBEDDER, per_owner: bool | None = None):
        """`per_owner`: seen before only within one owner's runs (a shared server); None asks
        the environment (RT_SHARED, RT_DEMO), which is all the command line knows."""
        self.store, self.model = store, model
        self._embed = embed
        self.per_owner = deployment.shared(None) if per_owner is None else per_owner

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._embed is None:
            from ..models.embed import Embedder  # noqa: PLC0415  (loads the model: only when asked)

            self._embed = Embedder(self.model).encode
        return np.asarray(self._embed(texts), dtype=np.float32)

    def refresh(self) -> int:
        """Embed new ideas and record which were seen before (seen.index)."""
        return seen.index(self.store, self.embed, self.model, per_owner=self.per_owner)

    # -- reading --------------------------------------------------------------------------
    def find(self, viewer: Viewer, q: Query = Query()) -> Page:
        """The ideas this viewer may see that pass the query, best first for a search and
        newest first otherwise, one page of them. Without words, the page is cut by the store
        (a count and one page of rows, however big the bank)."""
        if q.page < 0 or q.per_page < 1:
            raise InputError("a page number is 0 or more and a page holds at least one idea")
        self.refresh()
        runs = self.visible_runs(viewer)
        f = Filters(q.model, q.field, q.min_score, q.since, q.until, q.starred, q.one_per_group)
        matches: dict[str, float] = {}
        if words(q.text):
            order, matches = self._search(q.text, f, runs)
            total, shown = len(order), order[q.page * q.per_page:(q.page + 1) * q.per_page]
        else:
            total = self.store.ideas.total(f, runs)
            shown = [r["id"] for r in self.store.ideas.select(f, runs, q.per_page, q.page * q.per_page)]
        ideas = tuple(Idea.from_row(r, matches.get(r["id"])) for r in self.store.ideas.get(shown))
        return Page(ideas, total, q.page, q.per_page)

    def visible_runs(self, viewer: Viewer) -> list[str] | None:
        """The runs whose ideas are in this viewer's bank; None: every run's (no filter needed)."""
        owners = self.store.ideas.run_owners()
        allowed = idea_runs(self.store, viewer, owners)
        return None if len(allowed) == len(owners) else sorted(allowed)

    def _search(self, text: str, f: Filters, runs: list[str] | None) -> tuple[list[str], dict[str, float]]:
        keep = set(self.store.ideas.ids(f, runs))
        by_words = [r["id"] for r in self.store.ideas.select(replace(f, words=tuple(words(text))), runs)]
        ids, m = self.store.ideas.matrix(self.model)
        meaning: dict[str, float] = {}
        if ids:
            sims = m @ self.embed([" ".join(words(text, limit=64))])[0]
            top = np.argpartition(-sims, min(len(sims) - 1, MEANING_TOP * 4))[:MEANING_TOP * 4]
            for n in top[np.argsort(-sims[top])]:
                if sims[n] < MEANING_FLOOR or len(meaning) >= MEANING_TOP:
                    break
                if ids[n] in keep:
                    meaning[ids[n]] = round(float(sims[n]), 4)
        score: dict[str, float] = {}
        for ranking in (by_words, list(meaning)):
            for rank, iid in enumerate(ranking):
                score[iid] = score.get(iid, 0.0) + 1.0 / (RRF_K + rank + 1)
        order = sorted(score, key=lambda i: (-score[i], i))
        return order, meaning

    def one(self, viewer: Viewer, idea_id: str) -> Idea:
        """One idea of the viewer's bank, or one clear message (the same for an idea that does
        not exist and one the viewer may not see)."""
        got = self.store.ideas.get([(idea_id or "").strip()])
        decision = idea_decision(self.store, viewer, idea_id, got[0]["run_id"] if got else "")
        if not got or not decision:
            raise NotFoundError(decision.reason if got else no_such_idea(idea_id),
                                "List the ideas with `python -m rt_core ideas list`.",
                                app_hint="Pick an idea from the list on the Ideas page.")
        return Idea.from_row(got[0])

    def group(self, viewer: Viewer, idea: Idea) -> list[Idea]:
        """The near-duplicates of an idea's group this viewer may see, the first first."""
        if not idea.group_id:
            return [idea]
        got = self.store.ideas.get(self.store.ideas.in_group(idea.group_id, self.visible_runs(viewer)))
        return [Idea.from_row(r) for r in got]

    # -- the viewer's marks ---------------------------------------------------------------
    def star(self, viewer: Viewer, idea_id: str, on: bool = True) -> Idea:
        idea = self.one(viewer, idea_id)
        self.store.ideas.star(idea.id, on)
        return self.one(viewer, idea.id)

    def note(self, viewer: Viewer, idea_id: str, text: str) -> Idea:
        idea = self.one(viewer, idea_id)
        self.store.ideas.note(idea.id, (text or "").strip()[:4000])
        return self.one(viewer, idea.id)

    def starred(self, viewer: Viewer) -> list[Idea]:
        """Every starred idea the viewer may see, newest first (all pages)."""
        first = self.find(viewer, Query(starred=True, per_page=10_000))
        return list(first.ideas)



_banks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def for_store(store: Store, per_owner: bool) -> Bank:
    """The bank of a store with the bundled MiniLM, one per store, deployment and process, so
    the embedder is loaded once and the matrix of vectors is read once per change."""
    with _lock:
        per_store = _banks.setdefault(store, {})
        if per_owner not in per_store:
            per_store[per_owner] = Bank(store, per_owner=per_owner)
        return per_store[per_owner]
