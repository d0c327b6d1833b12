"""Pixel layout of an explanation graph whose labels do not touch: the target at the centre, the items
on an inner ring, the atoms in two columns (right and left) along an outer ellipse, labels outwards.

Why columns: on an evenly spaced ring, atoms near the top and bottom sit almost at the same height, so
their side-by-side labels collide. Here the atoms of each half are spaced by their label heights, so
labels on one side never share a line, and the figure grows taller with the number of atoms; the
right column's labels run right, the left column's left, so the two sides never meet. Labels are
wrapped (two lines at most) to the room beside the ellipse at the design width, with an ellipsis past
that (the hover shows the full text). A final check on the estimated label boxes widens the spacing
until no two labels overlap and none leaves the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from xcore.viz.labels import (
    CHAR_EM,
    DESIGN_WIDTH,
    LABEL_FONT,
    LINE_EM,
    Canvas,
    label_box,
    outside,
    overlapping_pairs,
    text_offset,
    text_size,
    wrap_label,
)

ATOM_MARKER = 12
ITEM_MARKER = 22
"""Items are squares with their rank written inside, so the inner ring needs no room for labels."""
ITEM_FONT = 9
TARGET_MARKER = 24
ITEM_HALF_WIDTH = 60.0
"""The inner ring becomes an upright ellipse this wide (px, half) when a circle would crowd the labels."""


@dataclass
class RingLayout:
    """Node positions (px from the plot's centre), their label texts and plotly text positions, the canvas."""

    pos: dict[Any, np.ndarray]
    labels: dict[Any, str]
    textposition: dict[Any, str]
    marker: dict[Any, float]
    font: dict[Any, float]
    canvas: Canvas
    boxes: dict[Any, np.ndarray] = field(default_factory=dict)

    def x_range(self) -> tuple[float, float]:
        return -self.canvas.plot_width / 2, self.canvas.plot_width / 2

    def y_range(self) -> tuple[float, float]:
        return -self.canvas.plot_height / 2, self.canvas.plot_height / 2


def ellipse_points(n: int, a: float, b: float, start: float = math.pi / 2) -> np.ndarray:
    """`n` points evenly spaced by arc length on the ellipse with half-axes `a` (x) and `b` (y),
    the first at angle `start`, going anticlockwise."""
    t = np.linspace(start, start + 2 * math.pi, 721)
    xy = np.c_[a * np.cos(t), b * np.sin(t)]
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    want = np.arange(n) * arc[-1] / max(n, 1)
    tt = np.interp(want, arc, t)
    return np.c_[a * np.cos(tt), b * np.sin(tt)]


def item_ring(n: int, spacing: float) -> tuple[float, float]:
    """Half-axes (a, b) of the inner ring holding `n` items `spacing` px apart: a circle while it is
    narrow enough, else an upright ellipse `ITEM_HALF_WIDTH` wide (atoms' labels keep the width)."""
    if n == 0:
        return 0.0, 0.0
    need = n * spacing  # perimeter
    r = max(36.0, need / (2 * math.pi))
    if r <= ITEM_HALF_WIDTH:
        return r, r
    a = ITEM_HALF_WIDTH
    return a, math.sqrt(max(2 * (need / (2 * math.pi)) ** 2 - a * a, a * a))


def _columns(g: nx.Graph, atoms: list, angle: dict) -> tuple[list, list]:
    """Atoms split into a right and a left column, each listed top to bottom, in the angular order of
    their items (clockwise from the top), half on each side."""
    want = {}
    for n in atoms:
        nb = [angle[m] for m in g.neighbors(n) if m in angle]
        a = float(np.angle(np.mean(np.exp(1j * np.array(nb))))) if nb else 0.0
        want[n] = (math.pi / 2 - a) % (2 * math.pi)  # clockwise from the top
    order = sorted(atoms, key=lambda n: (want[n], str(n)))
    half = (len(order) + 1) // 2
    return order[:half], order[half:][::-1]


def _column_y(heights: list[float], gap: float, span: float) -> np.ndarray:
    """Centres (top to bottom) of labels of `heights` stacked with `gap`, spread to fill `span` if taller."""
    if not heights:
        return np.zeros(0)
    steps = [(a + b) / 2 + gap for a, b in zip(heights, heights[1:])]
    total = sum(steps)
    if total and total < span:
        steps = [s * span / total for s in steps]
        total = span
    return total / 2 - np.concatenate([[0.0], np.cumsum(steps)])


def ring_layout(g: nx.Graph, centre: Any, texts: dict[Any, str], width: float = DESIGN_WIDTH,
                font: float = LABEL_FONT, label_width: int = 28, top: float = 50.0,
                bottom: float = 60.0) -> RingLayout:
    """Lay out an `explanation_graph` in pixels for a figure `width` px wide (see the module docstring).

    `texts`: the full label of every atom and item node (the target gets none: the title names it).
    """
    items = sorted((n for n, d in g.nodes(data=True) if d.get("kind") == "item"), key=lambda n: g.nodes[n]["rank"])
    atoms = [n for n, d in g.nodes(data=True) if d.get("kind") == "atom" and n != centre]
    first = ellipse_points(len(items), *item_ring(len(items), ITEM_MARKER * math.sqrt(2)))
    angle = {n: math.atan2(float(y), float(x)) for n, (x, y) in zip(items, first)}
    right, left = _columns(g, atoms, angle)
    char = CHAR_EM * font
    gap = 3.0
    for _ in range(12):
        canvas = Canvas(width, 0.0, top=top, bottom=bottom)
        ia, ib = item_ring(len(items), ITEM_MARKER * math.sqrt(2) + 2 * gap)
        rx = ia + ITEM_MARKER / 2 + text_offset(ATOM_MARKER) + 4 * gap  # the atoms clear the items
        room = canvas.plot_width / 2 - rx - text_offset(ATOM_MARKER) - 2
        chars = max(6, min(label_width, int(room // char)))
        labels = {n: wrap_label(texts.get(n, ""), chars) for n in atoms}
        labels.update({n: texts.get(n, "") for n in items})
        widest = max((text_size(labels[n], font)[0] for n in atoms), default=0.0)
        rx = max(rx, min(canvas.plot_width / 2 - text_offset(ATOM_MARKER) - widest - 2, 1.6 * rx))
        heights = {n: max(text_size(labels[n], font)[1], LINE_EM * font, ATOM_MARKER) for n in atoms}
        inner = ib + ITEM_MARKER / 2 + ATOM_MARKER + 2 * gap
        span = 2 * max(inner, 0.5 * rx)
        ys = {side: _column_y([heights[n] for n in col], gap, span) for side, col in (("r", right), ("l", left))}
        reach = max([abs(float(y)) for col in ys.values() for y in col] + [inner])
        ry = reach * 1.15 + gap  # the top and bottom atoms keep off the vertical axis
        pos: dict[Any, np.ndarray] = {centre: np.zeros(2)}
        textposition: dict[Any, str] = {}
        for n, xy in zip(items, ellipse_points(len(items), ia, ib)):
            pos[n] = xy
            textposition[n] = "middle center"  # the rank inside the square
        for side, col in (("r", right), ("l", left)):
            sign = 1.0 if side == "r" else -1.0
            for n, y in zip(col, ys[side]):
                x = rx * math.sqrt(max(0.0, 1.0 - (float(y) / ry) ** 2))
                pos[n] = np.array([sign * max(x, 2 * ATOM_MARKER), float(y)])
                textposition[n] = "middle right" if sign > 0 else "middle left"
        marker = {n: ATOM_MARKER for n in atoms} | {n: ITEM_MARKER for n in items} | {centre: TARGET_MARKER}
        for n in g.nodes:
            pos.setdefault(n, np.zeros(2))
        fonts = {n: float(ITEM_FONT if n in angle else font) for n in labels}
        boxes = {n: label_box(*pos[n], labels[n], textposition[n], fonts[n], marker[n]) for n in labels}
        half_h = max([abs(b[1]) for b in boxes.values()] + [abs(b[3]) for b in boxes.values()] + [ry]) + gap
        canvas = Canvas(width, 2 * half_h + top + bottom, top=top, bottom=bottom)
        layout = RingLayout(pos, labels, textposition, marker, fonts, canvas, boxes)
        stack = np.array(list(boxes.values())).reshape(-1, 4)
        if not overlapping_pairs(stack, gap=1.0) and not outside(stack, layout.x_range(), layout.y_range()):
            return layout
        gap += 4.0  # crowded: spread the columns and the ring, and try again
    return layout
