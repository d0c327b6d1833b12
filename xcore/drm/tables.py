"""Tables and rows the DRM page shows: the neighbourhood of an explanation, the network, the features."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.drm.estimator import DRMEstimator
from xcore.drm.explain import LocalExplanation


def neighbourhood_rows(model: DRMEstimator, loc: LocalExplanation) -> tuple[np.ndarray, list[str], list[int]]:
    """The instance and its neighbours (instance first): feature vectors, example names, and the class the
    network gives each (the neighbours are training instances)."""
    members = loc.neighbourhood.members.astype(int)
    instance = loc.instance if loc.instance is not None else np.zeros(model.X_.shape[1])
    rows = np.vstack([instance[None, :], model.X_[members]]).astype(float)
    names = [loc.target] + [model.target_of(i) for i in members]
    return rows, names, [int(loc.prediction)] + [int(model.train_predictions_[i]) for i in members]


def network_tables(models: list[DRMEstimator]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per network, numbered by fold: its architecture, learning rate, weight decay, epochs and
    losses; its training loss per epoch, long form, with a ``fold`` column naming the network)."""
    rows, curves = [], []
    for i, model in enumerate(models, start=1):
        net = model.net_
        rows.append({"fold": i, "hidden": str(net.hidden), "learning rate": net.lr, "weight decay": net.weight_decay,
                     "epochs": net.epochs, "validation-time training loss": round(net.target_loss, 4),
                     "final training loss": round(net.train_loss[-1], 4) if net.train_loss else None})
        curves += [{"fold": str(i), "epoch": e + 1, "training loss": v} for e, v in enumerate(net.train_loss)]
    return pd.DataFrame(rows), pd.DataFrame(curves, columns=["fold", "epoch", "training loss"])


def feature_table(model: DRMEstimator, relevance: list[str]) -> pd.DataFrame:
    """One row per drawn feature: name, Prolog definition, coverage (share of the training examples it holds
    for), body literals and the relevance of its predicates (from the run's summary)."""
    feats = model.features_
    return pd.DataFrame({"feature": [f.name for f in feats], "definition": [f.definition() for f in feats],
                         "coverage": np.round(model.X_.mean(axis=0), 4), "literals": [len(f.clause.body) for f in feats],
                         "relevance": relevance})
