"""A DRM run: default settings from the data, the held-out fold (through the shared splits), fit on
the rest, predict and explain the held-out examples."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.drm.estimator import DRMEstimator
from xcore.drm.explainers import FIDELITY, FidelityExplainer, StructuredExplainer
from xcore.drm.problem import target_predicate
from xcore.drm.relevance import default_relevance
from xcore.drm.settings import DRMSettings
from xcore.errors import XcoreError
from xcore.explain.types import ExplanationSet
from xcore.methods.base import Explainer, Run
from xcore.methods.driver import explain, fitted_for
from xcore.methods.evaluate import KFold, held_out_parts
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


def capped_folds(y: np.ndarray, k: int) -> int:
    """The folds that run for k asked: at most the size of the smallest class (each fold needs one of each)."""
    return max(2, min(k, int(np.bincount(y).min()) if len(np.unique(y)) > 1 else k))


def fold_count(dataset: RelationalDataset, settings: DRMSettings) -> tuple[int, str | None]:
    """(folds the run splits into, why they differ from `settings.folds`, or None): a fold predicate's own
    folds, else `settings.folds` capped by the smallest class."""
    target = target_predicate(dataset)
    if target is None:
        return settings.folds, None
    if settings.fold_predicate and settings.fold_predicate in dataset.schema.names:
        n = int(dataset.observations(settings.fold_predicate)["a1"].nunique())
        return n, f"the folds of {settings.fold_predicate} ({n})"
    y = (dataset.truth(target)["value"].to_numpy(dtype=float) >= 0.5).astype(np.int64)
    k = capped_folds(y, settings.folds) if len(y) else settings.folds
    return k, None if k == settings.folds else f"the smallest class has {int(np.bincount(y).min())} examples"


def predicate_folds(data: RelationalDataset, name: str, units: pd.DataFrame, target: str) -> np.ndarray:
    """Fold ids 0..k-1 (sorted fold names) of each unit from a binary (example, fold) predicate."""
    if name not in data.schema.names:
        raise XcoreError(f"fold_predicate {name!r} is not a predicate of {data.name!r}")
    if data.predicate(name).arity != 2:
        raise XcoreError(f"fold_predicate {name!r} must be binary: (example, fold)")
    table = data.observations(name)
    of = dict(zip(target + "(" + table["a0"].astype(str) + ")", table["a1"].astype(str)))
    missing = [u for u in units["unit"] if u not in of]
    if missing:
        raise XcoreError(f"{len(missing)} examples have no fold in {name} (e.g. {missing[0]})")
    return pd.factorize(pd.Series([of[u] for u in units["unit"]]), sort=True)[0].astype(np.int64)


def fold_parts(estimator: DRMEstimator, data: RelationalDataset) -> list[list[str]]:
    """The held-out examples of each fold: the fold predicate's folds (in sorted order of their names), else
    `folds` seeded stratified folds (`xcore.methods.evaluate.held_out_parts`); the paper's protocol fits
    one DRM per fold on the other folds."""
    s = estimator.settings
    units = estimator.units(data)
    texts = units["unit"].astype(str).to_numpy(dtype=object)
    if s.fold_predicate:
        folds = predicate_folds(data, s.fold_predicate, units, str(units["predicate"].iloc[0]))
        return [texts[folds == k].tolist() for k in range(int(folds.max()) + 1)]
    k, _ = fold_count(data, s)
    return [texts[part].tolist() for part in held_out_parts(units, KFold(k, seed=s.seed))]


def held_out_units(estimator: DRMEstimator, data: RelationalDataset) -> tuple[list[str], int]:
    """(the run's held-out examples, the number of folds): the first of `fold_parts`."""
    parts = fold_parts(estimator, data)
    return parts[0], len(parts)


def run_metrics(est: DRMEstimator, preds: pd.DataFrame, fid: ExplanationSet, folds: int) -> dict[str, float]:
    """Held-out accuracy of the network and the linear baseline, sizes, and the explanations' figures."""
    truth = preds["truth"].to_numpy(dtype=float)
    metrics = {"accuracy": float(np.mean(preds["prediction"].to_numpy() == truth)),
               "linear_accuracy": float(np.mean((preds["linear_probability"].to_numpy() >= 0.5) == truth)),
               "features": float(len(est.features_)), "network_inputs": float(len(est.inputs_)),
               "folds": float(folds), "examples": float(len(est.X_)), "test_examples": float(len(preds))}
    tops = [e.items[0].score for e in fid if e.items]
    if len(fid):
        metrics["mean_neighbours"] = float(np.mean([e.meta["neighbours"] for e in fid]))
        metrics["fidelity_undefined"] = float(np.mean([not e.meta["fidelity_defined"] for e in fid]))
    if tops:
        metrics["mean_fidelity"] = float(np.mean(tops))
        metrics["relevance_changes_choice"] = float(np.mean([bool(e.meta.get("relevance_changes_choice"))
                                                             for e in fid]))
    return metrics


def run(dataset: RelationalDataset, settings: DRMSettings, progress: Progress | None = None,
        estimator: DRMEstimator | None = None) -> Run:
    """Hold out one fold, draw features and train the network on the rest (or reuse `estimator`, a cached
    fit of the same model on the same training part), predict the held-out examples and explain the
    first `explain_rows` of them through the explain driver."""
    t0 = time.perf_counter()
    est = DRMEstimator(settings)
    test_units, folds = held_out_units(est, dataset)
    train, test = est.holdout(dataset, test_units)
    est = fitted_for(settings, train, scaled(progress, 0.0, 0.8), estimator)
    t1 = time.perf_counter()
    preds = est.predict(test)
    exps = {name: explain(est, e, test, progress=scaled(progress, 0.8 + 0.1 * i, 0.9 + 0.1 * i),
                          predictions=preds)
            for i, (name, e) in enumerate(EXPLAINERS.items())}
    t2 = time.perf_counter()
    return Run(method="drm", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=exps, summary=est.feature_summary(), metrics=run_metrics(est, preds, exps[FIDELITY], folds),
               timings={**est.timings_, "explain": t2 - t1, "total": t2 - t0}, dataset=dataset.name, model=est)
