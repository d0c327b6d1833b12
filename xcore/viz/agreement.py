"""Figures of explainer agreement (xcore.compare's frames): overlap per pair, overlap against rank
correlation, and the matrix of mean overlaps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xcore.compare import pair_summary
from xcore.viz.common import styled


def agreement_figures(agreement: pd.DataFrame) -> list:
    """Plotly figures over all targets: top-k overlap per pair (box), overlap against Spearman (scatter) and,
    for three or more explainers, the matrix of mean top-k overlaps (heatmap)."""
    if agreement.empty:
        return []
    pairs = agreement["a"] + " vs " + agreement["b"]
    k = int(agreement["k"].iloc[0])
    box = go.Figure()
    scatter = go.Figure()
    for name in dict.fromkeys(pairs):
        sel = agreement[pairs == name]
        box.add_trace(go.Box(y=sel["overlap"], name=name, boxpoints="all", jitter=0.4, pointpos=0,
                             text=sel["target"], hovertemplate="%{text}<br>overlap %{y:.2f}<extra></extra>"))
        scatter.add_trace(go.Scatter(x=sel["overlap"], y=sel["spearman"], mode="markers", name=name,
                                     text=sel["target"],
                                     hovertemplate="%{text}<br>overlap %{x:.2f}, rho %{y:.2f}<extra></extra>"))
    box.update_layout(yaxis_title=f"top-{k} overlap", yaxis_range=[-0.05, 1.05], showlegend=False)
    # the legend (one entry per pair) goes below the plot: at its side it covered the points in a narrow column
    scatter.update_layout(xaxis_title=f"top-{k} overlap", yaxis_title="Spearman rho", xaxis_range=[-0.05, 1.05],
                          yaxis_range=[-1.05, 1.05], showlegend=True)
    styled(box, f"Top-{k} overlap per target")
    styled(scatter, "Overlap against rank correlation (shared items)")
    figs = [box, scatter]
    labels = list(dict.fromkeys([*agreement["a"], *agreement["b"]]))
    if len(labels) >= 3:
        index = {name: i for i, name in enumerate(labels)}
        matrix = np.eye(len(labels))
        summary = pair_summary(agreement)
        ia, ib = summary["a"].map(index).to_numpy(), summary["b"].map(index).to_numpy()
        matrix[ia, ib] = matrix[ib, ia] = summary["mean_overlap"].to_numpy()
        heat = go.Figure(go.Heatmap(z=matrix, x=labels, y=labels, zmin=0, zmax=1, colorscale="Blues",
                                    text=np.round(matrix, 2), texttemplate="%{text}",
                                    hovertemplate="%{y} vs %{x}<br>mean overlap %{z:.2f}<extra></extra>"))
        heat.update_layout(yaxis_autorange="reversed")
        styled(heat, f"Mean top-{k} overlap between explainers")
        figs.append(heat)
    return figs
