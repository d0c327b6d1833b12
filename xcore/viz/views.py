"""Figures of the shared page views: additive waterfalls, the global view of a run and model quality.

Pure plotly builders (no Streamlit). `quality_figures` picks the views that fit a run's predictions:
classes (confusion matrix, ROC and precision-recall), probabilities of 0/1 truths (calibration,
ROC) or values (predicted against true, residuals).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from xcore.explain.render import short_numbers
from xcore.explain.types import Explanation
from xcore.methods.baselines import baseline_table  # noqa: F401  (re-exported: the pages' import path)
from xcore.optional_deps import import_optional
from xcore.viz import theme
from xcore.viz.common import FigureInputError, empty_figure, fmt, styled, truncate

MAX_WATERFALL_STEPS = 12
"""Bars of a waterfall before the remaining items are folded into one "other" step."""


def base_value(exp: Explanation) -> float | None:
    """The value an additive explanation starts from (Shapley's v(∅), SHAP's expected value), if known."""
    for key in ("base_value", "v_empty", "expected_log_odds", "expected"):
        v = exp.meta.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
            return float(v)
    return None


def is_additive(exp: Explanation) -> bool:
    """True when the scores add up from a base value to the prediction (Shapley/SHAP-style)."""
    return base_value(exp) is not None and exp.score_spec is not None and exp.score_spec.signed


def waterfall_figure(exp: Explanation, k: int = MAX_WATERFALL_STEPS, label_width: int = 40,
                     title: str | None = None) -> go.Figure:
    """From the base value, each of the top-`k` contributions in rank order, the rest as "other",
    to the total; raises `FigureInputError` for an explanation without a base value."""
    base = base_value(exp)
    if base is None:
        raise FigureInputError("waterfall_figure needs an additive explanation with a base value in its meta")
    title = title if title is not None else f"From the base value to the prediction for {truncate(exp.target, 60)}"
    if not exp.items:
        return empty_figure("this explanation has no items", title)
    top = exp.top(k)
    rest = sum(it.score for it in exp.items[len(top):])
    labels = ["base value"] + [f"{i}. {truncate(it.natural or it.text, label_width)}" for i, it in enumerate(top, 1)]
    values = [base] + [it.score for it in top]
    measures = ["absolute"] + ["relative"] * len(top)
    if len(exp.items) > len(top):
        labels.append(f"other ({len(exp.items) - len(top)})")
        values.append(rest)
        measures.append("relative")
    labels.append("total")
    values.append(0.0)
    measures.append("total")
    fig = go.Figure(go.Waterfall(
        orientation="h", y=labels, x=values, measure=measures, name="contribution",
        increasing=dict(marker=dict(color=theme.UP)), decreasing=dict(marker=dict(color=theme.DOWN)),
        totals=dict(marker=dict(color=theme.EXPLAINABLE)), connector=dict(line=dict(color=theme.EDGE)),
        hovertext=[f"{lab}: {fmt(v)}" for lab, v in zip(labels, values)], hoverinfo="text"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    label = exp.score_spec.unit if exp.score_spec is not None and exp.score_spec.unit else "value"
    fig.update_xaxes(title_text=label)
    fig.update_layout(height=160 + 26 * len(labels), showlegend=False)
    return styled(fig, title)


def global_importance_figure(frame: pd.DataFrame, k: int = 5, top: int = 15, label_width: int = 60,
                             title: str | None = None) -> go.Figure:
    """Bars of how often each rule / clause is among the top-`k` reasons (from `global_importance`),
    coloured by the direction most of its items push predictions (grey when mixed or undirected: the
    items' `direction` field decides, never the score's sign); hover gives mean |score|."""
    need = {"group", "top_k_share", "mean_abs_score", "share_up", "share_down", "explanations"}
    if not isinstance(frame, pd.DataFrame) or not need <= set(frame.columns):
        raise FigureInputError(f"global_importance_figure needs a frame with columns {sorted(need)}")
    title = title if title is not None else f"Which reasons explain most predictions (share in the top {k})"
    if frame.empty:
        return empty_figure("no explanation items in this run", title)
    part = frame.head(top)
    labels = [f"{i}. {truncate(short_numbers(g), label_width)}" for i, g in enumerate(part["group"], start=1)]
    colours = [theme.UP if u > 0.5 else theme.DOWN if d > 0.5 else theme.UNKNOWN
               for u, d in zip(part["share_up"], part["share_down"])]
    fig = go.Figure(go.Bar(
        x=part["top_k_share"].tolist(), y=labels, orientation="h", marker=dict(color=colours), name="share",
        hovertext=[f"{g}<br>in the top {k} of {fmt(s * 100)}% of explanations; appears in {n:,}; "
                   f"mean |score| {fmt(m)}; " + _direction_share(u, d)
                   for g, s, n, m, u, d in zip(part["group"], part["top_k_share"], part["explanations"],
                                               part["mean_abs_score"], part["share_up"], part["share_down"])],
        hoverinfo="text"))
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed", automargin=True)
    fig.update_xaxes(title_text=f"share of explanations with it in the top {k}", range=[0, 1])
    fig.update_layout(height=140 + 28 * len(labels), showlegend=False)
    return styled(fig, title)


GLOBAL_TABLE_COLUMNS = ("top_k_share", "explanations", "mean_abs_score", "share_up", "share_down", "group")
"""The global view's table: the numbers first (a narrow column cut them off behind the long rule text)."""


