"""Plotly figures of the deep relational machine's page (pure functions, no Streamlit): an instance's
Hamming neighbourhood projected to 2-D, and the fold networks' training losses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from xcore.viz.common import check_frame, empty_figure, styled


def pca_2d(X: np.ndarray) -> np.ndarray:
    """The rows of X projected on their first two principal axes (zeros when they do not vary)."""
    X = np.asarray(X, dtype=float)
    Xc = X - X.mean(axis=0) if len(X) else X
    if len(X) < 2 or not np.abs(Xc).sum() > 0:
        return np.zeros((len(X), 2))
    u, s, _ = np.linalg.svd(Xc, full_matrices=False)
    xy = u[:, :2] * s[:2]
    return np.hstack([xy, np.zeros((len(xy), 1))]) if xy.shape[1] == 1 else xy


def neighbourhood_frame(X: np.ndarray, examples: list[str], predicted: list[int]) -> pd.DataFrame:
    """The instance (first row) and its neighbours: 2-D PCA coordinates of their feature vectors, name,
    predicted class and role."""
    xy = pca_2d(X)
    return pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "example": list(examples),
                         "predicted class": [str(int(p)) for p in predicted],
                         "role": ["instance"] + ["neighbour"] * (len(examples) - 1)})


def neighbourhood_figure(frame: pd.DataFrame, radius: int, title: str | None = None) -> go.Figure:
    """The neighbours and the instance in 2-D, coloured by predicted class, the instance marked."""
    df = check_frame(frame, ["x", "y", "example", "predicted class", "role"], "neighbourhood", numeric=["x", "y"])
    title = title if title is not None else (f"Neighbourhood (Hamming ≤ {radius}): {len(df) - 1} training "
                                             "instances")
    if df.empty:
        return empty_figure("no instance to show", title)
    fig = px.scatter(df, x="x", y="y", color="predicted class", symbol="role", hover_name="example")
    return styled(fig, title)


def fold_loss_figure(curves: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Training loss per epoch of each fold's network (columns fold, epoch, training loss)."""
    df = check_frame(curves, ["fold", "epoch", "training loss"], "curves", numeric=["epoch", "training loss"])
    title = title if title is not None else ("Training loss of each fold's network (retrained on all its training "
                                             "data until it reaches the validation-time loss)")
    if df.empty:
        return empty_figure("no training curves", title)
    return styled(px.line(df, x="epoch", y="training loss", color="fold"), title)
