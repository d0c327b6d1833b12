"""Plotly figures for the PLKB classifier's paper experiments (pure functions, no Streamlit).

Inputs are the frames of `xcore.plkb.experiments`: `shap_agreement_by_k` (Fig. 3a/b),
`knowledge_curve` / `random_pollution_curve` (Fig. 4a/b), and a query-time table (Fig. 2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xcore.viz import theme
from xcore.viz.common import check_frame, empty_figure, styled


def shap_agreement_figure(agreement: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Fig. 3a: per k, the share of rows whose k-feature explanation and SHAP's top-k share at
    least j features (one bar group per k, one bar per j = 1..k)."""
    df = check_frame(agreement, ["k", "overlap", "at_least"], "agreement", numeric=["k", "overlap", "at_least"])
    title = title if title is not None else "Same features as SHAP's top-k"
    df = df[df["overlap"] >= 1]
    if df.empty:
        return empty_figure("no explanations to compare", title)
    fig = go.Figure()
    for i, j in enumerate(sorted(df["overlap"].unique())):
        d = df[df["overlap"] == j].sort_values("k")
        fig.add_trace(go.Bar(x=[f"k={int(k)}" for k in d["k"]], y=d["at_least"], name=f">= {int(j)} in common",
                             marker=dict(color=theme.series_colour(i)),
                             hovertemplate=f"%{{x}}: %{{y:.0%}} of rows share >= {int(j)}<extra></extra>"))
    fig.update_layout(barmode="group", yaxis=dict(title="share of rows", tickformat=".0%", range=[0, 1]),
                      xaxis=dict(title="explanation length"))
    return styled(fig, title)


def feature_choice_figure(frequency: pd.DataFrame, k: int, title: str | None = None) -> go.Figure:
    """Fig. 3b: for one k, how often each feature is in our explanation and in SHAP's top-k."""
    df = check_frame(frequency, ["k", "method", "feature", "share"], "frequency", numeric=["k", "share"])
    title = title if title is not None else f"How often each feature is chosen (k={k})"
    df = df[df["k"] == k]
    if df.empty:
        return empty_figure(f"no explanations of length {k}", title)
    fig = go.Figure()
    for i, (method, d) in enumerate(df.groupby("method", sort=False)):
        fig.add_trace(go.Bar(x=d["feature"].astype(str), y=d["share"], name=str(method),
                             marker=dict(color=theme.series_colour(i)),
                             hovertemplate="%{x}: %{y:.0%}<extra>" + str(method) + "</extra>"))
    fig.update_layout(barmode="group", yaxis=dict(title="share of rows", tickformat=".0%", range=[0, 1]),
                      xaxis=dict(title="feature"))
    return styled(fig, title)


def kb_curve_figure(curves: dict[str, pd.DataFrame], x_title: str = "clauses added",
                    title: str | None = None, metric: str = "f1") -> go.Figure:
    """Fig. 4: F1 (or `metric`) against the number of clauses added, one line per named curve
    (e.g. {"true clauses": knowledge_curve(...), "random clauses": random_pollution_curve(...)})."""
    title = title if title is not None else "F1 as clauses are added to the KB"
    if not curves:
        return empty_figure("no curves", title)
    fig = go.Figure()
    for i, (name, curve) in enumerate(curves.items()):
        d = check_frame(curve, ["n_added", metric], name, numeric=["n_added", metric])
        d = d.groupby("n_added", as_index=False)[metric].agg(["mean", "std"]).fillna(0.0)
        fig.add_trace(go.Scatter(x=d["n_added"], y=d["mean"], mode="lines+markers", name=name,
                                 line=dict(color=theme.series_colour(i)),
                                 error_y=dict(type="data", array=d["std"], visible=bool((d["std"] > 0).any())),
                                 hovertemplate="%{x} added: " + metric + " %{y:.3f}<extra>" + name + "</extra>"))
    fig.update_layout(xaxis=dict(title=x_title), yaxis=dict(title=metric.upper() if metric == "f1" else metric,
                                                            range=[0, 1.02]))
    return styled(fig, title)


def query_time_figure(times: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Fig. 2: seconds per query against KB size (clauses), one line per solver, log-log axes,
    with the fitted growth exponent (time ~ size^b) in each legend entry."""
    df = check_frame(times, ["solver", "clauses", "seconds"], "times", numeric=["clauses", "seconds"])
    title = title if title is not None else "Query time against KB size"
    if df.empty:
        return empty_figure("no timings", title)
    fig = go.Figure()
    for i, (solver, d) in enumerate(df.groupby("solver", sort=False)):
        d = d.sort_values("clauses")
        ok = (d["clauses"] > 0) & (d["seconds"] > 0)
        b = (np.polyfit(np.log(d.loc[ok, "clauses"]), np.log(d.loc[ok, "seconds"]), 1)[0]
             if ok.sum() >= 2 else float("nan"))
        fig.add_trace(go.Scatter(x=d["clauses"], y=d["seconds"], mode="lines+markers",
                                 name=f"{solver} (time ~ size^{b:.2f})", line=dict(color=theme.series_colour(i)),
                                 hovertemplate="%{x:,} clauses: %{y:.3g} s<extra>" + str(solver) + "</extra>"))
    fig.update_layout(xaxis=dict(title="KB size (clauses; variables grow alike)", type="log"),
                      yaxis=dict(title="seconds per query", type="log"))
    return styled(fig, title)


__all__ = ["feature_choice_figure", "kb_curve_figure", "query_time_figure", "shap_agreement_figure"]
