"""The pictures people read: a community graph with labels, degree-sized nodes, field colours
apart from the grey edges and a legend below the plot; similarity bars with the chance band
behind them, in the legend, with room above the top bar."""
from __future__ import annotations

import itertools

from rt_core import graph
from rt_core.run.replay.paper import ChanceBand
from rt_core.types import Paper, Researcher
from studio import charts, graphview

FIELDS = {"nlp": "NLP", "astronomy": "Astronomy", "biology": "Biology"}
LONG = "A very long paper title about galaxies, language models and many other things besides"


def _community(n_people: int = 10, n_papers: int = 14):
    """A neighbourhood of the size the app shows (24 nodes): one hub author, a few loners."""
    fields = list(FIELDS)
    papers = [Paper(id=f"p{i}", title=(LONG if i == 0 else f"Paper number {i}"),
                    fields=[fields[i % 3]], references=[f"p{i - 1}"] if i % 4 == 1 else [])
              for i in range(n_papers)]
    people = [Researcher(id="r0", name="Hub Author", fields=["nlp"],
                         publication_ids=[p.id for p in papers[:8]])]
    people += [Researcher(id=f"r{i}", name=f"Person {i}", fields=[fields[i % 3]],
                          publication_ids=[f"p{i}"]) for i in range(1, n_people)]
    return graph.build_graph(people, papers)


def _labels(fig):
    [trace] = [t for t in fig.data if "text" in (t.mode or "")]
    return trace


def _marker_sizes(fig) -> dict[str, float]:
    """node label -> marker size, read back from the hover texts."""
    out = {}
    for t in fig.data:
        if t.mode == "markers":
            for hover, size in zip(t.hovertext, t.marker.size, strict=True):
                out[hover.split("<br>")[0]] = size
    return out


def test_names_and_short_titles_are_drawn_as_text_not_only_on_hover():
    fig = charts.graph_figure(_community(), FIELDS)
    labels = _labels(fig)
    assert labels.hoverinfo == "skip" and not labels.showlegend
    assert "Hub Author" in labels.text  # the most connected node is always labelled
    assert len(labels.text) >= 12  # most of the 24 nodes carry their label
    assert all(len(t) <= max(graphview.LABEL_CHARS.values()) for t in labels.text)
    assert LONG not in labels.text
    cut = graphview.short_label(LONG, "paper")
    assert len(cut) == graphview.LABEL_CHARS["paper"] and cut.endswith("…") and LONG.startswith(cut[:-1])


def test_placed_labels_overlap_neither_each_other_nor_other_nodes():
    g = _community(14, 16)
    pos = graphview.spread_layout(g)
    deg = graphview.degrees(g)
    sizes = {n: graphview.marker_size(g.nodes[n]["kind"], deg[n]) for n in g}
    texts = {n: graphview.short_label(g.nodes[n]["label"], g.nodes[n]["kind"]) for n in g}
    canvas = graphview.Canvas(*graphview.axis_ranges(pos), graphview.PLOT_WIDTH_PX, 420)
    placed = graphview.place_labels(pos, sizes, texts, sorted(g, key=lambda n: -deg[n]), canvas)
    assert len(placed) > len(g) / 2
    boxes = {n: canvas.label_box(*pos[n], sizes[n], texts[n], where) for n, where in placed.items()}
    for a, b in itertools.combinations(boxes, 2):
        assert not boxes[a].overlaps(boxes[b]), (a, b)
    for n, box in boxes.items():
        assert box.inside(canvas.frame)
        assert not any(box.overlaps(canvas.node_box(*pos[m], sizes[m])) for m in g if m != n)


def test_nodes_are_sized_by_degree():
    g = _community()
    sizes = _marker_sizes(charts.graph_figure(g, FIELDS))
    assert sizes["Hub Author"] > sizes["Person 1"]  # 8 papers against 1
    assert sizes["Paper number 1"] > sizes["Paper number 2"]  # an author and a citation
    assert len(set(sizes.values())) >= 3


