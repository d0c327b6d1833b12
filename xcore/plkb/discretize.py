"""Turn a mixed table into categorical (string) features: quantile bins for numeric columns.

A numeric column with more distinct values than its bin count is cut at quantiles of the
training data (or at user-given edges); bins are right-closed and named ``le<a>``,
``<a>to<b>``, ``gt<b>`` so they read well inside clauses (``Age_22to28``). Other columns are
used as they are (as text). Missing values become the category ``NA``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from xcore.errors import DataError

MISSING = "NA"


def _fmt(x: float) -> str:
    return f"{x:.4g}".replace("+", "")


def bin_labels(edges: Sequence[float]) -> list[str]:
    """Names of the bins cut at inner `edges`: le<e0>, <e0>to<e1>, ..., gt<e_last>."""
    e = [_fmt(x) for x in edges]
    if not e:
        return ["all"]
    return [f"le{e[0]}"] + [f"{a}to{b}" for a, b in zip(e[:-1], e[1:])] + [f"gt{e[-1]}"]


@dataclass
class Discretizer:
    """Fit on training features; `transform` gives a string table for the KB learners.

    n_bins: default number of quantile bins for numeric columns. bins: per-column override, an
    int (bin count) or a list of inner cut points (edges). categorical: columns to keep as
    categories even if numeric. A numeric column with at most `n_bins` distinct values is kept
    as categorical (its values are already few).
    """

    n_bins: int = 4
    bins: Mapping[str, int | Sequence[float]] = field(default_factory=dict)
    categorical: Sequence[str] = ()
    edges_: dict[str, np.ndarray] = field(default_factory=dict, init=False)
    columns_: list[str] = field(default_factory=list, init=False)
    numeric_categories_: set[str] = field(default_factory=set, init=False)

    def fit(self, X: pd.DataFrame) -> "Discretizer":
        if not isinstance(X, pd.DataFrame):
            raise DataError(f"features must be a pandas DataFrame, got {type(X).__name__}")
        if self.n_bins < 1:
            raise DataError(f"n_bins must be at least 1, got {self.n_bins}")
        unknown = set(self.bins) - set(map(str, X.columns))
        if unknown:
            raise DataError(f"bins given for unknown column(s): {', '.join(sorted(unknown))}")
        self.columns_ = [str(c) for c in X.columns]
        self.edges_ = {}
        self.numeric_categories_ = set()
        for c in X.columns:
            name = str(c)
            col = X[c]
            if name in self.categorical or not _is_numeric(col):
                continue
            spec = self.bins.get(name, self.n_bins)
            values = col.dropna().to_numpy(dtype=float)
            if isinstance(spec, (int, np.integer)):
                if spec < 1:
                    raise DataError(f"column {name!r}: bin count must be at least 1, got {spec}")
                if len(np.unique(values)) <= spec and name not in self.bins:
                    self.numeric_categories_.add(name)  # few distinct values: keep them as categories
                    continue
                qs = np.quantile(values, np.linspace(0, 1, int(spec) + 1)[1:-1]) if len(values) else []
                edges = np.unique(np.asarray(qs, dtype=float))
            else:
                edges = np.asarray(sorted(float(x) for x in spec), dtype=float)
                if not np.all(np.isfinite(edges)):
                    raise DataError(f"column {name!r}: bin edges must be finite numbers")
                edges = np.unique(edges)
            self.edges_[name] = edges
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """String categories for every fitted column present in X (missing -> 'NA')."""
        if not self.columns_:
            raise DataError("the discretizer is not fitted")
        out = {}
        for name in self.columns_:
            if name not in X.columns:
                continue
            col = X[name]
            if name in self.edges_:
                edges = self.edges_[name]
                labels = np.asarray(bin_labels(edges), dtype=object)
                num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
                idx = np.searchsorted(edges, num, side="left")  # right-closed bins
                s = labels[np.minimum(idx, len(labels) - 1)]
                s = np.where(np.isnan(num), MISSING, s)
                out[name] = pd.Series(s, index=X.index, dtype=object)
            elif name in self.numeric_categories_:
                num = pd.to_numeric(col, errors="coerce")
                text = col.astype(object).where(col.notna(), MISSING).astype(str)
                canon = np.where(num.notna(), num.map(_canon_number).astype(object), text)
                out[name] = pd.Series(canon, index=X.index, dtype=object)
            else:
                s = col.astype(object).where(col.notna(), MISSING).astype(str)
                out[name] = s
        return pd.DataFrame(out, index=X.index)

    def orders(self) -> dict[str, list[str]]:
        """Value order of every binned column: its bins low to high, then NA."""
        return {name: bin_labels(e) + [MISSING] for name, e in self.edges_.items()}

    def fit_transform(self, X: pd.DataFrame) -> pd.DataFrame:
        return self.fit(X).transform(X)

    def describe(self) -> pd.DataFrame:
        """One row per column: kind (numeric/categorical), edges, bin names."""
        rows = []
        for name in self.columns_:
            if name in self.edges_:
                e = self.edges_[name]
                rows.append({"column": name, "kind": "numeric", "edges": [float(x) for x in e],
                             "bins": bin_labels(e)})
            else:
                rows.append({"column": name, "kind": "categorical", "edges": [], "bins": []})
        return pd.DataFrame(rows, columns=["column", "kind", "edges", "bins"])

    def value_text(self, column: str, value: str) -> str:
        """Readable condition for a feature value: ``22 < Age <= 28``, ``Sex = male``."""
        if column in self.edges_ and value != MISSING:
            e = self.edges_[column]
            labels = bin_labels(e)
            if value in labels:
                i = labels.index(value)
                if len(e) == 0:
                    return f"{column} (any)"
                if i == 0:
                    return f"{column} <= {_fmt(e[0])}"
                if i == len(labels) - 1:
                    return f"{column} > {_fmt(e[-1])}"
                return f"{_fmt(e[i - 1])} < {column} <= {_fmt(e[i])}"
        return f"{column} = {value}"


def _canon_number(x: float) -> str:
    """One text per number: 3, 3.0 and "3" all read as ``3``; 2.5 as ``2.5``."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
