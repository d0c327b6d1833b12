"""A force layout fitted to a figure in pixels, its labels placed so that none meets another.

The spring layout gives relative positions; here they are mapped onto a plot area `width` px wide (the
design width of a narrow column) and each node's label is placed beside its marker where it meets no
other label, marker or edge label (`place_labels`). While some label finds no free place, the plot
grows taller (the nodes move apart vertically) and the placement is tried again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable

import numpy as np

from xcore.viz.labels import DESIGN_WIDTH, LABEL_FONT, Canvas, label_box, overlapping_pairs, place_labels, text_size


@dataclass
class Spread:
    """Pixel positions (plot area from (0, 0)), label positions and boxes, edge-label boxes, the canvas."""

    pos: dict[Hashable, np.ndarray]
    textposition: dict[Hashable, str]
    boxes: dict[Hashable, np.ndarray]
    edge_xy: np.ndarray
    edge_boxes: np.ndarray
    canvas: Canvas
    conflicts: int

    def x_range(self) -> tuple[float, float]:
        return 0.0, self.canvas.plot_width

    def y_range(self) -> tuple[float, float]:
        return 0.0, self.canvas.plot_height


def edge_label_points(pos: dict[Hashable, np.ndarray], edges: list[tuple[Any, Any, str]],
                      share: float = 0.55) -> np.ndarray:
    """Where each edge's label sits: `share` of the way from its source to its target."""
    return np.array([pos[u] * (1 - share) + pos[v] * share for u, v, _ in edges]).reshape(-1, 2)


def spread_layout(pos: dict[Hashable, np.ndarray], texts: dict[Hashable, str], markers: dict[Hashable, float],
                  edges: list[tuple[Any, Any, str]] = (), width: float = DESIGN_WIDTH, font: float = LABEL_FONT,
                  edge_font: float = LABEL_FONT, top: float = 50.0, bottom: float = 10.0,
                  max_height: float = 1600.0) -> Spread:
    """Fit `pos` (any units) into a plot `width` px wide and place every label (see the module docstring)."""
    nodes = list(pos)
    raw = np.array([np.asarray(pos[n], dtype=float) for n in nodes]).reshape(-1, 2)
    lo, hi = raw.min(axis=0), raw.max(axis=0)
    unit = np.where(hi - lo > 1e-12, (raw - lo) / np.where(hi - lo > 1e-12, hi - lo, 1.0), 0.5)
    canvas0 = Canvas(width, 0.0, top=top, bottom=bottom)
    sizes = {n: text_size(texts.get(n, ""), font) for n in nodes}
    pad_x = max([sizes[n][0] / 2 for n in nodes] + [markers[n] for n in nodes]) + 2
    pad_y = max([sizes[n][1] for n in nodes] + [markers[n] for n in nodes]) + markers_offset(markers)
    inner_w = max(canvas0.plot_width - 2 * pad_x, 40.0)
    span = hi - lo
    tall = min(inner_w, 110.0 * np.sqrt(len(nodes)))  # a few nodes need no full-width square
    inner_h = float(np.clip(inner_w * (span[1] / span[0] if span[0] > 1e-12 else 1.0), 80.0, tall))
    while True:
        px = {n: np.array([pad_x + u[0] * inner_w, pad_y + u[1] * inner_h]) for n, u in zip(nodes, unit)}
        canvas = Canvas(width, inner_h + 2 * pad_y + top + bottom, top=top, bottom=bottom)
        edge_xy = edge_label_points(px, list(edges))
        edge_boxes = np.array([label_box(x, y, t, "middle center", edge_font) for (x, y), (_, _, t)
                               in zip(edge_xy, edges)]).reshape(-1, 4)
        chosen, boxes, conflicts = place_labels(
            np.array([px[n] for n in nodes]), [texts.get(n, "") for n in nodes], [markers[n] for n in nodes],
            [font] * len(nodes), (0.0, canvas.plot_width), (0.0, canvas.plot_height), fixed=edge_boxes)
        conflicts += len(overlapping_pairs(edge_boxes, gap=1.0))
        if conflicts == 0 or canvas.height * 1.3 > max_height:
            return Spread(px, dict(zip(nodes, chosen)), dict(zip(nodes, boxes)), edge_xy, edge_boxes, canvas,
                          conflicts)
        inner_h *= 1.3


def markers_offset(markers: dict[Hashable, float]) -> float:
    """Room (px) between the largest marker's centre and its label."""
    return max(markers.values(), default=0.0) / 2 + 4
