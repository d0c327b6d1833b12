"""Plotly figures of the m-NLIL page (pure functions, no Streamlit): training losses."""

from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go

from xcore.viz.common import empty_figure, styled


def loss_curves_figure(curves: Mapping[str, Sequence[float]], y_title: str, x_title: str = "epoch",
                       title: str = "Training loss", mode: str = "lines") -> go.Figure:
    """One line per named loss curve (a cluster network, or the link-prediction model)."""
    fig = go.Figure()
    for name, curve in curves.items():
        fig.add_scatter(y=list(curve), mode=mode, name=name)
    if not fig.data:
        return empty_figure("no training curves", title)
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title)
    return styled(fig, title)
