"""The linear baseline beside the network: L2 logistic regression (C = 1) on the network's inputs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression


@dataclass(frozen=True)
class LinearBaseline:
    """A fitted logistic regression, or the one class of single-class training data."""

    model: LogisticRegression | None
    constant: float = 0.0

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(class 1) of each row of X."""
        if self.model is None:
            return np.full(len(X), self.constant)
        return self.model.predict_proba(X)[:, 1]


def fit_linear(X: np.ndarray, y: np.ndarray) -> LinearBaseline:
    """L2 logistic regression (C = 1) on X and 0/1 labels y: the baseline the network should at least match."""
    if len(np.unique(y)) < 2:
        return LinearBaseline(None, float(y[0]) if len(y) else 0.0)
    return LinearBaseline(LogisticRegression(C=1.0, max_iter=5000).fit(X, y))