def global_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The global view's table of `global_importance`: numbers first, rounded, the rule text last and
    with its numbers shortened; columns missing from `frame` are left out."""
    cols = [c for c in GLOBAL_TABLE_COLUMNS if c in frame.columns]
    out = frame[cols].copy()
    if "group" in out:
        out["group"] = out["group"].map(short_numbers)
    return out.round(4)


def model_table(summary: Explanation) -> pd.DataFrame:
    """The model beside the global view: rank, weight (score), explainable, then the rule text with its
    numbers shortened (the weight column was hidden behind the text in a narrow column)."""
    f = summary.to_frame()
    return pd.DataFrame({"rank": f["rank"], "score": f["score"].astype(float).round(4),
                         "explainable": f["explainable"], "text": f["text"].map(short_numbers)})


def _direction_share(up: float, down: float) -> str:
    """How a group's items push predictions, in words (no direction when none of them has one)."""
    if up == 0 and down == 0:
        return "no direction (the score says neither up nor down)"
    return f"pushes up in {fmt(up * 100)}% and down in {fmt(down * 100)}% of its items"


# ---------------------------------------------------------------------- model quality
def prediction_kind(predictions: pd.DataFrame) -> str:
    """"classes" (labels), "probability" (values in [0, 1] against 0/1 truths), "value", or "none"."""
    if "truth" not in predictions.columns or predictions["truth"].isna().all():
        return "none"
    if not pd.api.types.is_numeric_dtype(predictions["prediction"]):
        return "classes"
    truth = predictions["truth"].dropna().astype(float)
    if set(truth.unique()) <= {0.0, 1.0}:
        return "probability"
    return "value"


def confusion_figure(truth: pd.Series, prediction: pd.Series, title: str | None = "Confusion matrix") -> go.Figure:
    """Counts of (true class, predicted class), with the share of each true class on hover."""
    labels = sorted(set(map(str, truth)) | set(map(str, prediction)))
    # sklearn: only when a run's quality figures are drawn (the pages import xcore.viz without it)
    m = import_optional("sklearn.metrics").confusion_matrix(truth.astype(str), prediction.astype(str), labels=labels)
    share = m / np.maximum(m.sum(axis=1, keepdims=True), 1)
    fig = go.Figure(go.Heatmap(
        z=m, x=[f"predicted {c}" for c in labels], y=[f"true {c}" for c in labels], colorscale="Blues",
        text=m, texttemplate="%{text}", showscale=False,
        customdata=share, hovertemplate="%{y}, %{x}: %{z} (%{customdata:.0%} of the true class)<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return styled(fig, title)


def roc_pr_figure(truth: np.ndarray, score: np.ndarray, title: str | None = "ROC and precision-recall") -> go.Figure:
    """ROC curve (with AUC) and precision-recall curve (with average precision) side by side."""
    metrics = import_optional("sklearn.metrics")  # sklearn: only when a run's quality figures are drawn
    truth = np.asarray(truth, dtype=bool)
    score = np.asarray(score, dtype=float)
    if truth.all() or not truth.any():
        return empty_figure("ROC and precision-recall need both classes among the truths", title)
    fpr, tpr, _ = metrics.roc_curve(truth, score)
    prec, rec, _ = metrics.precision_recall_curve(truth, score)
    auc, ap = metrics.roc_auc_score(truth, score), metrics.average_precision_score(truth, score)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(f"ROC (AUC {auc:.3f})", f"Precision-recall (AP {ap:.3f})"))
    fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", name="ROC", line=dict(color=theme.series_colour(0))), 1, 1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line=dict(color=theme.EDGE, dash="dash")),
                  1, 1)
    fig.add_trace(go.Scatter(x=rec, y=prec, mode="lines", name="precision-recall",
                             line=dict(color=theme.series_colour(1))), 1, 2)
    fig.update_xaxes(title_text="false positive rate", row=1, col=1)
    fig.update_yaxes(title_text="true positive rate", row=1, col=1)
    fig.update_xaxes(title_text="recall", row=1, col=2)
    fig.update_yaxes(title_text="precision", row=1, col=2)
    return styled(fig, title)


