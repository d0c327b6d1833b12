"""Held-out evaluation of any registered method: split the labelled units, fit, predict new data, score.

As `sklearn.model_selection.cross_validate` does for an estimator and X, `evaluate(method, data,
split=...)` splits a relational dataset's labelled units (`xcore.data.splits`), fits a fresh
estimator on each training part and predicts the held-out part, which the estimator has not seen.
The estimator decides what a unit is (`Estimator.units`) and how a part is built
(`Estimator.holdout`); the split itself, the seeds, the scoring and the out-of-fold frame live here,
once for every method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold as _SkKFold
from sklearn.model_selection import StratifiedKFold, train_test_split

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError, XcoreError
from xcore.methods.base import Estimator, Settings
from xcore.methods.baselines import with_baselines
from xcore.methods.registry import REGISTRY
from xcore.methods.scoring import score_predictions
from xcore.runtime import Progress, scaled


@dataclass(frozen=True)
class Holdout:
    """One seeded train/test split holding out `test_size` of the labelled units (stratified by truth
    where every stratum has two units)."""

    test_size: float = 0.25
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.test_size < 1.0:
            raise ConfigError(f"test_size must be in (0, 1), got {self.test_size}", field="test_size")


@dataclass(frozen=True)
class KFold:
    """`n_splits` seeded folds of the labelled units (stratified by truth where every stratum allows it)."""

    n_splits: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_splits < 2:
            raise ConfigError(f"n_splits must be at least 2, got {self.n_splits}", field="n_splits")


@dataclass(frozen=True)
class PredefinedFolds:
    """The folds the data itself names: a binary predicate ``predicate(entity, fold)`` puts every unit whose
    first argument is ``entity`` in ``fold`` (Aleph's and DRM's data ship such a ``cv_fold``); folds in
    sorted order of their names."""

    predicate: str

    def __post_init__(self) -> None:
        if not self.predicate:
            raise ConfigError("predefined folds need the name of a fold predicate", field="predicate")


Split = Union[Holdout, KFold, PredefinedFolds]


@dataclass
class Evaluation:
    """What a held-out evaluation produced.

    Attributes
    ----------
    method : str
        Registry key of the evaluated method.
    settings : Settings
        The settings every fold was fitted with.
    predictions : pandas.DataFrame
        The held-out predictions of every fold (the one prediction frame plus a ``fold`` column).
    folds : pandas.DataFrame
        One row per fold: its quality figures and ``n_train`` / ``n_test`` units.
    metrics : dict of str to float
        The figures of all held-out predictions together, ``baseline_<metric>`` beside each.
    """

    method: str
    settings: Settings
    predictions: pd.DataFrame
    folds: pd.DataFrame
    metrics: dict[str, float] = field(default_factory=dict)


def _strata(units: pd.DataFrame) -> np.ndarray | None:
    """The units' truths as strata when every stratum has at least two units, else None."""
    strata = units["stratum"].astype(str).to_numpy()
    _, counts = np.unique(strata, return_counts=True)
    return strata if len(counts) > 1 and counts.min() >= 2 else None


def predefined_fold_ids(data: RelationalDataset, predicate: str, units: pd.DataFrame) -> np.ndarray:
    """Fold ids 0..k-1 (sorted fold names) of each unit from a binary (entity, fold) predicate of `data`,
    by the unit's first argument."""
    if predicate not in data.schema.names:
        raise XcoreError(f"fold predicate {predicate!r} is not a predicate of {data.name!r}")
    if data.predicate(predicate).arity != 2:
        raise XcoreError(f"fold predicate {predicate!r} must be binary: (example, fold)")
    if units["predicate"].isna().any():
        raise XcoreError(f"fold predicate {predicate!r} names the first argument of target atoms; "
                         "the units of this data are table rows")
    table = data.observations(predicate)
    fold_of = pd.Series(table["a1"].astype(str).to_numpy(), index=table["a0"].astype(str).to_numpy())
    fold_of = fold_of[~fold_of.index.duplicated()]
    first = pd.concat([splits.units_with_arguments(data, str(name)).set_index("unit")["a0"].astype(str)
                       for name in units["predicate"].unique()])
    folds = units["unit"].map(first).map(fold_of)
    if folds.isna().any():
        missing = units["unit"][folds.isna()]
        raise XcoreError(f"{len(missing)} labelled units have no fold in {predicate} (e.g. {missing.iloc[0]})")
    return pd.factorize(folds, sort=True)[0].astype(np.int64)


