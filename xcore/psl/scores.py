"""Prediction quality of PSL targets: errors for continuous truth, ranking figures for 0/1 truth."""

from __future__ import annotations

import numpy as np

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional

ERROR_METRICS: tuple[str, ...] = ("mse", "rmse", "mae")
"""Metrics where lower is better (continuous targets)."""
RANKING_METRICS: tuple[str, ...] = ("aupr", "auroc")


# ---------------------------------------------------------------------- metrics
def prediction_metrics(prediction: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """MSE, RMSE, MAE over atoms with a truth label; AUPR and AUROC too when the truth is 0/1."""
    p = np.asarray(prediction, dtype=np.float64)
    t = np.asarray(truth, dtype=np.float64)
    ok = np.isfinite(t)
    p, t = p[ok], t[ok]
    out = {"n": float(len(t))}
    if not len(t):
        return {**out, "mse": np.nan, "rmse": np.nan, "mae": np.nan, "aupr": np.nan, "auroc": np.nan}
    err = p - t
    out["mse"] = float(np.mean(err * err))
    out["rmse"] = float(np.sqrt(out["mse"]))
    out["mae"] = float(np.mean(np.abs(err)))
    binary = np.all((t == 0) | (t == 1))
    if binary and 0 < t.sum() < len(t):
        # start-up: scikit-learn is heavy and the PSL command scores continuous targets without it
        metrics = import_optional("sklearn.metrics")
        out["aupr"] = float(metrics.average_precision_score(t, p))
        out["auroc"] = float(metrics.roc_auc_score(t, p))
    else:
        out["aupr"] = out["auroc"] = np.nan
    return out


def metric_sense(metric: str) -> int:
    """+1 when higher is better (aupr, auroc), -1 when lower is better (mse, rmse, mae)."""
    if metric in ERROR_METRICS:
        return -1
    if metric in RANKING_METRICS:
        return 1
    raise XcoreError(f"unknown metric {metric!r}; use one of {', '.join(ERROR_METRICS + RANKING_METRICS)}")