def calibration_figure(truth: np.ndarray, probability: np.ndarray, n_bins: int = 10,
                       title: str | None = "Calibration: predicted probability against observed frequency") -> go.Figure:
    """Reliability curve (uniform bins) against the diagonal, point size = atoms in the bin."""
    truth = np.asarray(truth, dtype=float)
    p = np.clip(np.asarray(probability, dtype=float), 0, 1)
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    mean_p = np.bincount(bins, p, minlength=n_bins) / np.maximum(count, 1)
    freq = np.bincount(bins, truth, minlength=n_bins) / np.maximum(count, 1)
    keep = count > 0
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect", line=dict(color=theme.EDGE, dash="dash")))
    fig.add_trace(go.Scatter(
        x=mean_p[keep], y=freq[keep], mode="lines+markers", name="model",
        marker=dict(size=6 + 14 * np.sqrt(count[keep] / max(count.max(), 1)), color=theme.series_colour(0)),
        hovertext=[f"mean predicted {a:.3f}, observed {b:.3f}, {c:,} atoms" for a, b, c in
                   zip(mean_p[keep], freq[keep], count[keep])], hoverinfo="text"))
    fig.update_xaxes(title_text="mean predicted probability", range=[0, 1])
    fig.update_yaxes(title_text="observed frequency", range=[0, 1])
    return styled(fig, title)


def residual_figure(truth: np.ndarray, prediction: np.ndarray,
                    title: str | None = "Predicted against true values, and residuals") -> go.Figure:
    """Scatter of predicted vs true (with the diagonal) and a histogram of residuals (predicted - true)."""
    truth = np.asarray(truth, dtype=float)
    pred = np.asarray(prediction, dtype=float)
    ok = np.isfinite(truth) & np.isfinite(pred)
    truth, pred = truth[ok], pred[ok]
    if not len(truth):
        return empty_figure("no predictions with a truth value", title)
    res = pred - truth
    fig = make_subplots(rows=1, cols=2, subplot_titles=(f"MSE {np.mean(res ** 2):.4f}, MAE {np.mean(np.abs(res)):.4f}",
                                                        f"residuals (mean {np.mean(res):+.4f})"))
    lo, hi = float(min(truth.min(), pred.min())), float(max(truth.max(), pred.max()))
    fig.add_trace(go.Scatter(x=truth, y=pred, mode="markers", name="prediction",
                             marker=dict(color=theme.series_colour(0), size=5, opacity=0.6)), 1, 1)
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="perfect",
                             line=dict(color=theme.EDGE, dash="dash")), 1, 1)
    fig.add_trace(go.Histogram(x=res, name="residual", marker=dict(color=theme.HISTOGRAM), nbinsx=30), 1, 2)
    fig.update_xaxes(title_text="true value", row=1, col=1)
    fig.update_yaxes(title_text="predicted", row=1, col=1)
    fig.update_xaxes(title_text="predicted − true", row=1, col=2)
    fig.update_layout(showlegend=False)
    return styled(fig, title)


def quality_figures(predictions: pd.DataFrame, positive: str | None = None) -> list[tuple[str, go.Figure]]:
    """The model-quality figures that fit a run's predictions frame (target, prediction, truth, ...)."""
    kind = prediction_kind(predictions)
    labelled = predictions.dropna(subset=["truth"]) if "truth" in predictions.columns else predictions
    if kind == "classes":
        out = [("confusion", confusion_figure(labelled["truth"], labelled["prediction"]))]
        classes = sorted(set(map(str, labelled["truth"])) | set(map(str, labelled["prediction"])))
        pos = positive if positive is not None else (classes[-1] if classes else None)
        if "mid" in labelled.columns and pos is not None and len(classes) == 2:
            out.append(("roc", roc_pr_figure(labelled["truth"].astype(str).to_numpy() == str(pos),
                                             labelled["mid"].to_numpy(dtype=float))))
        return out
    if kind == "probability":
        t = labelled["truth"].to_numpy(dtype=float)
        p = labelled["prediction"].to_numpy(dtype=float)
        return [("calibration", calibration_figure(t, p)), ("roc", roc_pr_figure(t == 1.0, p))]
    if kind == "value":
        return [("residuals", residual_figure(labelled["truth"].to_numpy(dtype=float),
                                              labelled["prediction"].to_numpy(dtype=float)))]
    return []


__all__ = ["GLOBAL_TABLE_COLUMNS", "base_value", "baseline_table", "global_table", "model_table",
           "calibration_figure", "confusion_figure", "global_importance_figure", "is_additive", "prediction_kind",
           "quality_figures", "residual_figure", "roc_pr_figure", "waterfall_figure"]
