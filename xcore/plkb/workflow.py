"""The classifier page's workflow as plain functions: choose data, split, train, predict, explain.

`run_plkb(table, PLKBSettings(...))` returns a `PLKBRun` holding the fitted classifier, the
70/30 split and the test predictions with their omega(POS) intervals; the page (or a notebook)
then asks it for explanations, Shapley values, baselines and the pollution curve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score
from sklearn.model_selection import train_test_split

from xcore.data import load
from xcore.data.dataset import RelationalDataset
from xcore.data.generators.strings import make_strings
from xcore.data.generators.titanic import make_titanic_like
from xcore.errors import DataError, XcoreError
from xcore.methods.base import Settings
from xcore.plkb.classifier import PLKBClassifier
from xcore.runtime import Progress


class PLKBSettings(Settings):
    """Everything that decides a training run (frozen and validated; runs are cached by its key)."""

    method_key: ClassVar[str] = "plkb"
    explainer_fields: ClassVar[frozenset[str]] = frozenset({"k", "k_auto", "k_max", "explain_rows"})

    label: str = Field(min_length=1, title='Label column')
    positive_class: str | None = Field(None, title='Positive class (one-vs-rest)')
    kb: Literal["tree", "direct"] = Field("tree", title='Knowledge base')
    max_k: int = Field(2, ge=1, le=6, title='Direct: max k')
    min_support: int = Field(1, ge=1, title='Direct: min support')
    all_nodes: bool = Field(False, title='Tree: clause per node')
    n_trees: int = Field(1, ge=1, le=200, title='Tree: trees (forest)')
    n_bins: int = Field(4, ge=2, le=50, title='Bins for numeric columns')
    knowledge: str = Field("", title='Domain knowledge (one clause per line, e.g. `0.9: POS | ~sex_female`)')
    drop: tuple[str, ...] = Field((), title='Leave out these columns')
    """Columns left out of the features (e.g. identifiers, see `identifier_columns`)."""
    test_fraction: float = Field(0.3, gt=0.0, lt=1.0, title='Test share')
    seed: int = Field(0, ge=0, title='Seed')
    max_rows: int = Field(3000, ge=10, title='Largest table trained on (rows)')
    """Larger tables are subsampled (seeded) so training stays interactive."""
    k: int = Field(2, ge=1, le=12, title='k (features per explanation)')
    """Features in each decisive-feature explanation (the smallest, with `k_auto`)."""
    k_auto: bool = Field(True, title='Grow k per row until a set decides')
    """Grow k per row, up to `k_max`, until a set of k features decides the row's prediction."""
    k_max: int = Field(8, ge=1, le=12, title='Largest k tried')
    """The largest k `k_auto` tries."""
    explain_rows: int = Field(100, ge=0, le=100_000, title='Rows explained up front')
    """How many test rows the run explains up front (any other row is explained on demand)."""

    def classifier(self) -> PLKBClassifier:
        return PLKBClassifier(kb=self.kb, max_k=self.max_k, min_support=self.min_support,
                              all_nodes=self.all_nodes, n_trees=self.n_trees, n_bins=self.n_bins,
                              positive_class=self.positive_class, knowledge=self.knowledge,
                              random_state=self.seed)



@dataclass
class PLKBRun:
    """A trained classifier with its split and test predictions."""

    settings: PLKBSettings
    clf: PLKBClassifier
    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    predictions: pd.DataFrame

    def metrics(self) -> dict[str, float]:
        """Accuracy, F1, precision, recall (positive class) and ROC AUC of the test predictions (scikit-learn)."""
        truth = self.clf.binary_labels(self.y_test)
        pred = (self.predictions["prediction"].astype(str) == str(self.clf.classes_[1])).to_numpy()
        out = {"accuracy": float(accuracy_score(truth, pred)),
               "f1": float(f1_score(truth, pred, zero_division=0)),
               "precision": float(precision_score(truth, pred, zero_division=0)),
               "recall": float(recall_score(truth, pred, zero_division=0))}
        if 0 < truth.sum() < len(truth):
            out["roc_auc"] = float(roc_auc_score(truth, self.predictions["mid"].to_numpy()))
        return out

    def row(self, index: int) -> pd.DataFrame:
        """Test row `index` (position in the test split) as a one-row frame."""
        if not 0 <= index < len(self.X_test):
            raise XcoreError(f"test row {index} is outside 0..{len(self.X_test) - 1}")
        return self.X_test.iloc[[index]]


def table_of(ds: RelationalDataset) -> tuple[pd.DataFrame, str]:
    """The features + label table of a tabular dataset, or a DataError saying what to load."""
    if ds.tabular is None or ds.label is None:
        raise DataError(f"dataset {ds.name} is not a table with a label column: load a tabular CSV "
                        "(e.g. the Mushroom sample) or choose generated data on this page")
    return ds.tabular, ds.label


def identifier_columns(table: pd.DataFrame, label: str | None = None) -> list[str]:
    """Columns that look like identifiers (almost every row has its own value): names, ids, tickets.

    A KB clause on such a column matches one row, so they are dropped by default on the page.
    """
    out = []
    for c in table.columns:
        if c == label:
            continue
        values = table[c].dropna()
        if len(values) >= 20 and values.nunique() > 0.5 * len(values) and values.nunique() > 20 \
                and not pd.api.types.is_float_dtype(values):
            out.append(str(c))
    return out


