"""A DRM run: default settings from the data, the held-out fold (through the shared splits; every fold,
one DRM each, on small data), fit on the rest, predict and explain the held-out examples."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.drm.cross_fit import CrossFittedDRM, cross_fits
from xcore.drm.estimator import DRMEstimator
from xcore.drm.explainers import FIDELITY, FidelityExplainer, StructuredExplainer
from xcore.drm.folds import fold_count, fold_parts
from xcore.drm.problem import target_predicate
from xcore.drm.relevance import default_relevance
from xcore.drm.settings import DRMSettings
from xcore.explain.types import ExplanationSet
from xcore.methods.base import Explainer, Run
from xcore.methods.driver import explain, fitted_for, with_settings
from xcore.runtime import Progress, scaled

EXPLAINERS: dict[str, Explainer] = {FIDELITY: FidelityExplainer(), StructuredExplainer.name: StructuredExplainer()}


def default_neighbours(n: int) -> int:
    """Training instances each neighbourhood holds by default: half the examples, between 4 and 30.

    With hundreds of random features almost no training instance lies within the paper's Hamming
    radius 5 or 10 (99.5% of 80 random trains have none), and an empty neighbourhood leaves fidelity
    undefined; 30 neighbours recover a planted rule in most explanations (issue 31)."""
    return int(min(30, max(4, n // 2)))


def default_settings(dataset: RelationalDataset) -> DRMSettings:
    """Default settings; the paper's relevance levels when the data has their predicates; neighbourhoods
    widened from the paper's radius 5 until they hold `default_neighbours` training instances."""
    target = target_predicate(dataset)
    n = len(dataset.truth(target)) if target else 0
    names = {p.name for p in dataset.predicates}
    settings = DRMSettings(relevance=default_relevance(names), min_neighbours=default_neighbours(n),
                           fold_predicate="cv_fold" if "cv_fold" in names else "")
    folds, _ = fold_count(dataset, settings)  # the form shows the folds that run (capped by the smallest class)
    return settings.replace(folds=min(max(folds, 2), 50))


def held_out_units(estimator: DRMEstimator, data: RelationalDataset) -> tuple[list[str], int]:
    """(the run's held-out examples, the number of folds): the first of `fold_parts`."""
    parts = fold_parts(estimator, data)
    return parts[0], len(parts)


def run_metrics(models: list[DRMEstimator], preds: pd.DataFrame, fid: ExplanationSet, folds: int) -> dict[str, float]:
    """Held-out accuracy of the network and the linear baseline, sizes (the mean over fold models of a
    cross-fitted run), and the explanations' figures."""
    truth = preds["truth"].to_numpy(dtype=float)
    labelled = ~np.isnan(truth)
    metrics = {"accuracy": float(np.mean(preds["prediction"].to_numpy()[labelled] == truth[labelled])),
               "linear_accuracy": float(np.mean((preds["linear_probability"].to_numpy()[labelled] >= 0.5)
                                                == truth[labelled])),
               "features": float(np.mean([len(m.features_) for m in models])),
               "network_inputs": float(np.mean([len(m.inputs_) for m in models])),
               "folds": float(folds), "examples": float(np.mean([len(m.X_) for m in models])),
               "test_examples": float(labelled.sum()), "cross_fitted": float(len(models) > 1)}
    tops = [e.items[0].score for e in fid if e.items]
    if len(fid):
        metrics["mean_neighbours"] = float(np.mean([e.meta["neighbours"] for e in fid]))
        metrics["fidelity_undefined"] = float(np.mean([not e.meta["fidelity_defined"] for e in fid]))
    if tops:
        metrics["mean_fidelity"] = float(np.mean(tops))
        metrics["relevance_changes_choice"] = float(np.mean([bool(e.meta.get("relevance_changes_choice"))
                                                             for e in fid]))
    return metrics


def fitted_model(dataset: RelationalDataset, settings: DRMSettings, progress: Progress | None,
                 estimator: DRMEstimator | CrossFittedDRM | None) -> tuple[DRMEstimator | CrossFittedDRM,
                                                                          RelationalDataset, int]:
    """(the fitted model, the data it predicts, the folds): on small data one DRM per fold, predicting every
    example out of fold (`cross_fit`); else the first fold held out and one DRM fitted on the rest.
    `estimator` is a cached fit of the same model on the same data."""
    if cross_fits(dataset):
        model = with_settings(estimator, settings) if estimator is not None else \
            CrossFittedDRM(settings).fit(dataset, progress=progress)
        assert isinstance(model, CrossFittedDRM)
        return model, dataset, len(model.folds_)
    first = DRMEstimator(settings)
    test_units, folds = held_out_units(first, dataset)
    train, test = first.holdout(dataset, test_units)
    fitted = fitted_for(settings, train, progress, estimator)
    assert isinstance(fitted, DRMEstimator)
    return fitted, test, folds


def run(dataset: RelationalDataset, settings: DRMSettings, progress: Progress | None = None,
        estimator: DRMEstimator | CrossFittedDRM | None = None) -> Run:
    """Hold out one fold (every fold, one DRM each, on small data), draw features and train the network on
    the rest (or reuse `estimator`), predict the held-out examples and explain the first `explain_rows` of
    them through the explain driver."""
    t0 = time.perf_counter()
    est, test, folds = fitted_model(dataset, settings, scaled(progress, 0.0, 0.8), estimator)
    t1 = time.perf_counter()
    preds = est.predict(test)
    exps = {name: explain(est, e, test, progress=scaled(progress, 0.8 + 0.1 * i, 0.9 + 0.1 * i),
                          predictions=preds)
            for i, (name, e) in enumerate(EXPLAINERS.items())}
    t2 = time.perf_counter()
    models = est.fold_models()
    timings = {k: float(np.sum([m.timings_[k] for m in models])) for k in models[0].timings_}
    return Run(method="drm", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=exps, summary=est.feature_summary(), metrics=run_metrics(models, preds, exps[FIDELITY], folds),
               timings={**timings, "explain": t2 - t1, "total": t2 - t0}, dataset=dataset.name, model=est)
