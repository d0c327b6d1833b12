"""Agreement between explainers and runs on the same data (DALEX Arena for relational explanations).

Every explainer of every run becomes one *column*; explanations are matched by their canonical
target text and items by their canonical item text. Per target and pair of columns: the top-k
overlap and Spearman's rank correlation over the items both explanations rank. Targets where the
columns disagree most come first.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from xcore.errors import ConfigError, XcoreError
from xcore.explain.types import Explanation, ExplanationSet
from xcore.methods.base import Run

AGREEMENT_COLUMNS: tuple[str, ...] = ("target", "a", "b", "k", "overlap", "spearman", "n_shared")
"""Columns of `agreement_frame`: one row per (target, pair of explainer columns)."""


def explainer_columns(runs: Sequence[Run], names: Sequence[str] | None = None) -> dict[str, ExplanationSet]:
    """Label -> explanation set for every explainer of every run; labels are unique and readable.

    A label is the explainer's registry name, prefixed by the run's name (`names[i]`, default
    ``run<i+1>``) when two runs have explainers of the same name (one method, two settings).
    """
    if len(runs) < 1:
        raise ConfigError("compare needs at least one run", field="runs")
    if names is not None and len(names) != len(runs):
        raise ConfigError(f"{len(names)} names for {len(runs)} runs", field="names")
    counts: dict[str, int] = {}
    for run in runs:
        for name in run.explanations:
            counts[name] = counts.get(name, 0) + 1
    out: dict[str, ExplanationSet] = {}
    for i, run in enumerate(runs):
        prefix = names[i] if names is not None else f"run{i + 1}"
        for name, exps in run.explanations.items():
            label = name if counts[name] == 1 else f"{prefix}/{name}"
            if label in out:
                raise ConfigError(f"two runs are both called {prefix!r}; name them apart", field="names")
            out[label] = exps
    if sum(len(s) > 0 for s in out.values()) < 2:
        raise XcoreError("compare needs at least two explainers with explanations (one run with two "
                         "explainers, or two runs)")
    return out


def check_same_data(runs: Sequence[Run]) -> None:
    """Raise `XcoreError` unless every run was made on the same data (same content fingerprint)."""
    prints = {r.fingerprint for r in runs}
    if len(prints) > 1:
        listed = ", ".join(f"{r.method} on {r.dataset or '?'} ({r.fingerprint[:10]})" for r in runs)
        raise XcoreError(f"the runs were made on different data, so their explanations cannot be matched: {listed}")


def ranked_texts(exp: Explanation) -> list[str]:
    """The item texts of `exp` in rank order, each kept once (its best rank)."""
    return list(dict.fromkeys(it.text for it in exp.items))


def top_k_overlap(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / min(k, |a|, |b|); NaN when either list is empty."""
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}", field="k")
    depth = min(k, len(a), len(b))
    if depth == 0:
        return math.nan
    return len(set(a[:k]) & set(b[:k])) / depth


def rank_correlation(a: Sequence[str], b: Sequence[str]) -> tuple[float, int]:
    """Spearman's rho between the ranks of the items both lists hold, and how many they share.

    NaN when fewer than two items are shared (a correlation needs two points).
    """
    pos_b = {t: i for i, t in enumerate(b)}
    shared = [(i, pos_b[t]) for i, t in enumerate(a) if t in pos_b]
    if len(shared) < 2:
        return math.nan, len(shared)
    ra, rb = np.array(shared, dtype=float).T
    rho = spearmanr(ra, rb).statistic
    return float(rho), len(shared)


def shared_targets(columns: dict[str, ExplanationSet]) -> list[str]:
    """Targets explained by at least two columns, in first-seen order."""
    seen: dict[str, int] = {}
    for exps in columns.values():
        for t in exps.targets:
            seen[t] = seen.get(t, 0) + 1
    return [t for t, n in seen.items() if n >= 2]


def agreement_frame(columns: dict[str, ExplanationSet], k: int = 5) -> pd.DataFrame:
    """One row per (target, pair of columns that both explain it): top-k overlap, Spearman, shared items."""
    rows: list[tuple[Any, ...]] = []
    ranked = {label: {e.target: ranked_texts(e) for e in exps} for label, exps in columns.items()}
    for target in shared_targets(columns):
        have = [label for label in columns if target in ranked[label]]
        for a, b in combinations(have, 2):
            ta, tb = ranked[a][target], ranked[b][target]
            rho, n = rank_correlation(ta, tb)
            rows.append((target, a, b, k, top_k_overlap(ta, tb, k), rho, n))
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS)).astype(
        {"k": "int64", "overlap": "float64", "spearman": "float64", "n_shared": "int64"})


def pair_summary(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per pair of columns: targets compared, mean top-k overlap, mean Spearman (over defined values)."""
    if agreement.empty:
        return pd.DataFrame(columns=["a", "b", "targets", "mean_overlap", "mean_spearman"])
    g = agreement.groupby(["a", "b"], sort=False)
    return pd.DataFrame({"targets": g.size(), "mean_overlap": g["overlap"].mean(),
                         "mean_spearman": g["spearman"].mean()}).reset_index()


def disagreements(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per target: mean overlap and Spearman over its pairs, the least agreeing targets first.

    Sorted by mean overlap (ascending), then mean Spearman (ascending, undefined last), then target.
    """
    if agreement.empty:
        return pd.DataFrame(columns=["target", "pairs", "mean_overlap", "mean_spearman", "min_overlap"])
    g = agreement.groupby("target", sort=False)
    out = pd.DataFrame({"pairs": g.size(), "mean_overlap": g["overlap"].mean(),
                        "mean_spearman": g["spearman"].mean(), "min_overlap": g["overlap"].min()}).reset_index()
    return out.sort_values(["mean_overlap", "mean_spearman", "target"], na_position="last",
                           kind="stable").reset_index(drop=True)


def top_items_table(columns: dict[str, ExplanationSet], target: str, k: int = 5) -> pd.DataFrame:
    """For one target: rank 1..k down, one column per explainer with its item text (blank where none)."""
    data: dict[str, list[str]] = {}
    for label, exps in columns.items():
        texts = ranked_texts(exps[target])[:k] if target in exps else []
        data[label] = texts + [""] * (k - len(texts))
    frame = pd.DataFrame(data)
    frame.insert(0, "rank", np.arange(1, k + 1))
    return frame


def agreement_figures(agreement: pd.DataFrame) -> list:
    """Plotly figures over all targets: top-k overlap per pair (box), overlap against Spearman (scatter) and,
    for three or more explainers, the matrix of mean top-k overlaps (heatmap)."""
    import plotly.graph_objects as go

    from xcore.viz.common import styled

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


def compare_runs(runs: Sequence[Run], k: int = 5, names: Sequence[str] | None = None
                 ) -> tuple[dict[str, ExplanationSet], pd.DataFrame]:
    """Check the runs share data, then the explainer columns and their agreement frame."""
    check_same_data(runs)
    columns = explainer_columns(runs, names)
    return columns, agreement_frame(columns, k)
