"""DRM on small data, as the paper evaluates it: one DRM per fold, each predicting and explaining the
examples its fold holds out, so every example is predicted by a network that never saw its label.

With ten trains a single held-out fold is two trains and a network trained on eight says nothing; the
cross-fitted run predicts all ten out of fold (the paper's k-fold protocol)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.drm.estimator import DRMEstimator, Rows
from xcore.drm.explain import LocalExplanation
from xcore.drm.folds import fold_parts
from xcore.drm.problem import target_predicate
from xcore.drm.relevance import Relevance
from xcore.drm.settings import DRMSettings
from xcore.explain.types import Explanation
from xcore.methods.base import Estimator, prediction_frame
from xcore.runtime import Progress, null_progress, scaled

CROSS_FIT_UP_TO = 40
"""Labelled examples up to which a DRM run cross-fits (one fit per fold) instead of holding out one fold."""


def cross_fits(data: RelationalDataset) -> bool:
    """True when `data` is small enough for a cross-fitted run (every example predicted out of fold)."""
    target = target_predicate(data)
    return target is not None and len(data.truth(target)) <= CROSS_FIT_UP_TO


class CrossFittedDRM(Estimator):
    """One `DRMEstimator` per fold of the labelled examples, each fitted without its fold's examples.

    Parameters
    ----------
    settings : DRMSettings
        The settings of every fold's DRM (`folds` or `fold_predicate` decide the folds).

    Attributes
    ----------
    folds_ : list of DRMEstimator
        The fold models, in fold order; fold i was fitted without the examples `held_out_[i]`.
    held_out_ : list of list of str
        The target texts each fold holds out (every labelled example exactly once).
    fold_of_ : dict of str to int
        The fold (0-based) holding out each labelled example.
    """

    def __init__(self, settings: DRMSettings) -> None:
        self.settings = settings

    @property
    def settings(self) -> DRMSettings:
        return self._settings

    @settings.setter
    def settings(self, settings: DRMSettings) -> None:
        """Explainer settings change on a fitted model (the driver's `with_settings`): every fold follows."""
        self._settings = settings
        if getattr(self, "folds_", None) is not None:
            self.folds_ = [_with_settings(f, settings) for f in self.folds_]

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        return DRMEstimator(self.settings).split_predicates(data)

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "CrossFittedDRM":
        """Fit one DRM per fold of `data`'s labelled examples, each on the others."""
        progress = progress or null_progress
        parts = fold_parts(DRMEstimator(self.settings), data)
        folds = []
        for i, part in enumerate(parts):
            est = DRMEstimator(self.settings)
            train, _ = est.holdout(data, part)
            folds.append(est.fit(train, progress=scaled(progress, i / len(parts), (i + 1) / len(parts))))
        self.held_out_: list[list[str]] = parts
        self.fold_of_: dict[str, int] = {t: i for i, part in enumerate(parts) for t in part}
        self.folds_: list[DRMEstimator] = folds
        progress(1.0, f"trained {len(folds)} fold networks")
        return self

    def for_target(self, target: str) -> DRMEstimator:
        """The fold model that did not see `target` (the first fold's for an example none held out)."""
        self.check_fitted()
        return self.folds_[self.fold_of_.get(target, 0)]

    def fold_models(self) -> list[DRMEstimator]:
        """Every fold model, in fold order."""
        self.check_fitted()
        return list(self.folds_)

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Each labelled example by the fold model that held it out (``fold`` 1..k); any other example by
        the mean P(class 1) of the fold models (``fold`` 0)."""
        self.check_fitted()
        frames = [f.predict(data) for f in self.folds_]
        targets = frames[0]["target"].astype(str).to_numpy(dtype=object)
        fold = pd.Series(targets).map(self.fold_of_).fillna(-1).to_numpy(dtype=np.int64)
        stacked = {c: np.stack([fr[c].to_numpy(dtype=float) for fr in frames])
                   for c in ("probability", "linear_probability")}
        rows = np.arange(len(targets))
        own = {c: v[np.maximum(fold, 0), rows] for c, v in stacked.items()}
        picked = {c: np.where(fold >= 0, own[c], v.mean(axis=0)) for c, v in stacked.items()}
        proba = picked["probability"]
        return prediction_frame(targets, (proba >= 0.5).astype(np.int64), frames[0]["truth"].to_numpy(),
                                probability=np.round(proba, 12),
                                linear_probability=np.round(picked["linear_probability"], 12),
                                active_features=np.stack([fr["active_features"].to_numpy() for fr in frames])[
                                    np.maximum(fold, 0), rows],
                                fold=fold + 1)

    def rows(self, data: RelationalDataset | None = None) -> Rows:
        """(target texts, feature rows of the first fold, truth): which examples `data` has, for choosing targets."""
        return self.folds_[0].rows(data)

    def local(self, target: str, data: RelationalDataset | None = None, hamming: int | None = None,
              relevance: Relevance | None = None, min_neighbours: int | None = None,
              rows: Rows | None = None) -> LocalExplanation:
        """The local explanation by the fold model that did not see `target` (`DRMEstimator.local`)."""
        return self.for_target(target).local(target, data, hamming=hamming, relevance=relevance,
                                             min_neighbours=min_neighbours)

    @property
    def relevance_(self) -> Relevance:
        return self.folds_[0].relevance_

    def feature_summary(self) -> Explanation:
        """The first fold's drawn features (each fold draws its own from its training examples)."""
        summary = self.folds_[0].feature_summary()
        summary.target_text += f" (fold 1 of {len(self.folds_)})"
        return summary


def _with_settings(model: DRMEstimator, settings: DRMSettings) -> DRMEstimator:
    """A shallow copy of a fold model carrying `settings` (the fitted model itself is shared, not changed)."""
    clone = copy.copy(model)
    clone.settings = settings
    return clone
