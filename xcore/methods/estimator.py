"""`Estimator`: the base every method's estimator follows (scikit-learn's rules), and the one
prediction frame shape its `predict` returns."""

from __future__ import annotations

import inspect
from typing import Any

import pandas as pd

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.errors import NotFittedError
from xcore.runtime import Progress

PREDICTION_COLUMNS: tuple[str, ...] = ("target", "prediction", "truth")
"""The first columns of every `Estimator.predict` frame (truth may be missing); method columns follow."""


class Estimator:
    """Base of every method's estimator: parameters in `__init__`, learned attributes after `fit`.

    As in scikit-learn, `__init__` stores its arguments unchanged (no validation, no work), so
    `get_params()` round-trips; `fit` returns self; learned attributes end in ``_``.

    A held-out evaluation (`xcore.methods.evaluate`) asks the estimator what its labelled units are
    (`units`, from `split_predicates`) and how to hold some out (`holdout`); `fit` then learns from all the
    labelled units of the data it is given and `predict` predicts the target units of any data of the
    same schema, without reading their truth.

    Parameters
    ----------
    settings : Settings
        The method's validated settings (each subclass takes its own `Settings` type).

    Attributes
    ----------
    settings : Settings
        The settings given to the constructor, unchanged (`get_params` returns them).
    <name>_ : any
        What `fit` learned; each subclass documents its own learned attributes (scikit-learn's
        convention: names ending in ``_``, absent or None before `fit`, so `is_fitted` can tell).
    """

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters as stored (scikit-learn's convention)."""
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def is_fitted(self) -> bool:
        """True once `fit` has set the learned attributes."""
        return any(k.endswith("_") and not k.startswith("_") and v is not None for k, v in vars(self).items())

    def check_fitted(self) -> None:
        """Raise `NotFittedError` before `fit`."""
        if not self.is_fitted():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(data) first")

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        """The target predicates whose labelled atoms are this estimator's units (None: the data's
        own, or the rows of its table): the settings' ``target`` field where the method has one."""
        target = getattr(getattr(self, "settings", None), "target", None)
        return [target] if isinstance(target, str) and target else None

    def units(self, data: RelationalDataset) -> pd.DataFrame:
        """The labelled units a held-out evaluation splits (`xcore.data.splits.units`)."""
        return splits.units(data, self.split_predicates(data))

    def holdout(self, data: RelationalDataset, test_units: list[str]) -> tuple[RelationalDataset, RelationalDataset]:
        """(training, test) data holding out `test_units`: `fit` sees only the first, `predict` the second."""
        return splits.holdout(data, test_units, self.split_predicates(data))

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "Estimator":  # pragma: no cover
        """Learn from `data`; returns self.

        Parameters
        ----------
        data : RelationalDataset
            The relational data (observed atoms and, for targets, their truth where known).
        progress : callable, optional
            ``progress(fraction, message)``; it raises `Cancelled` when the user cancels.
        """
        raise NotImplementedError

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:  # pragma: no cover
        """Predictions as the one prediction frame (see `prediction_frame`).

        Parameters
        ----------
        data : RelationalDataset, optional
            New data of the same schema; None predicts the targets of the data `fit` saw.
        """
        raise NotImplementedError


def prediction_frame(target: Any, prediction: Any, truth: Any = None, **extra: Any) -> pd.DataFrame:
    """The one prediction frame shape: target, prediction, truth (NaN where unknown), then extras."""
    frame = pd.DataFrame({"target": pd.Series(target, dtype=object).reset_index(drop=True)})
    frame["prediction"] = pd.Series(prediction).reset_index(drop=True)
    frame["truth"] = pd.Series(truth).reset_index(drop=True) if truth is not None else float("nan")
    for k, v in extra.items():
        frame[k] = pd.Series(v).reset_index(drop=True) if not isinstance(v, (int, float, str)) else v
    return frame
