"""Chart figures: ranked explanation items, trade-off curves and value histograms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xcore.explain.render import DOWN, LEGEND, NONE, UP, bar_values, directions, hover_lines, short_numbers
from xcore.explain.types import Explanation
from xcore.viz import theme
from xcore.viz.common import FigureInputError, check_frame, empty_figure, fmt, hover, styled, truncate


def item_labels(explanation: Explanation, k: int = 10, width: int = 60) -> list[str]:
    """Axis labels of the top-`k` items: ``"<rank>. <text truncated to width>"`` (unique by rank)."""
    return [f"{r}. {truncate(short_numbers(it.text), width)}" for r, it in enumerate(explanation.top(k), start=1)]


def ranked_bar_figure(explanation: Explanation, k: int = 10, label_width: int = 60,
                      title: str | None = None, colour_by: str = "direction") -> go.Figure:
    """Horizontal bars of the top-`k` items' scores, rank 1 at the top.

    `colour_by="direction"` (default): one trace per direction ("pushes up", "pushes down",
    "direction not given"), items of non-explainable predicates hatched; the x axis shows the
    score with its direction as sign where the method records it. `colour_by="explainable"`: traces
    "explainable" and "not explainable". Labels carry the rank and are truncated to `label_width`
    with an ellipsis; hover shows the full texts and the method's extras.
    """
    if not isinstance(explanation, Explanation):
        raise FigureInputError(f"ranked_bar_figure needs an Explanation, got {type(explanation).__name__}")
    if colour_by not in ("direction", "explainable"):
        raise FigureInputError(f"colour_by must be 'direction' or 'explainable', got {colour_by!r}")
    items = explanation.top(k)
    title = title if title is not None else f"Top {len(items)} reasons for {truncate(explanation.target, 80)}"
    if not items:
        return empty_figure("this explanation has no items", title)
    labels = item_labels(explanation, k, label_width)
    label_score = explanation.score_spec.label if explanation.score_spec is not None else "score"
    if colour_by == "direction":
        d = directions(explanation, k)
        x = bar_values(explanation, k)
        groups = [(LEGEND[v], [i for i in range(len(items)) if d[i] == v], theme.direction_colour(v))
                  for v in (UP, DOWN, NONE)]
        x_title = f"{label_score} (signed by direction)" if (d != NONE).any() else label_score
    else:
        x = np.array([it.score for it in items])
        groups = [(name, [i for i, it in enumerate(items) if it.explainable is flag], theme.explainable_colour(flag))
                  for name, flag in (("explainable", True), ("not explainable", False))]
        x_title = label_score
    fig = go.Figure()
    for name, idx, colour in groups:
        if not idx:
            continue
        hatch = ["" if items[i].explainable else "/" for i in idx] if colour_by == "direction" else None
        fig.add_trace(go.Bar(
            x=[float(x[i]) for i in idx], y=[labels[i] for i in idx], orientation="h", name=name,
            marker=dict(color=colour, pattern=dict(shape=hatch) if hatch else None), hoverinfo="text",
            customdata=[items[i].text for i in idx],
            hovertext=[hover(f"#{i + 1}", *hover_lines(items[i], explanation.score_spec)) for i in idx]))
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed", automargin=True)
    fig.update_xaxes(title_text=x_title, zeroline=True, zerolinecolor=theme.OUTLINE)
    fig.update_layout(barmode="overlay", height=140 + 28 * len(items), margin=dict(l=10, r=10, t=50, b=40),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    return styled(fig, title)


def tradeoff_figure(frame: pd.DataFrame, x: str, y: str, label: str | None = None, series: str | None = None,
                    title: str | None = None, x_title: str | None = None, y_title: str | None = None,
                    lines: bool = True) -> go.Figure:
    """A trade-off curve per series (e.g. MEP@1 vs MSE over gamma), points annotated by `label`.

    `series` names the column splitting rows into curves; when None, a column called "series" is
    used if present, else all rows form one curve. Series appear in order of first appearance and
    points keep the frame's row order (sort the frame by e.g. gamma first).
    """
    if series is None and isinstance(frame, pd.DataFrame) and "series" in frame.columns:
        series = "series"
    needed = [x, y] + [c for c in (label, series) if c is not None]
    check_frame(frame, needed, "tradeoff_figure", numeric=(x, y))
    fig = go.Figure()
    if not len(frame):
        return empty_figure("no points to show", title)
    keys = pd.unique(frame[series]) if series is not None else [None]
    mode = ("lines+markers" if lines else "markers") + ("+text" if label is not None else "")
    for i, key in enumerate(keys):
        part = frame if key is None else frame[frame[series] == key]
        if key is not None and pd.isna(key):
            part = frame[frame[series].isna()]
        texts = [fmt(v) for v in part[label]] if label is not None else None
        hovers = [hover(*([f"{series}: {key}"] if key is not None else []), f"{x}: {fmt(xv)}", f"{y}: {fmt(yv)}",
                        *([f"{label}: {fmt(lv)}"] if label is not None else []))
                  for xv, yv, lv in zip(part[x], part[y], part[label] if label is not None else part[x])]
        fig.add_trace(go.Scatter(
            x=part[x].to_numpy(dtype=float).tolist(), y=part[y].to_numpy(dtype=float).tolist(),
            mode=mode, name=str(key) if key is not None else y, text=texts, textposition="top center",
            hovertext=hovers, hoverinfo="text", showlegend=key is not None,
            line=dict(color=theme.series_colour(i)), marker=dict(color=theme.series_colour(i), size=8)))
    fig.update_xaxes(title_text=x_title or x)
    fig.update_yaxes(title_text=y_title or y)
    fig.update_layout(hovermode="closest")
    return styled(fig, title)


def value_histogram_figure(frame: pd.DataFrame, title: str | None = "Truth values") -> go.Figure:
    """Bar chart of `RelationalDataset.value_histogram()` output (columns low, high, count).

    One bar per bin, centred at (low + high) / 2 with width high - low; hover shows the interval.
    """
    check_frame(frame, ("low", "high", "count"), "value_histogram_figure", numeric=("low", "high", "count"))
    if not len(frame):
        return empty_figure("no values", title)
    low = frame["low"].to_numpy(dtype=float)
    high = frame["high"].to_numpy(dtype=float)
    count = frame["count"].to_numpy()
    if np.any(high < low):
        raise FigureInputError("value_histogram_figure: a bin has high < low")
    last = len(frame) - 1
    hovers = [f"[{fmt(lo)}, {fmt(hi)}{']' if i == last else ')'}: {int(c):,}"
              for i, (lo, hi, c) in enumerate(zip(low, high, count))]
    fig = go.Figure(go.Bar(
        x=((low + high) / 2).tolist(), y=count.tolist(), width=(high - low).tolist(), name="count",
        marker=dict(color=theme.HISTOGRAM, line=dict(color=theme.OUTLINE, width=0.5)),
        hovertext=hovers, hoverinfo="text"))
    fig.update_xaxes(title_text="truth value", range=[float(low.min()), float(high.max())])
    fig.update_yaxes(title_text="atoms")
    fig.update_layout(bargap=0, showlegend=False)
    return styled(fig, title)
