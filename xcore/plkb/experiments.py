"""Experiments around the KB classifier: metrics, the pollution curve (paper Fig. 4) and
scikit-learn baselines (CART, random forest, SVM, MLP) on the same discretised features."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.plkb.kb import KB, clauses_from_conjunctions
from xcore.plkb.literals import Domain
from xcore.runtime import Progress

BASELINES = ("CART", "RF", "SVM", "MLP")


def binary_metrics(truth: Sequence[bool], pred: Sequence[bool]) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of the positive class."""
    t = np.asarray(truth, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    tp = float(np.sum(t & p))
    fp = float(np.sum(~t & p))
    fn = float(np.sum(t & ~p))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"accuracy": float(np.mean(t == p)) if len(t) else float("nan"),
            "precision": precision, "recall": recall, "f1": f1}


def random_clauses(domain: Domain, n: int, lengths: Sequence[int] | np.ndarray = (1, 2, 3),
                   seed: int = 0) -> KB:
    """`n` random clauses ``p: POS | ~f1_v1 | ...`` with p ~ U(0, 1), distinct random features and
    random values; the number of feature literals is drawn from `lengths` (vectorised)."""
    rng = np.random.default_rng(seed)
    F = domain.n_features
    lens = np.minimum(rng.choice(np.asarray(lengths, dtype=np.int64), size=n), F)
    order = np.argsort(rng.random((n, F)), axis=1)
    take = np.arange(F)[None, :] < lens[:, None]
    feat = order[take]
    val = np.floor(rng.random(len(feat)) * domain.cardinalities[feat]).astype(np.int64)
    return clauses_from_conjunctions(domain, feat, val, lens, rng.random(n), np.full(n, -1), "random")


def pollution_curve(clf, X_test: pd.DataFrame, y_test: Sequence, fractions: Sequence[float] = (0, 0.1, 0.25, 0.5, 1, 2),
                    seed: int = 0, progress: Progress | None = None) -> pd.DataFrame:
    """Test accuracy and F1 as random clauses (a fraction of the KB size) are added (Fig. 4).

    Random clause lengths follow the learned KB's lengths. The classifier's KB is restored after.
    """
    base = clf.kb_
    feat_lengths = base.lengths - 1
    feat_lengths = feat_lengths[feat_lengths > 0] if (feat_lengths > 0).any() else np.array([1])
    codes = clf.encode(X_test)
    truth = clf.binary_labels(y_test)
    rows = []
    try:
        for i, frac in enumerate(fractions):
            n_rand = int(round(frac * len(base)))
            kb = base if n_rand == 0 else KB.concat([base, random_clauses(base.domain, n_rand, feat_lengths, seed + i)])
            clf.set_kb(kb)
            pred = clf.reasoner_.intervals(codes)["positive"].to_numpy()
            m = binary_metrics(truth, pred)
            rows.append({"fraction": float(frac), "n_random": n_rand, "kb_size": len(kb),
                         "accuracy": m["accuracy"], "f1": m["f1"]})
            if progress is not None:
                progress((i + 1) / len(fractions), f"{n_rand} random clauses: accuracy {m['accuracy']:.3f}")
    finally:
        clf.set_kb(base)
    return pd.DataFrame(rows)


def _baseline(name: str, seed: int):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    if name == "CART":
        return DecisionTreeClassifier(random_state=seed)
    if name == "RF":
        return RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
    if name == "SVM":
        return SVC(kernel="rbf", random_state=seed)
    if name == "MLP":
        return MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=seed)
    raise XcoreError(f"unknown baseline {name!r}; use one of {', '.join(BASELINES)}")


def one_hot(train: pd.DataFrame, *others: pd.DataFrame):
    """One-hot encode string tables (fit on `train`; unknown values get all zeros)."""
    from sklearn.preprocessing import OneHotEncoder

    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float64)
    out = [enc.fit_transform(train.astype(str))]
    out += [enc.transform(o[train.columns].astype(str)) for o in others]
    return enc, out


def compare_baselines(clf, X_train: pd.DataFrame, y_train: Sequence, X_test: pd.DataFrame, y_test: Sequence,
                      models: Sequence[str] = BASELINES, include_kb: bool = True,
                      progress: Progress | None = None) -> pd.DataFrame:
    """Accuracy and F1 of scikit-learn baselines on the classifier's discretised, one-hot features
    (same positive class), next to the fitted KB classifier itself."""
    disc = clf.discretizer_
    _, (A, B) = one_hot(disc.transform(X_train), disc.transform(X_test))
    ytr, yte = clf.binary_labels(y_train), clf.binary_labels(y_test)
    rows = []
    if include_kb:
        t = time.perf_counter()
        pred = clf.predict_interval(X_test)["positive"].to_numpy()
        rows.append({"model": f"PLKB ({clf.kb})", **binary_metrics(yte, pred), "seconds": time.perf_counter() - t})
    for i, name in enumerate(models):
        t = time.perf_counter()
        model = _baseline(name, int(clf.random_state))
        if len(np.unique(ytr)) < 2:
            pred = np.full(len(yte), bool(ytr[0]))
        else:
            pred = model.fit(A, ytr).predict(B).astype(bool)
        rows.append({"model": name, **binary_metrics(yte, pred), "seconds": time.perf_counter() - t})
        if progress is not None:
            progress((i + 1) / len(models), name)
    return pd.DataFrame(rows, columns=["model", "accuracy", "precision", "recall", "f1", "seconds"])
