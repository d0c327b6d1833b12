"""Label geometry in pixels for network figures: estimated text boxes, overlap and bounds checks, wrapping.

Plotly draws marker text at a fixed font size whatever the axis scale, so whether two labels collide is
a question in pixels, not in layout units. The figure builders lay out graphs directly in pixels for a
design width (a half-width Streamlit column) and use these helpers to check that no two labels meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

CHAR_EM = 0.58
"""Average character width as a share of the font size (generous for Inter / Helvetica / Arial)."""
LINE_EM = 1.3
"""Line height as a share of the font size."""
LABEL_FONT = 12
"""Font size (px) of node labels."""
DESIGN_WIDTH = 460
"""The narrowest figure width (px) graph layouts are made for: half of the app's wide layout on a
1400-px screen. Wider columns only add room (the aspect ratio is kept and the centre stays centred)."""


@dataclass(frozen=True)
class Canvas:
    """A figure's size and margins in pixels; the plot area is what is left inside the margins."""

    width: float
    height: float
    left: float = 10.0
    right: float = 10.0
    top: float = 50.0
    bottom: float = 60.0

    @property
    def plot_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> float:
        return self.height - self.top - self.bottom


def text_size(text: str, font: float = LABEL_FONT) -> tuple[float, float]:
    """Estimated (width, height) in px of a label; ``<br>`` separates lines."""
    lines = str(text).split("<br>") if text else []
    if not lines:
        return 0.0, 0.0
    return max(len(line) for line in lines) * CHAR_EM * font, len(lines) * LINE_EM * font


def text_offset(marker: float) -> float:
    """Gap in px between a marker's centre and the near edge of its label (plotly's rule, rounded up)."""
    return marker / 2 / 0.8 + 2.0


def label_box(x: float, y: float, text: str, position: str, font: float = LABEL_FONT,
              marker: float = 0.0) -> np.ndarray:
    """[x0, y0, x1, y1] (px, y upwards) of `text` drawn at plotly `position` beside a marker of size `marker`."""
    w, h = text_size(text, font)
    if w == 0:
        return np.array([x, y, x, y], dtype=float)
    vertical, horizontal = position.split()
    off = text_offset(marker)
    x0 = x + off if horizontal == "right" else x - off - w if horizontal == "left" else x - w / 2
    y0 = y + off if vertical == "top" else y - off - h if vertical == "bottom" else y - h / 2
    return np.array([x0, y0, x0 + w, y0 + h], dtype=float)


def overlapping_pairs(boxes: np.ndarray, gap: float = 0.0) -> list[tuple[int, int]]:
    """Index pairs (i < j) of boxes [x0, y0, x1, y1] that overlap (closer than `gap` px); empty boxes never do."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    real = (b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])
    sep_x = (b[:, None, 0] >= b[None, :, 2] + gap) | (b[None, :, 0] >= b[:, None, 2] + gap)
    sep_y = (b[:, None, 1] >= b[None, :, 3] + gap) | (b[None, :, 1] >= b[:, None, 3] + gap)
    hit = ~(sep_x | sep_y) & real[:, None] & real[None, :]
    i, j = np.nonzero(np.triu(hit, k=1))
    return list(zip(i.tolist(), j.tolist()))


def outside(boxes: np.ndarray, x_range: tuple[float, float], y_range: tuple[float, float]) -> list[int]:
    """Indices of boxes that leave the rectangle `x_range` x `y_range`."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    out = (b[:, 0] < x_range[0] - 1e-6) | (b[:, 2] > x_range[1] + 1e-6) | \
          (b[:, 1] < y_range[0] - 1e-6) | (b[:, 3] > y_range[1] + 1e-6)
    return np.nonzero(out)[0].tolist()


_BREAK = re.compile(r"(?<=[(,])\s*|\s+")


def wrap_label(text: str, width: int, lines: int = 2) -> str:
    """`text` on at most `lines` lines of at most `width` characters joined by ``<br>``, broken after
    "(" or "," or at spaces where possible; an ellipsis ends it when it does not fit (hover shows it all)."""
    flat = " ".join(str(text).split())
    width = max(int(width), 2)
    out: list[str] = []
    rest = flat
    while rest and len(out) < lines:
        if len(rest) <= width:
            out.append(rest)
            rest = ""
            break
        cut = max((m.end() for m in _BREAK.finditer(rest[: width + 1]) if 0 < m.start() <= width), default=0)
        if cut == 0 or len(out) == lines - 1:
            cut = width
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        last = out[-1]
        out[-1] = (last[: width - 1].rstrip() if len(last) >= width else last) + "…"
    return "<br>".join(out)


POSITIONS = ("top center", "bottom center", "middle right", "middle left")
"""Where a node's label may go, in order of preference."""


def hits(box: np.ndarray, others: np.ndarray, gap: float = 1.0) -> int:
    """How many of `others` (boxes [x0, y0, x1, y1]) the box meets (closer than `gap` px)."""
    o = np.asarray(others, dtype=float).reshape(-1, 4)
    apart = (o[:, 0] >= box[2] + gap) | (box[0] >= o[:, 2] + gap) | (o[:, 1] >= box[3] + gap) | (box[1] >= o[:, 3] + gap)
    return int((~apart).sum())


def place_labels(xy: np.ndarray, texts: list[str], markers: list[float], fonts: list[float],
                 x_range: tuple[float, float], y_range: tuple[float, float],
                 fixed: np.ndarray | None = None) -> tuple[list[str], np.ndarray, int]:
    """Greedy label placement in pixels: each node's label (longest first) takes the first of `POSITIONS`
    that stays inside the plot and meets no label placed so far, no other marker and no `fixed` box
    (e.g. edge labels). Returns the positions, the label boxes and how many labels found no free place."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    n = len(xy)
    half = np.asarray(markers, dtype=float)[:, None] / 2
    marks = np.c_[xy - half, xy + half]
    fixed = np.zeros((0, 4)) if fixed is None else np.asarray(fixed, dtype=float).reshape(-1, 4)
    chosen = ["top center"] * n
    boxes = np.zeros((n, 4))
    placed = np.zeros(n, dtype=bool)
    conflicts = 0
    for i in sorted(range(n), key=lambda j: (-text_size(texts[j], fonts[j])[0], j)):
        others = np.vstack([np.delete(marks, i, axis=0), fixed, boxes[placed]])
        best = None
        for position in POSITIONS:
            box = label_box(*xy[i], texts[i], position, fonts[i], markers[i])
            cost = hits(box, others) + 4 * len(outside(box[None], x_range, y_range))
            if best is None or cost < best[0]:
                best = (cost, position, box)
            if cost == 0:
                break
        assert best is not None
        conflicts += best[0] > 0
        chosen[i], boxes[i], placed[i] = best[1], best[2], True
    return chosen, boxes, conflicts
