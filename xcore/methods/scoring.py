"""Quality figures of any method's prediction frame (truth against prediction), with scikit-learn.

One function for every method, so a held-out evaluation (`xcore.methods.evaluate`) scores ESMS,
Markov logic, the classifier, DRM and m-NLIL the same way: probabilities of a 0/1 truth get AUROC,
AUPR, MSE and accuracy at 0.5; numeric truths in general get MSE and MAE; class labels get accuracy,
balanced accuracy and macro F1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics as skm

from xcore.methods.baselines import as_numbers


def score_predictions(predictions: pd.DataFrame) -> dict[str, float]:
    """Quality figures of the rows with a truth value (empty when none has one)."""
    if "truth" not in predictions.columns or "prediction" not in predictions.columns:
        return {}
    scored = predictions[predictions["truth"].notna() & predictions["prediction"].notna()]
    if scored.empty:
        return {}
    y, p = as_numbers(scored["truth"]), as_numbers(scored["prediction"])
    out: dict[str, float] = {"n_scored": float(len(scored))}
    if y is not None and p is not None:
        out["mse"] = float(skm.mean_squared_error(y, p))
        out["mae"] = float(skm.mean_absolute_error(y, p))
        binary = set(np.unique(y)) <= {0.0, 1.0}
        if binary and p.min() >= 0.0 and p.max() <= 1.0:
            out["accuracy"] = float(skm.accuracy_score(y, p >= 0.5))
            if len(np.unique(y)) == 2:
                out["auroc"] = float(skm.roc_auc_score(y, p))
                out["aupr"] = float(skm.average_precision_score(y, p))
        return out
    truth, pred = scored["truth"].astype(str), scored["prediction"].astype(str)
    out["accuracy"] = float(skm.accuracy_score(truth, pred))
    out["balanced_accuracy"] = float(skm.balanced_accuracy_score(truth, pred))
    out["f1"] = float(skm.f1_score(truth, pred, average="macro"))
    return out
