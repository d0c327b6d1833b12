"""Trivial-predictor baselines beside a run's metrics: the majority class for classification metrics,
the mean predictor for error metrics, chance for ranking metrics.

A model scoring 0.67 accuracy where always answering the majority class scores 0.70 teaches nothing;
`baseline_metrics` puts that figure beside every metric the run reports (key ``baseline_<metric>``),
computed on the same scored rows (those with a truth value) from the run's prediction frame alone, so
every method gets it without method code. The constants are the best constant on the scored rows
(the majority class, the mean), i.e. a slightly optimistic bar for the model to clear.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

BASELINE_PREFIX = "baseline_"

HIGHER_IS_BETTER = frozenset({"accuracy", "balanced_accuracy", "f1", "precision", "recall", "auroc", "roc_auc",
                              "aupr", "test_precision", "test_recall", "r2"})
LOWER_IS_BETTER = frozenset({"mse", "mae", "rmse", "brier"})

BASELINE_WHAT = {"accuracy": "majority class", "balanced_accuracy": "majority class",
                 "f1": "majority class", "precision": "majority class", "recall": "majority class",
                 "test_precision": "majority class", "test_recall": "majority class",
                 "auroc": "chance", "roc_auc": "chance", "aupr": "positive rate",
                 "mse": "mean predictor", "mae": "mean predictor", "rmse": "mean predictor",
                 "brier": "mean predictor", "r2": "mean predictor"}
"""Which trivial predictor each metric's baseline is."""


def _labelled(predictions: pd.DataFrame) -> pd.Series:
    """The truth values of the scored rows (non-missing truth)."""
    if "truth" not in predictions.columns:
        return pd.Series([], dtype=float)
    return predictions["truth"].dropna()


def as_numbers(truth: pd.Series) -> np.ndarray | None:
    """The truths as floats, or None when they are class labels; numbers written as text ("0", "1") are
    numbers, as `xcore.methods.scoring` reads them, so every scored metric gets its baseline."""
    if pd.api.types.is_bool_dtype(truth) or pd.api.types.is_numeric_dtype(truth):
        return truth.to_numpy(dtype=float)
    converted = pd.to_numeric(truth, errors="coerce")
    return None if converted.isna().any() else converted.to_numpy(dtype=float)


def _class_metrics(truth: pd.Series) -> dict[str, float]:
    """Accuracy of always answering the majority class; binary 0/1 truths also get its precision,
    recall and F1 for the positive class 1."""
    labels = truth.astype(str)
    counts = labels.value_counts()
    out = {"accuracy": float(counts.iloc[0] / len(labels)), "balanced_accuracy": 1.0 / len(counts)}
    y = as_numbers(truth)
    if y is not None and set(np.unique(y)) <= {0.0, 1.0}:
        majority = float(pd.Series(y).mode().max())
        tp = float(np.sum(y == 1.0)) if majority == 1.0 else 0.0
        rate = float(np.mean(y == 1.0))
        precision = rate if majority == 1.0 else 0.0
        recall = 1.0 if majority == 1.0 and tp else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out |= {"precision": precision, "recall": recall, "f1": f1, "test_precision": precision,
                "test_recall": recall, "aupr": rate}
    return out


def _value_metrics(y: np.ndarray) -> dict[str, float]:
    """Errors of always predicting the mean of the scored truths (chance ranking for AUROC)."""
    mean = float(np.mean(y))
    mse = float(np.mean((y - mean) ** 2))
    return {"mse": mse, "rmse": math.sqrt(mse), "mae": float(np.mean(np.abs(y - mean))), "brier": mse,
            "r2": 0.0, "auroc": 0.5, "roc_auc": 0.5}


def baseline_metrics(predictions: pd.DataFrame, metrics: dict[str, float]) -> dict[str, float]:
    """``baseline_<name>`` for every metric in `metrics` that has a trivial-predictor baseline, computed
    on the rows of `predictions` with a truth value (empty when there are none)."""
    truth = _labelled(predictions)
    if truth.empty:
        return {}
    y = as_numbers(truth)
    table: dict[str, float] = {}
    if y is not None:
        if not np.isfinite(y).all():
            return {}
        table |= _value_metrics(y)
    if y is None or set(np.unique(y)) <= {0.0, 1.0} or len(np.unique(y)) <= 20 and np.allclose(y, np.round(y)):
        table |= _class_metrics(truth)
    return {BASELINE_PREFIX + k: table[k] for k in metrics if k in table and not k.startswith(BASELINE_PREFIX)}


def with_baselines(metrics: dict[str, float], predictions: pd.DataFrame) -> dict[str, float]:
    """`metrics` with the missing baselines added after them (existing entries win)."""
    return {**metrics, **{k: v for k, v in baseline_metrics(predictions, metrics).items() if k not in metrics}}


def better_than_baseline(name: str, value: float, baseline: float) -> bool | None:
    """Whether `value` beats its baseline (None for a metric with no known direction)."""
    if name in HIGHER_IS_BETTER:
        return value > baseline
    if name in LOWER_IS_BETTER:
        return value < baseline
    return None


def baseline_table(metrics: dict[str, float]) -> pd.DataFrame:
    """Each metric that has a trivial-predictor baseline beside it: metric, model, baseline, which
    baseline (majority class, mean predictor, chance) and whether the model beats it."""
    rows = []
    for name, value in metrics.items():
        base = metrics.get(BASELINE_PREFIX + name)
        if name.startswith(BASELINE_PREFIX) or base is None:
            continue
        beats = better_than_baseline(name, float(value), float(base))
        rows.append({"metric": name, "model": float(value), "baseline": float(base),
                     "baseline is": BASELINE_WHAT.get(name, ""),
                     "model beats it": "" if beats is None else ("yes" if beats else "no")})
    return pd.DataFrame(rows, columns=["metric", "model", "baseline", "baseline is", "model beats it"])


__all__ = ["BASELINE_PREFIX", "BASELINE_WHAT", "HIGHER_IS_BETTER", "LOWER_IS_BETTER", "baseline_metrics",
           "baseline_table", "better_than_baseline", "with_baselines"]
