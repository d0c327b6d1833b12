"""The classifier's tables: the features + label table of a dataset, identifier-like and label-like
columns, and the generated tables the page offers (the paper's synthetic strings, Titanic-like rows)."""

from __future__ import annotations

import pandas as pd

from xcore.data import load
from xcore.data.dataset import RelationalDataset
from xcore.data.generators.strings import make_strings
from xcore.data.generators.titanic import make_titanic_like
from xcore.errors import DataError, XcoreError


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
