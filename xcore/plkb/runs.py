"""A classifier run: hold out a seeded share of the table's labelled rows, fit on the rest, predict and
explain the held-out rows, so the figures a page shows are held out."""

from __future__ import annotations

import copy
import time

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from xcore.data.dataset import RelationalDataset
from xcore.methods.base import Run
from xcore.methods.driver import explain, fitted_for
from xcore.methods.evaluate import Holdout, held_out_parts
from xcore.plkb.estimator import PLKBEstimator
from xcore.plkb.explainers import EXPLAINERS
from xcore.plkb.explainers.rows import targets_of
from xcore.plkb.scores import DECISIVE, MODEL_SHAP
from xcore.plkb.settings import PLKBSettings
from xcore.runtime import Progress, scaled

MODEL_SHAP_ROWS = 20
"""Rows whose Shapley values of the user's model a run computes up front (others on demand)."""


def held_out_split(dataset: RelationalDataset,
                   settings: PLKBSettings) -> tuple[RelationalDataset, RelationalDataset]:
    """(training, test) parts of the labelled rows: above `max_rows`, a seeded sample of that many rows
    first; `test_fraction` of them held out (seeded, stratified where possible, `held_out_parts`)."""
    est = settings.estimator()
    units = est.units(dataset)
    if len(units) > settings.max_rows:  # interactive size: the run works on a seeded sample
        keep = units.sample(settings.max_rows, random_state=settings.seed).sort_index()
        _, dataset = est.holdout(dataset, keep["unit"].tolist())
        units = keep.reset_index(drop=True)
    positions = held_out_parts(units, Holdout(settings.test_fraction, settings.seed))[0]
    return est.holdout(dataset, units["unit"].iloc[positions].tolist())


def held_out_metrics(est: PLKBEstimator, predictions: pd.DataFrame) -> dict[str, float]:
    """Accuracy, F1, precision, recall (positive class) and ROC AUC of the held-out predictions (scikit-learn)."""
    clf = est.classifier_
    truth = clf.binary_labels(est.y_test_)
    pred = (predictions["prediction"].astype(str) == str(clf.classes_[1])).to_numpy()
    out = {"accuracy": float(accuracy_score(truth, pred)),
           "f1": float(f1_score(truth, pred, zero_division=0)),
           "precision": float(precision_score(truth, pred, zero_division=0)),
           "recall": float(recall_score(truth, pred, zero_division=0))}
    if 0 < truth.sum() < len(truth):
        out["roc_auc"] = float(roc_auc_score(truth, predictions["mid"].to_numpy(dtype=np.float64)))
    return out


def run(dataset: RelationalDataset, settings: PLKBSettings, progress: Progress | None = None,
        estimator: PLKBEstimator | None = None) -> Run:
    """Fit on the training part (or reuse `estimator`, a cached fit of the same model on the same part),
    predict the held-out rows, explain the first `explain_rows` of them through the explain driver."""
    t0 = time.perf_counter()
    train, test = held_out_split(dataset, settings)
    fitted = fitted_for(settings, train, scaled(progress, 0.0, 0.5), estimator)
    est = copy.copy(fitted)  # the held-out rows go on this run's copy, never on a shared fit
    est.X_test_, est.y_test_ = est.features(test.tabular), test.tabular[settings.label].astype(str)
    if est.user_model_ is not None:  # the user's model is explained on every row, held-out ones included
        est.user_table_ = dataset.tabular
    t1 = time.perf_counter()
    preds = est.predict(progress=scaled(progress, 0.5, 0.6))
    exps = explain(est, EXPLAINERS[DECISIVE], test, progress=scaled(progress, 0.6, 0.9), predictions=preds)
    explanations = {DECISIVE: exps}
    if est.user_model_ is not None:  # the user's own model: its Shapley values for the first test rows
        rows = targets_of(est, test, None)[:MODEL_SHAP_ROWS]
        explanations[MODEL_SHAP] = explain(est, EXPLAINERS[MODEL_SHAP], test, targets=rows,
                                           progress=scaled(progress, 0.9, 1.0), predictions=preds)
    t2 = time.perf_counter()
    return Run(method="plkb", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=explanations, summary=est.kb_summary(), metrics=held_out_metrics(est, preds),
               timings={"fit": t1 - t0, "explain": t2 - t1}, dataset=dataset.name, model=est)