def test_edges_are_grey_and_no_field_takes_their_colour():
    fig = charts.graph_figure(_community(), FIELDS)
    edge_colours = {t.line.color for t in fig.data if t.mode == "lines"}
    assert edge_colours == {charts.EDGE_COLOUR}
    r, g_, b = (int(charts.EDGE_COLOUR[i:i + 2], 16) for i in (1, 3, 5))
    assert r == g_ == b, "a neutral grey"
    node_colours = {t.marker.color for t in fig.data if t.mode == "markers"}
    assert len(node_colours) == 3 and charts.EDGE_COLOUR not in node_colours
    assert {t.name for t in fig.data if t.mode == "lines"} == {"authorship", "citation"}


def test_the_legend_sits_below_the_plot_away_from_the_toolbar():
    legend = charts.graph_figure(_community(), FIELDS).layout.legend
    assert legend.orientation == "h" and legend.y < 0 and legend.yanchor == "top"


def test_hostile_labels_are_escaped():
    g = graph.build_graph([Researcher(id="r", name="<b>Bold</b>", publication_ids=["p"])],
                          [Paper(id="p", title="<img src=x>")])
    text = _labels(charts.graph_figure(g, FIELDS)).text
    assert "&lt;b&gt;Bold&lt;/b&gt;" in text and not any("<" in t for t in text)


def test_an_empty_graph_and_a_single_node_draw():
    assert not [t for t in charts.graph_figure(graph.build_graph([], []), FIELDS).data]
    one = charts.graph_figure(graph.build_graph([], [Paper(id="p", title="Alone")]), FIELDS)
    assert _labels(one).text == ("Alone",)


def test_the_proposal_star_is_labelled_first():
    g = graph.add_proposal(_community(), "How can language models map galaxies in survey images?",
                           ["r0", "r1"], ["p0", "p1"], ["r2", "r3"])
    fig = charts.graph_figure(g, FIELDS)
    assert _labels(fig).text[0].startswith("How can language models")
    assert {t.name for t in fig.data if t.mode == "lines"} == {"authorship", "citation", "review"}
    assert _marker_sizes(fig)["How can language models map galaxies in survey images?"] > \
        _marker_sizes(fig)["Hub Author"]


# -- similarity bars with the chance band -----------------------------------------------------

def test_the_chance_band_is_a_layer_behind_the_bars_with_a_legend_entry_and_headroom():
    band = ChanceBand(median=0.22, low=0.15, high=0.31, n=40)
    fig = charts.bars_with_band(["self", "global"], [0.41, 0.52], band, y_title="similarity")
    rect = [s for s in fig.layout.shapes if s.type == "rect"]
    line = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(rect) == len(line) == 1
    assert rect[0].layer == "below" and line[0].layer == "below"
    assert (rect[0].y0, rect[0].y1) == (0.15, 0.31)
    assert rect[0].showlegend and "chance band" in rect[0].name and "n = 40" in rect[0].name
    assert line[0].showlegend and "0.220" in line[0].name
    top = fig.layout.yaxis.range[1]
    assert top >= 0.52 * 1.2, "room above the top bar for its value"
    assert fig.layout.legend.y < 0 and fig.data[0].text == ("0.410", "0.520")


def test_without_a_band_the_bars_stand_alone_and_the_band_sets_the_top_if_higher():
    fig = charts.bars_with_band(["self"], [0.1], None, y_title="similarity")
    assert not fig.layout.shapes and fig.layout.yaxis.range[1] > 0.1
    high = charts.bars_with_band(["self"], [0.1], ChanceBand(0.3, 0.2, 0.6, 5), y_title="s")
    assert high.layout.yaxis.range[1] > 0.6


def test_the_generated_paper_keeps_its_label_when_crowded_and_others_give_way():
    # Eight nodes hem the star in: every spot for its label covers one of them.
    ring = {f"n{i}": (dx * 0.05, dy * 0.05) for i, (dx, dy) in enumerate(
        [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)])}
    pos = {"star": (0.0, 0.0), **ring}
    sizes = {n: 30.0 for n in pos}
    texts = {n: "a label long enough to reach a neighbour" for n in pos}
    canvas = graphview.Canvas([-1, 1], [-1, 1], 400, 400)
    order = ["star", *ring]
    assert "star" not in graphview.place_labels(pos, sizes, texts, order, canvas)
    placed = graphview.place_labels(pos, sizes, texts, order, canvas, always=frozenset({"star"}))
    assert "star" in placed
