"""A dependency-free SVG line chart (log or linear axes) for figures embedded in bench/RESULTS.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def line_svg(path: str | Path, series: dict[str, tuple[Sequence[float], Sequence[float]]], title: str,
             x_label: str, y_label: str, log_x: bool = False, log_y: bool = False,
             width: int = 640, height: int = 400) -> Path:
    """Write `series` ({name: (xs, ys)}) as an SVG line chart with markers, axes, ticks and a legend."""
    fx = (lambda v: math.log10(v)) if log_x else float
    fy = (lambda v: math.log10(v)) if log_y else float
    pts = [(fx(x), fy(y)) for xs, ys in series.values() for x, y in zip(xs, ys)]
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if log_y:
        y0, y1 = math.floor(y0), math.ceil(y1)
    if log_x:
        x0, x1 = math.floor(x0), math.ceil(x1)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    L, R, T, B = 70, 20, 40, 55
    W, H = width - L - R, height - T - B

    def sx(v: float) -> float:
        return L + (v - x0) / (x1 - x0) * W

    def sy(v: float) -> float:
        return T + H - (v - y0) / (y1 - y0) * H

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{L}" y1="{T + H}" x2="{L + W}" y2="{T + H}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{T + H}" stroke="black"/>']
    xt = range(int(x0), int(x1) + 1) if log_x else [x0 + i * (x1 - x0) / 5 for i in range(6)]
    yt = range(int(y0), int(y1) + 1) if log_y else [y0 + i * (y1 - y0) / 5 for i in range(6)]
    for v in xt:
        lab = f"{10 ** v:g}" if log_x else f"{v:g}"
        out.append(f'<line x1="{sx(v)}" y1="{T + H}" x2="{sx(v)}" y2="{T}" stroke="#ddd"/>'
                   f'<text x="{sx(v)}" y="{T + H + 16}" text-anchor="middle">{lab}</text>')
    for v in yt:
        lab = f"{10 ** v:g}" if log_y else f"{v:.2f}"
        out.append(f'<line x1="{L}" y1="{sy(v)}" x2="{L + W}" y2="{sy(v)}" stroke="#ddd"/>'
                   f'<text x="{L - 6}" y="{sy(v) + 4}" text-anchor="end">{lab}</text>')
    out.append(f'<text x="{L + W / 2}" y="{height - 12}" text-anchor="middle">{x_label}</text>')
    out.append(f'<text x="16" y="{T + H / 2}" text-anchor="middle" transform="rotate(-90 16 {T + H / 2})">'
               f'{y_label}</text>')
    for i, (name, (xs, ys)) in enumerate(series.items()):
        c = COLOURS[i % len(COLOURS)]
        p = " ".join(f"{sx(fx(x)):.1f},{sy(fy(y)):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{p}" fill="none" stroke="{c}" stroke-width="2"/>')
        out += [f'<circle cx="{sx(fx(x)):.1f}" cy="{sy(fy(y)):.1f}" r="3" fill="{c}"/>' for x, y in zip(xs, ys)]
        out.append(f'<rect x="{L + 10}" y="{T + 8 + 18 * i}" width="12" height="3" fill="{c}"/>'
                   f'<text x="{L + 28}" y="{T + 13 + 18 * i}">{name}</text>')
    out.append("</svg>")
    path = Path(path)
    path.write_text("\n".join(out))
    return path
