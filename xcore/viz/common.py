"""Helpers shared by the figure builders: input checks, label truncation, hover text, empty figures."""

from __future__ import annotations

import html
import re
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


_CHUNKS = re.compile(r"(\d+)")


def natural_key(value: Any) -> tuple:
    """Sort key that orders the numbers inside text by value: "row 2" before "row 10" before "row 101"
    (text sorting put "row 1, row 10, row 100, row 101, ..., row 2"); case-insensitive otherwise."""
    parts = _CHUNKS.split(str(value))
    return tuple((0, int(p), "") if i % 2 else (1, 0, p.casefold()) for i, p in enumerate(parts) if p != "")


def natural_sorted(values: Iterable[Any], reverse: bool = False) -> list[Any]:
    """`values` in natural order (`natural_key`)."""
    return sorted(values, key=natural_key, reverse=reverse)


def natural_text(values: pd.Series) -> pd.Series:
    """Text whose plain order is the natural order of `values` (every number zero-padded to 30 digits,
    case folded); missing values stay missing."""
    text = values.astype("string")
    return text.str.replace(r"\d+", lambda m: m.group(0).zfill(30), regex=True).str.casefold()


def sort_frame(frame: pd.DataFrame, column: str, ascending: bool = True) -> pd.DataFrame:
    """`frame` sorted by `column`, stable, missing values last; text columns in natural order
    ("row 2" before "row 10": the predictions browser listed row 1, row 10, row 100, row 101, ...)."""
    numeric = pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(frame[column])
    return frame.sort_values(column, ascending=ascending, kind="stable", na_position="last",
                             key=None if numeric else natural_text)


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


TITLE_PAD = 34
"""Pixels kept free above a figure's title: the band where plotly's toolbar (modebar) appears."""
TITLE_LINE = 22
"""Height (px) of one title line at the template's title size."""
TITLE_CHARS = 56
"""Longer titles are wrapped (a half-width column is about 460 px)."""
LEGEND_ROW = 22
"""Height (px) of one row of a horizontal legend."""
LEGEND_WIDTH = 460
"""Width (px) legends are laid out for (half of the app's wide layout on a 1400-px screen)."""


def legend_shown(fig: go.Figure) -> bool:
    """Whether plotly draws a legend: asked for, or two or more traces that do not opt out."""
    if fig.layout.showlegend is not None:
        return bool(fig.layout.showlegend)
    return sum(1 for t in fig.data if t.showlegend is not False) >= 2


def legend_rows(names: list[str], width: float = LEGEND_WIDTH, font: float = 12.0) -> int:
    """Rows a horizontal legend of `names` needs in a figure `width` px wide (0.6 em a character + symbol)."""
    rows, used = 1, 0.0
    for name in names:
        w = len(name) * 0.6 * font + 45
        if used and used + w > width - 20:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def _grow(fig: go.Figure, side: str, to: float) -> None:
    """Make the `side` margin at least `to` px, the figure taller by as much when its height is fixed
    (the plot area keeps its size: pixel layouts stay valid)."""
    have = getattr(fig.layout.margin, side)
    now = have if have is not None else (100 if side == "t" else 80)
    if to <= now:
        return
    fig.update_layout(margin={side: to})
    if fig.layout.height is not None and have is not None:
        fig.update_layout(height=fig.layout.height + (to - now))


def styled(fig: go.Figure, title: str | None) -> go.Figure:
    """Apply the xcore template, font and title, and keep title, legend and toolbar apart.

    The title sits below the toolbar band (`TITLE_PAD`), wrapped when long; a legend that plotly would
    draw at the side or on top (where the toolbar appears and long titles run) goes below the plot,
    with the bottom margin grown to hold it."""
    text = title if not title or "<br>" in title else \
        "<br>".join(textwrap.wrap(" ".join(title.split()), TITLE_CHARS, break_on_hyphens=False))
    fig.update_layout(template=theme.TEMPLATE, font=dict(family=theme.FONT_FAMILY), hoverlabel=dict(align="left"),
                      title=dict(text=text, x=0, xref="container", xanchor="left", yref="container", y=1,
                                 yanchor="top", pad=dict(t=TITLE_PAD, l=12)) if text else None)
    if text:
        _grow(fig, "t", TITLE_PAD + TITLE_LINE * (text.count("<br>") + 1) + 14)
    if legend_shown(fig):
        lg = fig.layout.legend
        below = lg.orientation == "h" and lg.y is not None and lg.y < 0.5 and lg.yref != "container"
        if not below:  # at the side or on top: under the plot, in the figure's bottom band
            names = [str(t.name) for t in fig.data if t.showlegend is not False and t.name]
            rows = legend_rows(names)
            fig.update_layout(legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0,
                                          xanchor="left", xref="container"))
            bottom = fig.layout.margin.b if fig.layout.margin.b is not None else 80
            _grow(fig, "b", bottom + LEGEND_ROW * rows + 10)
    return fig


def empty_figure(message: str, title: str | None = None) -> go.Figure:
    """A figure with no data and a centred message (e.g. "no items to show")."""
    fig = go.Figure()
    fig.add_annotation(text=html.escape(message), x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return styled(fig, title)