def ask_positive_class(label: str, y: pd.Series) -> str:
    """The question a multi-class label needs answered: which class to explain (one vs the rest)."""
    classes = sorted(pd.Series(y).dropna().astype(str).unique())
    shown = ", ".join(classes[:20]) + (", ..." if len(classes) > 20 else "")
    return (f"label {label!r} has {len(classes)} classes ({shown}); the classifier explains one class against "
            f"the rest: choose which with --positive CLASS (setting positive_class)")


def label_candidates(table: pd.DataFrame, max_classes: int = 20) -> list[str]:
    """Columns that could be a label: 2..`max_classes` distinct values and not identifier-like."""
    ids = set(identifier_columns(table))
    return [str(c) for c in table.columns
            if c not in ids and 2 <= table[c].dropna().astype(str).nunique() <= max_classes]


def run_plkb(table: pd.DataFrame, settings: PLKBSettings, progress: Progress | None = None) -> PLKBRun:
    """Split (stratified, seeded), fit the KB classifier on 70 %, predict the 30 % test rows."""
    report = progress or (lambda f, m: None)
    if settings.label not in table.columns:
        raise DataError(f"label column {settings.label!r} is not in the table "
                        f"(columns: {', '.join(map(str, table.columns[:20]))})")
    table = table.dropna(subset=[settings.label])
    if len(table) > settings.max_rows:
        table = table.sample(settings.max_rows, random_state=settings.seed)
    X = table.drop(columns=[settings.label, *[c for c in settings.drop if c != settings.label]],
                   errors="ignore")
    if X.shape[1] == 0:
        raise DataError("no feature columns are left: un-tick some of the dropped columns")
    y = table[settings.label].astype(str)
    if y.nunique() < 2:
        raise DataError(f"label {settings.label!r} has a single class; need two or more")
    if y.nunique() > 2 and settings.positive_class is None:
        raise DataError(ask_positive_class(settings.label, y))
    counts = y.value_counts()
    n_test = int(np.ceil(settings.test_fraction * len(y)))
    n_train = len(y) - n_test
    if n_test < 1 or n_train < 2:
        raise DataError(f"{len(y)} labelled rows are too few to split {1 - settings.test_fraction:.0%} / "
                        f"{settings.test_fraction:.0%} into training and test rows")
    # stratify only when every class can appear on both sides (scikit-learn refuses otherwise)
    stratify = y if counts.min() >= 2 and n_test >= len(counts) and n_train >= len(counts) else None
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=settings.test_fraction, random_state=settings.seed, stratify=stratify)
    if y_train.nunique() < 2:
        raise DataError(f"the training split of label {settings.label!r} has a single class; "
                        "load more rows or change the seed")
    clf = settings.classifier()
    clf.fit(X_train, y_train, progress=lambda f, m: report(0.6 * f, m))
    report(0.6, "predicting the test rows")
    predictions = clf.predictions_frame(X_test, y_test, progress=lambda f, m: report(0.6 + 0.4 * f,
                                                                                     f"test rows: {m}"))
    report(1.0, "done")
    return PLKBRun(settings, clf, X_train, X_test, y_train, y_test, predictions)


GENERATED = ("Synthetic strings", "Titanic-like passengers")


def generated_table(kind: str, length: int = 10, alphabet_size: int = 4, n: int = 1000,
                    seed: int = 0) -> tuple[pd.DataFrame, str]:
    """A generated table and its label column: the paper's synthetic strings or Titanic-like rows.

    Synthetic strings are positive iff they match a random seed string in exactly 5 positions
    (the matching positions are the true explanation); Titanic-like rows drop the identifier
    columns (PassengerId, Name, Ticket, Cabin) that no KB can generalise from.
    """
    if kind == GENERATED[0]:
        syn = make_strings(length=length, alphabet_size=alphabet_size, n=n, seed=seed)
        return syn.X.assign(label=syn.y.astype(str).to_numpy()), "label"
    if kind == GENERATED[1]:
        table = make_titanic_like(n=n, seed=seed)
        return table.drop(columns=["PassengerId", "Name", "Ticket", "Cabin"], errors="ignore"), "Survived"
    raise XcoreError(f"unknown generated data {kind!r}; choose one of: {', '.join(GENERATED)}")


def generated_dataset(kind: str, length: int = 10, alphabet_size: int = 4, n: int = 1000,
                      seed: int = 0) -> RelationalDataset:
    """A generated table (`generated_table`) as a tabular dataset, as if uploaded as a CSV file."""
    table, label = generated_table(kind, length, alphabet_size, n, seed)
    name = f"{kind} (n={n}, seed={seed}" + (f", L={length}, A={alphabet_size})" if kind == GENERATED[0] else ")")
    ds = load((f"{kind.lower().replace(' ', '_')}.csv", table.to_csv(index=False).encode()), fmt="tabular",
              label=label)
    ds.name = name
    return ds
