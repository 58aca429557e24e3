"""The map of the bank: every idea a viewer may see (or one per group of near-duplicates) on
one plane by meaning, coloured by the fields it draws on or by its run, with the papers of
their neighbourhoods beside them.

Why a projection kept in the store: the map of one run (rt_core/ideamap.py) is fitted to its
points every time, which is right for one run but would make a growing bank's map jump: a
new run's ideas would turn the axes and every old point with them. Here the two axes
(principal components, their signs fixed so the largest component of each is positive) are
fitted once, on the ideas there are then, and kept in the store's meta table; a new idea is
only *placed* on them, so old points never move. `refit=True` (the page's "Redraw the axes")
fits again on everything, for a bank that has changed its shape.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..access import Viewer
from ..store.ideas import Filters
from .bank import Bank

IDEA, PAPER = "idea", "paper"
BY_FIELDS, BY_RUN = "fields", "run"


@dataclass(frozen=True)
class MapPoint:
    id: str  # an idea's id, or "paper:<id>"
    kind: str  # IDEA or PAPER
    label: str  # an idea's Q1, a paper's title
    colour: str  # the field pair or the run an idea is coloured by; "" for a paper
    run_id: str
    x: float
    y: float


@dataclass(frozen=True)
class BankMap:
    points: tuple[MapPoint, ...]
    fitted_on: int  # how many ideas the axes were fitted on
    explained: float  # the share of those ideas' spread the two axes show

    @property
    def ideas(self) -> list[MapPoint]:
        return [p for p in self.points if p.kind == IDEA]


def fit(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(mean, two unit axes as rows, share of the spread they hold) of the rows of `m`."""
    mean = m.mean(axis=0)
    centred = m - mean
    if len(m) < 2 or not np.any(centred):
        axes = np.zeros((2, m.shape[1]), dtype=np.float32)
        axes[0, 0] = 1.0
        axes[1, min(1, m.shape[1] - 1)] = 1.0 if m.shape[1] > 1 else 0.0
        return mean, axes, 1.0
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:2].copy()
    if len(axes) < 2:
        axes = np.vstack([axes, np.zeros_like(axes[0])])
    for a in axes:  # the sign of a component is arbitrary; fix it by the data
        if a[np.argmax(np.abs(a))] < 0:
            a *= -1
    total = float((s ** 2).sum())
    return mean, axes, float((s[:2] ** 2).sum() / total) if total else 1.0


def _key(model: str) -> str:
    return f"ideas_map_axes:{model}"


def axes(bank: Bank, refit: bool = False) -> tuple[np.ndarray, np.ndarray, int, float]:
    """The bank's kept axes (fitted now if there are none, or when asked)."""
    store = bank.store
    kept = None if refit else store.db.get_meta(_key(bank.model))
    ids, m = store.ideas.matrix(bank.model)
    if kept:
        k = json.loads(kept)
        mean, ax = np.asarray(k["mean"], dtype=np.float32), np.asarray(k["axes"], dtype=np.float32)
        if len(mean) == (m.shape[1] if len(ids) else len(mean)):
            return mean, ax, int(k["n"]), float(k["explained"])
    mean, ax, explained = fit(m.astype(np.float64)) if len(ids) else (np.zeros(1), np.eye(2, 1), 1.0)
    store.db.set_meta(_key(bank.model), json.dumps({"mean": mean.tolist(), "axes": ax.tolist(),
                                                     "n": len(ids), "explained": explained}))
    return mean.astype(np.float32), ax.astype(np.float32), len(ids), explained


def build(bank: Bank, viewer: Viewer, colour_by: str = BY_FIELDS, one_per_group: bool = False,
          papers: bool = True, refit: bool = False) -> BankMap:
    """The viewer's ideas placed on the kept axes, and (with `papers`) the papers of their
    neighbourhoods that have a vector of the same model."""
    bank.refresh()
    store = bank.store
    visible = set(store.ideas.ids(Filters(one_per_group=one_per_group), bank.visible_runs(viewer)))
    ids, m = store.ideas.matrix(bank.model)
    if not visible or not ids:
        return BankMap((), 0, 0.0)
    mean, ax, n, explained = axes(bank, refit)
    rows = [k for k, iid in enumerate(ids) if iid in visible]
    xy = (m[rows] - mean) @ ax.T
    full = {r["id"]: r for r in store.ideas.get([ids[k] for k in rows])}
    points, hood = [], set()
    for (x, y), k in zip(xy, rows, strict=True):
        r = full.get(ids[k])
        if r is None:
            continue
        fields = sorted(json.loads(r["fields_json"]))[:2]
        colour = r["run_id"] if colour_by == BY_RUN else (" + ".join(fields) or "no field")
        points.append(MapPoint(r["id"], IDEA, r["q1"], colour, r["run_id"], round(float(x), 5), round(float(y), 5)))
        hood.update(json.loads(r["paper_ids_json"]))
    if papers and hood:
        points += _papers(bank, sorted(hood), mean, ax)
    return BankMap(tuple(points), n, explained)


def _papers(bank: Bank, paper_ids: list[str], mean: np.ndarray, ax: np.ndarray) -> list[MapPoint]:
    pids, pm = bank.store.corpus.vectors.matrix(bank.model)
    if not pids or pm.shape[1] != len(mean):
        return []
    where = {pid: k for k, pid in enumerate(pids)}
    have = [p for p in paper_ids if p in where]
    titles = {p.id: p.title for p in bank.store.corpus.get_papers(have)}
    xy = (pm[[where[p] for p in have]] - mean) @ ax.T if have else np.zeros((0, 2))
    return [MapPoint(f"paper:{p}", PAPER, titles.get(p, p), "", "", round(float(x), 5), round(float(y), 5))
            for p, (x, y) in zip(have, xy, strict=True)]
