"""DRM's folds: a fold predicate's own folds, else seeded stratified folds capped by the smallest class
(the paper's k-fold protocol), through the shared splits of `xcore.methods.evaluate`."""

from __future__ import annotations

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.drm.estimator import DRMEstimator
from xcore.drm.problem import target_predicate
from xcore.drm.settings import DRMSettings
from xcore.methods.evaluate import KFold, PredefinedFolds, held_out_parts


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


def fold_parts(estimator: DRMEstimator, data: RelationalDataset) -> list[list[str]]:
    """The held-out examples of each fold: the fold predicate's folds (in sorted order of their names), else
    `folds` seeded stratified folds (`xcore.methods.evaluate.held_out_parts`); the paper's protocol fits
    one DRM per fold on the other folds."""
    s = estimator.settings
    units = estimator.units(data)
    texts = units["unit"].astype(str).to_numpy(dtype=object)
    if s.fold_predicate:
        return [texts[part].tolist() for part in held_out_parts(units, PredefinedFolds(s.fold_predicate), data)]
    k, _ = fold_count(data, s)
    return [texts[part].tolist() for part in held_out_parts(units, KFold(k, seed=s.seed))]
