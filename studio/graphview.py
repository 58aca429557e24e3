"""Where the community graph's nodes and labels go (pure geometry, no plotly).

A graph of 10-30 nodes is read by its labels, so the layout spreads the nodes
further than networkx's default, nodes are sized by how connected they are, and
labels are placed greedily, the most connected nodes first: each label tries
below, above, right, left and the corners of its node and is kept at the first spot that
overlaps no label already placed and no other node. A label that finds no spot
is left to the hover text rather than drawn over another one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

# Pixel estimates for the label boxes: plotly's default font at size 10 is about
# 6 px per character and 13 px per line. The plot width is unknown (it follows the
# page), so a narrow one is assumed: labels then keep apart on wider screens too.
FONT_SIZE = 10
CHAR_PX = 6.0
LINE_PX = 13.0
PLOT_WIDTH_PX = 760
PAD = 0.28  # axis padding around the nodes, as a share of the layout's extent
LABEL_CHARS = {"researcher": 22, "paper": 30, "proposal": 34}
POSITIONS = ("bottom center", "top center", "middle right", "middle left",
             "bottom right", "top right", "bottom left", "top left")


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, other: Box) -> bool:
        return other.x0 <= self.x0 and self.x1 <= other.x1 and other.y0 <= self.y0 and self.y1 <= other.y1


def short_label(text: str, kind: str) -> str:
    """A node's label cut to a length a graph can carry (the full text stays in the hover)."""
    s = " ".join(str(text or "").split())
    n = LABEL_CHARS.get(kind, 24)
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


@dataclass(frozen=True)
class Emphasis:
    ring: float  # marker outline width in px
    opacity: float


def emphasis(node: str, highlight: frozenset[str]) -> Emphasis:
    """How a node is drawn when some nodes are highlighted: those ringed, the rest faded so
    the ring is what the eye finds; with nothing highlighted every node is drawn plainly."""
    if not highlight:
        return Emphasis(1.0, 1.0)
    return Emphasis(3.5, 1.0) if node in highlight else Emphasis(1.0, 0.35)


def degrees(g: nx.Graph) -> dict[str, int]:
    """Distinct neighbours per node (two papers citing each other count once)."""
    simple = nx.Graph(g.to_undirected()) if g.is_directed() or g.is_multigraph() else g
    return {n: simple.degree(n) for n in g.nodes}


def marker_size(kind: str, degree: int) -> float:
    """Marker diameter in px: grows with the square root of the degree, within bounds."""
    base = {"proposal": 22.0, "researcher": 12.0}.get(kind, 9.0)
    return round(min(base + 5.0 * math.sqrt(degree), 40.0), 1)


def spread_layout(g: nx.Graph, seed: int = 0) -> dict[str, tuple[float, float]]:
    """A spring layout with more room between nodes than networkx's default.

    A hidden hub pulls every node weakly towards the middle: without it the separate
    pieces of a neighbourhood (a paper nobody here wrote) fly to the corners and the
    rest is squeezed into a knot.
    """
    if not len(g):
        return {}
    simple = nx.Graph(g.to_undirected())
    if len(simple) == 1:
        return {n: (0.0, 0.0) for n in simple}
    nx.set_edge_attributes(simple, 1.0, "weight")
    hub = object()
    simple.add_edges_from(((hub, n) for n in list(simple.nodes)), weight=0.3)
    k = 1.6 / math.sqrt(len(simple))
    pos = nx.spring_layout(simple, k=k, iterations=400, seed=seed, weight="weight")
    return {n: (float(x), float(y)) for n, (x, y) in pos.items() if n is not hub}


def axis_ranges(pos: dict[str, tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The nodes' extent with room on every side for the labels at the edge."""
    if not pos:
        return [-1.0, 1.0], [-1.0, 1.0]
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    w = max(max(xs) - min(xs), 0.5)
    h = max(max(ys) - min(ys), 0.5)
    return ([min(xs) - PAD * w, max(xs) + PAD * w], [min(ys) - 0.12 * h, max(ys) + 0.12 * h])


class Canvas:
    """Converts pixel sizes to data units for a plot of the given size and ranges."""

    def __init__(self, xr: list[float], yr: list[float], width_px: float, height_px: float):
        self.sx = (xr[1] - xr[0]) / width_px
        self.sy = (yr[1] - yr[0]) / height_px
        self.frame = Box(xr[0], yr[0], xr[1], yr[1])

    def node_box(self, x: float, y: float, size_px: float) -> Box:
        rx, ry = size_px / 2 * self.sx, size_px / 2 * self.sy
        return Box(x - rx, y - ry, x + rx, y + ry)

    def label_box(self, x: float, y: float, size_px: float, text: str, where: str) -> Box:
        w = (len(text) * CHAR_PX + 4) * self.sx
        h = LINE_PX * self.sy
        gap_x = (size_px / 2 + 3) * self.sx
        gap_y = (size_px / 2 + 1) * self.sy
        if where == "bottom center":
            return Box(x - w / 2, y - gap_y - h, x + w / 2, y - gap_y)
        if where == "top center":
            return Box(x - w / 2, y + gap_y, x + w / 2, y + gap_y + h)
        if where == "middle right":
            return Box(x + gap_x, y - h / 2, x + gap_x + w, y + h / 2)
        if where == "middle left":
            return Box(x - gap_x - w, y - h / 2, x - gap_x, y + h / 2)
        # Corners: plotly puts the text's near corner at the marker's edge.
        x0 = x + 0.7 * gap_x if where.endswith("right") else x - 0.7 * gap_x - w
        y0 = y + 0.7 * gap_y if where.startswith("top") else y - 0.7 * gap_y - h
        return Box(x0, y0, x0 + w, y0 + h)


def place_labels(pos: dict[str, tuple[float, float]], sizes: dict[str, float],
                 texts: dict[str, str], order: list[str], canvas: Canvas,
                 always: frozenset[str] = frozenset()) -> dict[str, str]:
    """node -> plotly text position for the labels that fit, tried in `order`. A node in
    `always` (the generated paper) that finds no clear spot may cover another node."""
    nodes = {n: canvas.node_box(*pos[n], sizes[n]) for n in pos}
    taken: list[Box] = []
    out: dict[str, str] = {}
    for n in order:
        if not texts.get(n):
            continue
        boxes = [(where, canvas.label_box(*pos[n], sizes[n], texts[n], where)) for where in POSITIONS]
        free = [(w, b) for w, b in boxes
                if b.inside(canvas.frame) and not any(b.overlaps(t) for t in taken)]
        clear = [(w, b) for w, b in free if not any(b.overlaps(nb) for m, nb in nodes.items() if m != n)]
        pick = clear or (free if n in always else [])
        if pick:
            taken.append(pick[0][1])
            out[n] = pick[0][0]
    return out
