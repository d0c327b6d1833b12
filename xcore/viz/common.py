"""Helpers shared by the figure builders: input checks, label truncation, hover text, empty figures."""

from __future__ import annotations

import html
import textwrap
from typing import Any, Iterable

import pandas as pd
import plotly.graph_objects as go

from xcore.errors import XcoreError
from xcore.viz import theme


class FigureInputError(XcoreError):
    """A figure builder got input it cannot draw (missing column, wrong type)."""


def truncate(text: str, width: int = 60) -> str:
    """`text` on one line, cut to at most `width` characters with a trailing ellipsis."""
    if width < 2:
        raise FigureInputError(f"label width must be at least 2, got {width}")
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def hover(*lines: str, width: int = 90) -> str:
    """HTML-escaped, wrapped hover text: one or more lines joined by ``<br>``."""
    out: list[str] = []
    for line in lines:
        if line is None or line == "":
            continue
        wrapped = textwrap.wrap(str(line), width=width, break_long_words=True, break_on_hyphens=False) or [""]
        out.extend(html.escape(w, quote=False) for w in wrapped)
    return "<br>".join(out)


def fmt(value: Any) -> str:
    """Short text for a number (4 significant digits) or any other value."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        return f"{value:.4g}"
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)


def check_frame(frame: Any, columns: Iterable[str], what: str, numeric: Iterable[str] = ()) -> pd.DataFrame:
    """Raise `FigureInputError` unless `frame` is a DataFrame with `columns`, `numeric` ones numeric."""
    if not isinstance(frame, pd.DataFrame):
        raise FigureInputError(f"{what} needs a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise FigureInputError(f"{what}: column(s) {', '.join(repr(c) for c in missing)} not in the table "
                               f"(it has {', '.join(repr(c) for c in frame.columns)})")
    for c in numeric:
        if not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]):
            raise FigureInputError(f"{what}: column {c!r} must be numeric, it is {frame[c].dtype}")
    return frame


def styled(fig: go.Figure, title: str | None) -> go.Figure:
    """Apply the xcore template, font and title."""
    fig.update_layout(template=theme.TEMPLATE, font=dict(family=theme.FONT_FAMILY),
                      title=dict(text=title) if title else None, hoverlabel=dict(align="left"))
    return fig


def empty_figure(message: str, title: str | None = None) -> go.Figure:
    """A figure with no data and a centred message (e.g. "no items to show")."""
    fig = go.Figure()
    fig.add_annotation(text=html.escape(message), x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return styled(fig, title)