def held_out_parts(units: pd.DataFrame, split: Split, data: RelationalDataset | None = None) -> list[np.ndarray]:
    """The held-out unit positions of each fold of `split` (seeded, stratified where possible); a
    `PredefinedFolds` split reads its folds from `data`."""
    n = len(units)
    if n < 2:
        raise XcoreError(f"a held-out evaluation needs at least 2 labelled units, the data has {n}")
    if isinstance(split, PredefinedFolds):
        if data is None:
            raise XcoreError("predefined folds are read from the data: pass it")
        ids = predefined_fold_ids(data, split.predicate, units)
        if ids.max() < 1:
            raise XcoreError(f"fold predicate {split.predicate!r} names one fold: a held-out evaluation needs two")
        return [np.flatnonzero(ids == k) for k in range(int(ids.max()) + 1)]
    strata = _strata(units)
    index = np.arange(n)
    if isinstance(split, Holdout):
        n_test = min(max(int(round(split.test_size * n)), 1), n - 1)
        can_stratify = strata is not None and n_test >= len(np.unique(strata)) <= n - n_test
        _, test = train_test_split(index, test_size=n_test, random_state=split.seed,
                                   stratify=strata if can_stratify else None)
        return [np.sort(test)]
    if split.n_splits > n:
        raise ConfigError(f"n_splits={split.n_splits} is more than the {n} labelled units", field="n_splits")
    stratified = strata is not None and np.unique(strata, return_counts=True)[1].min() >= split.n_splits
    folds = StratifiedKFold(split.n_splits, shuffle=True, random_state=split.seed).split(index, strata) \
        if stratified else _SkKFold(split.n_splits, shuffle=True, random_state=split.seed).split(index)
    return [np.sort(test) for _, test in folds]


def fit_predict(estimator: Estimator, data: RelationalDataset, test_units: list[str],
                progress: Progress | None = None) -> tuple[Estimator, pd.DataFrame]:
    """Fit `estimator` on `data` without `test_units` and predict those units (which it has not seen)."""
    train, test = estimator.holdout(data, test_units)
    estimator.fit(train, progress=scaled(progress, 0.0, 0.9))
    predictions = estimator.predict(test)
    wanted = set(test_units)
    return estimator, predictions[predictions["target"].astype(str).isin(wanted)].reset_index(drop=True)


def evaluate(method: str, data: RelationalDataset, settings: Settings | None = None,
             split: Split | None = None, progress: Progress | None = None) -> Evaluation:
    """Fit and score `method` on held-out parts of `data` (a `Holdout` by default, or `KFold`)."""
    spec = REGISTRY[method]
    reason = spec.applicable(data)
    if reason is not None:
        raise XcoreError(f"{spec.title} cannot run on {data.name!r}: {reason}")
    settings = spec.default_settings(data) if settings is None else settings
    if not isinstance(settings, spec.settings_type):
        raise ConfigError(f"settings for {method} must be {spec.settings_type.__name__}, "
                          f"got {type(settings).__name__}", field="settings")
    split = Holdout() if split is None else split
    units = settings.estimator().units(data)
    parts = held_out_parts(units, split, data)
    frames, rows = [], []
    for i, positions in enumerate(parts):
        fold_progress = scaled(progress, i / len(parts), (i + 1) / len(parts))
        test_units = units["unit"].iloc[positions].astype(str).tolist()
        _, predictions = fit_predict(settings.estimator(), data, test_units, fold_progress)
        frames.append(predictions.assign(fold=i))
        rows.append({"fold": i, "n_train": len(units) - len(positions), "n_test": len(positions),
                     **score_predictions(predictions)})
    if progress is not None:
        progress(1.0, "evaluated")
    all_predictions = pd.concat(frames, ignore_index=True)
    metrics = with_baselines(score_predictions(all_predictions), all_predictions)
    return Evaluation(method, settings, all_predictions, pd.DataFrame(rows), metrics)
