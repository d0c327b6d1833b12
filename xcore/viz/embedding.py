"""Objects in a 2-D embedding space, coloured by cluster (I-Explain coalitions)."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xcore.viz import theme
from xcore.viz.common import check_frame, empty_figure, fmt, hover, styled

MAX_LEGEND = 12
"""Legend entries at most: the largest clusters each get one, the rest share "other"."""


def embedding_scatter_figure(frame: pd.DataFrame, x: str = "x", y: str = "y", cluster: str = "cluster",
                             label: str = "object", size: str | None = None,
                             highlight: Iterable[str] = (), title: str | None = "Objects in embedding space"
                             ) -> go.Figure:
    """A scatter of objects at (`x`, `y`), one trace per cluster (legend toggles clusters).

    `size` (optional numeric column, e.g. how many coalitions sampled the object) scales markers
    between 6 and 16 px; objects named in `highlight` (e.g. the selected query's object) get a
    large outlined star on top. Hover shows the object, its cluster and every other column.
    """
    check_frame(frame, [x, y, cluster, label], "embedding_scatter_figure", numeric=(x, y))
    if not len(frame):
        return empty_figure("no objects to show", title)
    if size is not None:
        check_frame(frame, [size], "embedding_scatter_figure", numeric=(size,))
        s = frame[size].to_numpy(dtype=float)
        span = s.max() - s.min()
        marker_size = 6 + 10 * ((s - s.min()) / span if span > 0 else np.zeros_like(s))
    else:
        marker_size = np.full(len(frame), 8.0)
    others = [c for c in frame.columns if c not in (x, y, cluster, label)]
    fig = go.Figure()
    order = frame[cluster].value_counts(sort=True)  # the largest clusters get their own legend entry
    shown = list(order.index[:MAX_LEGEND - 1]) if len(order) > MAX_LEGEND else list(order.index)
    groups = [(f"cluster {key}", (frame[cluster] == key).to_numpy()) for key in
              sorted(shown, key=lambda v: (str(type(v)), v))]
    if len(order) > len(shown):
        rest = ~frame[cluster].isin(shown).to_numpy()
        groups.append((f"other ({len(order) - len(shown)} clusters)", rest))
    for i, (name, sel) in enumerate(groups):
        part = frame[sel]
        colour = theme.UNKNOWN if name.startswith("other") else theme.series_colour(i)
        fig.add_trace(go.Scattergl(
            x=part[x].to_numpy(dtype=float).tolist(), y=part[y].to_numpy(dtype=float).tolist(), mode="markers",
            name=name, marker=dict(color=colour, size=marker_size[sel].tolist(),
                                               opacity=0.8, line=dict(width=0)),
            hoverinfo="text", customdata=part[label].astype(str).tolist(),
            hovertext=[hover(str(row[label]), f"cluster {row[cluster]}", *[f"{c}: {fmt(row[c])}" for c in others])
                       for _, row in part.iterrows()]))
    marked = frame[frame[label].astype(str).isin({str(h) for h in highlight})]
    if len(marked):
        fig.add_trace(go.Scatter(
            x=marked[x].to_numpy(dtype=float).tolist(), y=marked[y].to_numpy(dtype=float).tolist(),
            mode="markers+text", name="selected", text=marked[label].astype(str).tolist(),
            textposition="top center", marker=dict(symbol="star", size=18, color=theme.TARGET,
                                                   line=dict(width=1.5, color=theme.OUTLINE)),
            hoverinfo="text", hovertext=[hover(str(v)) for v in marked[label]]))
    fig.update_xaxes(title_text="embedding PC 1", zeroline=False)
    fig.update_yaxes(title_text="embedding PC 2", zeroline=False)
    fig.update_layout(hovermode="closest", legend=dict(itemsizing="constant"), height=460)
    return styled(fig, title)
