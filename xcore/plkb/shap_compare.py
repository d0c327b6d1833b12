"""SHAP on a standard model (scikit-learn gradient boosting or random forest) for comparison
with the KB classifier's own Shapley values. Needs the optional `shap` package (extra "explain").

The model is trained on the same discretised features, one-hot encoded; SHAP values of the
one-hot columns of a feature are summed back into that feature (TreeExplainer, path-dependent:
no background sample). Gradient boosting explains the log-odds, a random forest P(positive).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional
from xcore.plkb.encoding import one_hot
from xcore.plkb.explain import top_k, topk_agreement

SHAP_MODELS = ("gbt", "rf")


def _require_shap():
    """The optional `shap` package, imported on first use (it takes seconds; only the SHAP comparison needs it)."""
    return import_optional("shap", "the SHAP comparison")  # optional and slow to import


class ShapBaseline:
    """A tree model on one-hot discretised features plus its TreeExplainer, per-feature output."""

    def __init__(self, model: str = "gbt", seed: int = 0) -> None:
        if model not in SHAP_MODELS:
            raise XcoreError(f"SHAP model must be one of {', '.join(SHAP_MODELS)}, got {model!r}")
        self.model_name, self.seed = model, seed

    def fit(self, Xd: pd.DataFrame, y: Sequence[bool]) -> "ShapBaseline":
        """Train on a discretised (string) table and boolean labels."""
        shap = _require_shap()
        self.columns_ = list(Xd.columns)
        self.encoder_, (A,) = one_hot(Xd)
        sizes = [len(c) for c in self.encoder_.categories_]
        owner = np.repeat(np.arange(len(sizes)), sizes)
        self.aggregate_ = np.zeros((A.shape[1], len(sizes)))
        self.aggregate_[np.arange(A.shape[1]), owner] = 1.0
        y = np.asarray(y, dtype=bool)
        if self.model_name == "gbt":
            self.model_ = GradientBoostingClassifier(random_state=self.seed)
        else:
            self.model_ = RandomForestClassifier(n_estimators=100, random_state=self.seed, n_jobs=1)
        self.model_.fit(A, y)
        self.explainer_ = shap.TreeExplainer(self.model_)
        return self

    def values(self, Xd: pd.DataFrame) -> np.ndarray:
        """SHAP values (rows x original features) toward the positive class."""
        A = self.encoder_.transform(Xd[self.columns_].astype(str))
        sv = self.explainer_.shap_values(A)
        if isinstance(sv, list):  # older shap: one array per class
            sv = sv[1]
        sv = np.asarray(sv)
        if sv.ndim == 3:  # (rows, columns, classes)
            sv = sv[:, :, 1]
        return sv @ self.aggregate_

    def predict(self, Xd: pd.DataFrame) -> np.ndarray:
        return self.model_.predict(self.encoder_.transform(Xd[self.columns_].astype(str))).astype(bool)


def shap_for(clf, X_train: pd.DataFrame, y_train: Sequence, model: str = "gbt") -> ShapBaseline:
    """A `ShapBaseline` trained on a fitted `PLKBClassifier`'s discretised features and labels."""
    return ShapBaseline(model, int(clf.random_state)).fit(clf.discretizer_.transform(X_train),
                                                          clf.binary_labels(y_train))


def compare_with_shap(clf, baseline: ShapBaseline, x: Any, k: int = 3, exact_max: int = 12,
                      n_permutations: int = 200) -> tuple[pd.DataFrame, dict[str, float]]:
    """KB Shapley values beside SHAP for one row, and the agreement of their top-k features.

    Top-k is taken toward the KB's prediction (largest phi for a positive prediction, smallest
    for a negative one); also reported by |value|.
    """
    codes = clf._one_query(x)
    res = clf.shapley(codes, exact_max, n_permutations)
    Xd = clf.discretizer_.transform(x if isinstance(x, pd.DataFrame) else pd.DataFrame([x]))
    sv = baseline.values(Xd)[0]
    feats = list(res.features)
    phi_shap = sv[feats]
    positive = clf.reasoner_.interval(codes).positive
    frame = res.to_frame().rename(columns={"phi": "phi_kb", "se": "se_kb", "rank": "rank_kb"})
    frame["phi_shap"] = phi_shap
    order = np.argsort(-np.abs(phi_shap), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    frame["rank_shap"] = rank
    frame["top_kb"] = np.isin(np.arange(len(feats)), top_k(res.phi, k, positive))
    frame["top_shap"] = np.isin(np.arange(len(feats)), top_k(phi_shap, k, positive))
    summary = {"k": k, "positive": bool(positive),
               "agreement": topk_agreement(res.phi, phi_shap, k, positive),
               "agreement_abs": topk_agreement(res.phi, phi_shap, k, None)}
    return frame, summary
