"""Feature-value atoms: the `Domain` (features and their values) and its integer atom ids.

Atom 0 is the class atom POS; feature ``f``'s ``j``-th value is atom ``offsets[f] + j``. A query
is an int array with one code per feature: the value index, `ABSENT` (feature left out of the
query, its atoms stay free) or `UNSEEN` (the feature is known but has a value outside the
domain: every known value of that feature is false).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from xcore.errors import DataError, SchemaError

POS = "POS"
"""Name of the class atom ("the row belongs to the positive class")."""

ABSENT = -1
"""Query code: the feature is left out of the query (its atoms are free in the LP)."""
UNSEEN = -2
"""Query code: the feature has a value never seen in training (all its known atoms are false)."""

FREE, FALSE, TRUE = -1, 0, 1
"""Atom states under a query."""


@dataclass(frozen=True)
class Lit:
    """One literal: the atom POS (``feature is None``) or ``feature_value``, possibly negated."""

    feature: str | None
    value: str | None = None
    positive: bool = True

    @property
    def is_class(self) -> bool:
        return self.feature is None

    def negated(self) -> "Lit":
        return Lit(self.feature, self.value, not self.positive)

    def atom_text(self) -> str:
        return POS if self.feature is None else f"{self.feature}_{self.value}"

    def text(self) -> str:
        return ("" if self.positive else "~") + self.atom_text()


@dataclass(frozen=True)
class Domain:
    """Ordered features, each with its ordered tuple of (string) values; defines the atom ids."""

    features: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    _index: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        feats = tuple(str(f) for f in self.features)
        vals = tuple(tuple(str(v) for v in vs) for vs in self.values)
        if len(feats) != len(vals):
            raise SchemaError(f"domain has {len(feats)} features but {len(vals)} value lists")
        if len(set(feats)) != len(feats):
            dup = pd.Series(feats)[pd.Series(feats).duplicated()].iloc[0]
            raise SchemaError(f"feature {dup!r} appears twice in the domain")
        if POS in feats:
            raise SchemaError(f"{POS!r} is reserved for the class atom and cannot name a feature")
        for f, vs in zip(feats, vals):
            if len(set(vs)) != len(vs):
                raise SchemaError(f"feature {f!r} lists a value twice")
            if not vs:
                raise SchemaError(f"feature {f!r} has no values")
        object.__setattr__(self, "features", feats)
        object.__setattr__(self, "values", vals)
        cards = np.array([len(v) for v in vals], dtype=np.int64)
        offsets = (1 + np.concatenate([[0], np.cumsum(cards)[:-1]])).astype(np.int64) if len(cards) \
            else np.zeros(0, dtype=np.int64)
        atom_feature = np.concatenate([[-1], np.repeat(np.arange(len(cards)), cards)]).astype(np.int64)
        atom_value = np.concatenate([np.array([-1])] + [np.arange(c) for c in cards]).astype(np.int64)
        for arr in (cards, offsets, atom_feature, atom_value):
            arr.setflags(write=False)
        index = {"feature": {f: i for i, f in enumerate(feats)},
                 "value": [{v: j for j, v in enumerate(vs)} for vs in vals],
                 "cards": cards, "offsets": offsets, "atom_feature": atom_feature, "atom_value": atom_value}
        object.__setattr__(self, "_index", index)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(cls, X: pd.DataFrame, orders: Mapping[str, Sequence[str]] | None = None) -> "Domain":
        """The domain of a table of categorical (string) columns: its distinct values per column,
        in the order `orders` gives for that column (e.g. bins low to high), else sorted
        (numbers numerically)."""
        values = []
        orders = orders or {}
        for col in X.columns:
            present = set(pd.unique(X[col].astype(str)))
            first = [v for v in orders.get(str(col), ()) if v in present]
            rest = sorted(present - set(first), key=_natural_key)
            values.append(tuple(first + rest))
        return cls(tuple(str(c) for c in X.columns), tuple(values))

    @classmethod
    def from_dict(cls, values: Mapping[str, Sequence[str]]) -> "Domain":
        return cls(tuple(values), tuple(tuple(v) for v in values.values()))

    # ------------------------------------------------------------------ sizes and ids
    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def cardinalities(self) -> np.ndarray:
        """Number of values of every feature (read-only array)."""
        return self._index["cards"]

    @property
    def offsets(self) -> np.ndarray:
        """Atom id of each feature's first value (atom 0 is POS)."""
        return self._index["offsets"]

    @property
    def n_atoms(self) -> int:
        return 1 + int(self._index["cards"].sum())

    @property
    def atom_feature(self) -> np.ndarray:
        """Feature index of every atom (-1 for POS)."""
        return self._index["atom_feature"]

    @property
    def atom_value(self) -> np.ndarray:
        """Value index (within its feature) of every atom (-1 for POS)."""
        return self._index["atom_value"]

    def feature_index(self, feature: str) -> int:
        try:
            return self._index["feature"][str(feature)]
        except KeyError:
            raise SchemaError(f"unknown feature {feature!r}; known features: {_preview(self.features)}") from None

    def value_index(self, feature: str, value: str) -> int:
        f = self.feature_index(feature)
        try:
            return self._index["value"][f][str(value)]
        except KeyError:
            raise SchemaError(
                f"unknown value {value!r} of feature {feature!r}; known values: {_preview(self.values[f])}"
            ) from None

    def has(self, feature: str, value: str | None = None) -> bool:
        f = self._index["feature"].get(str(feature))
        if f is None:
            return False
        return value is None or str(value) in self._index["value"][f]

    def atom_id(self, lit: Lit) -> int:
        if lit.feature is None:
            return 0
        f = self.feature_index(lit.feature)
        return int(self.offsets[f]) + self.value_index(lit.feature, lit.value)  # type: ignore[arg-type]

    def atom_lit(self, atom: int) -> Lit:
        """The positive literal of an atom id."""
        if atom == 0:
            return Lit(None)
        f = int(self.atom_feature[atom])
        return Lit(self.features[f], self.values[f][int(self.atom_value[atom])])

    def atom_names(self) -> list[str]:
        """Text of every atom in id order (``POS``, ``f_v``, ...)."""
        return [POS] + [f"{f}_{v}" for f, vs in zip(self.features, self.values) for v in vs]

    # ------------------------------------------------------------------ queries
    def encode(self, X: pd.DataFrame, missing_ok: bool = True) -> np.ndarray:
        """Integer codes (n_rows, n_features) of a table: value index, or `UNSEEN` for unknown values.

        Columns are matched by name; a missing column raises `DataError` unless `missing_ok`, in
        which case it is `ABSENT` for every row (a partial query). Extra columns are ignored.
        """
        codes = np.full((len(X), self.n_features), ABSENT, dtype=np.int64)
        for f, name in enumerate(self.features):
            if name not in X.columns:
                if not missing_ok:
                    raise DataError(f"column {name!r} is missing (the model was trained on it)")
                continue
            col = X[name]
            known = col.notna().to_numpy()
            c = pd.Index(self.values[f]).get_indexer(col.astype(str)).astype(np.int64)
            c[c < 0] = UNSEEN
            c[~known] = ABSENT
            codes[:, f] = c
        return codes

    def query(self, values: Mapping[str, str]) -> np.ndarray:
        """Codes of one query given as {feature: value}; features not named are `ABSENT`."""
        codes = np.full(self.n_features, ABSENT, dtype=np.int64)
        for feat, val in values.items():
            f = self.feature_index(feat)
            codes[f] = self._index["value"][f].get(str(val), UNSEEN)
        return codes

    def decode(self, codes: np.ndarray) -> dict[str, str | None]:
        """{feature: value} of a query (None for UNSEEN values); absent features are omitted."""
        out: dict[str, str | None] = {}
        for f, c in enumerate(np.asarray(codes)):
            if c == ABSENT:
                continue
            out[self.features[f]] = None if c == UNSEEN else self.values[f][int(c)]
        return out

    def atom_states(self, codes: np.ndarray) -> np.ndarray:
        """State of every atom under a query: TRUE, FALSE or FREE (POS is always FREE)."""
        codes = np.asarray(codes, dtype=np.int64)
        q = np.concatenate([[ABSENT], np.repeat(codes, self._index["cards"])])
        state = np.where(q == ABSENT, FREE, q == self._index["atom_value"]).astype(np.int8)
        state[0] = FREE
        return state

    def query_text(self, codes: np.ndarray) -> str:
        """``a1=0, a3=1`` for a query (``(empty)`` for none)."""
        d = self.decode(codes)
        return ", ".join(f"{k}={'?' if v is None else v}" for k, v in d.items()) or "(empty)"


def _natural_key(v: str):
    """Sort numbers numerically and everything else as text (numbers first)."""
    try:
        x = float(v)
    except ValueError:
        return (1, 0.0, v)
    return (0, x, v) if math.isfinite(x) else (1, 0.0, v)


def _preview(items: Iterable[str], n: int = 12) -> str:
    items = list(items)
    s = ", ".join(map(str, items[:n]))
    return s + (f", ... ({len(items)} in all)" if len(items) > n else "")
