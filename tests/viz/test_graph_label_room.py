"""Graph figures leave room for node labels: padded axis ranges and no clipping at the plot's border.

Found in browser screenshots: the outermost atom label of an ESMS explanation graph was cut at the
left edge ("ted(u00, i102)"), and m-NLIL's explained entity, drawn at the top, lost its label.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from test_graph_labels_apart import assert_legible
from test_viz import ground_rules

from xcore.nlil.viz import pattern_figure
from xcore.viz import explanation_graph_figure, predicate_graph_figure


def node_extent(fig) -> tuple[np.ndarray, np.ndarray]:
    xy = np.array([(x, y) for t in fig.data if t.mode and "text" in t.mode
                   for x, y in zip(t.x, t.y) if x is not None])
    return xy.min(axis=0), xy.max(axis=0)


def assert_room(fig, x_pad: float, y_pad: float) -> None:
    lo, hi = node_extent(fig)
    span = np.maximum(hi - lo, 1.0)
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert xr[0] <= lo[0] - x_pad * span[0] + 1e-9 and xr[1] >= hi[0] + x_pad * span[0] - 1e-9
    assert yr[0] <= lo[1] - y_pad * span[1] + 1e-9 and yr[1] >= hi[1] + y_pad * span[1] - 1e-9
    assert all(t.cliponaxis is False for t in fig.data if t.type == "scatter")


def test_explanation_graph_leaves_room_beside_the_outer_atoms():
    assert_room(explanation_graph_figure(ground_rules()), 0.55, 0.1)


def test_predicate_graph_leaves_room_above_and_below():
    g = nx.Graph()
    for name in ("a", "b", "c"):
        g.add_node(name, arity=1, closed=name != "c", explainable=True, atoms=3)
    g.add_edges_from([("a", "b"), ("b", "c")])
    assert_room(predicate_graph_figure(g), 0.1, 0.15)


def test_rule_pattern_keeps_the_highlighted_entity_label():
    fig = pattern_figure(["has_car(east1, car_12)", "short(car_12)", "closed(car_12)"], highlight="east1")
    for width in (460, 600):
        assert_legible(fig, width)  # every label inside the plot, none on another
    nodes = next(t for t in fig.data if t.mode == "markers+text")
    assert any(str(label).startswith("east1") for label in nodes.text)
