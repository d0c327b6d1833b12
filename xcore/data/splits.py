"""Held-out splits of a dataset's labelled units: target atoms of a relational dataset, rows of a table.

`sklearn.model_selection` splits the rows of X; relational data has no rows to split, so a *unit* is
one labelled target atom (``cancer(anna)``) or one table row (``row 17``). `units` lists them with
a stratum (their truth) and `holdout` builds the two datasets a held-out evaluation needs:

- training: the training units are the targets, with their truth; the held-out units are gone.
- test: the training labels become observations (the transductive setting PSL and Markov logic
  users evaluate in), the held-out units are the targets with their truth; unlabelled targets stay
  targets of the test dataset.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.atom_texts import canonical_atoms
from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError

UNIT_COLUMNS: tuple[str, ...] = ("unit", "predicate", "stratum")
"""Columns of `units`: the unit's target text, its predicate (None for table rows), its truth."""


def row_text(index: object) -> str:
    """The canonical target text of a table row (``row 17``)."""
    return f"row {index}"


def atom_text(predicate: str, args: pd.DataFrame) -> pd.Series:
    """The canonical target text of each atom of `predicate` (``friends(anna, bob)``)."""
    columns = [args[c].to_numpy() for c in args.columns]
    return pd.Series(canonical_atoms(predicate, columns, len(args)), index=args.index, dtype=object)


def by_rows(dataset: RelationalDataset, predicates: Sequence[str] | None = None) -> bool:
    """True when the units are the rows of the dataset's table (a table with a label column, and no
    target predicates named: a method that reads the relational view of a table names them)."""
    return not predicates and dataset.tabular is not None and dataset.label is not None


def split_predicates(dataset: RelationalDataset, predicates: Sequence[str] | None = None) -> list[str]:
    """The target predicates whose labelled atoms are units: `predicates`, else every predicate with targets."""
    names = list(predicates) if predicates else list(dataset.target_predicates)
    for name in names:
        if name not in dataset.schema:
            raise XcoreError(f"unknown target predicate {name!r}; the dataset has: "
                             f"{', '.join(p.name for p in dataset.schema)}")
    return names


def _labelled(dataset: RelationalDataset, predicate: str) -> pd.DataFrame:
    """The target atoms of `predicate` that have a truth value, with it (column ``value``)."""
    cols = dataset.predicate(predicate).columns
    tab = dataset.tables[predicate]
    return tab["targets"][cols].merge(tab["truth"][[*cols, "value"]], on=cols, how="inner")


def units_with_arguments(dataset: RelationalDataset, predicate: str) -> pd.DataFrame:
    """The labelled atoms of `predicate` as units (column ``unit``) beside their argument columns."""
    lab = _labelled(dataset, predicate)
    cols = dataset.predicate(predicate).columns
    return lab[cols].assign(unit=atom_text(predicate, lab[cols]).to_numpy())


def units(dataset: RelationalDataset, predicates: Sequence[str] | None = None) -> pd.DataFrame:
    """The labelled units a held-out evaluation splits, in a stable order (see `UNIT_COLUMNS`)."""
    if by_rows(dataset, predicates):
        table = dataset.tabular
        truth = table[dataset.label]
        frame = pd.DataFrame({"unit": [row_text(i) for i in table.index], "predicate": None,
                              "stratum": truth.astype(object).to_numpy()})
        return frame[truth.notna().to_numpy()].reset_index(drop=True)
    parts = []
    for name in split_predicates(dataset, predicates):
        lab = _labelled(dataset, name)
        cols = dataset.predicate(name).columns
        parts.append(pd.DataFrame({"unit": atom_text(name, lab[cols]).to_numpy(), "predicate": name,
                                   "stratum": lab["value"].to_numpy()}))
    if not parts:
        return pd.DataFrame(columns=list(UNIT_COLUMNS))
    return pd.concat(parts, ignore_index=True)


def holdout(dataset: RelationalDataset, test_units: Sequence[str],
            predicates: Sequence[str] | None = None) -> tuple[RelationalDataset, RelationalDataset]:
    """(training, test) datasets holding out `test_units` (texts from `units`); see the module docstring."""
    held = set(map(str, test_units))
    if not held:
        raise XcoreError("a held-out split needs at least one test unit")
    if by_rows(dataset, predicates):
        return _holdout_rows(dataset, held)
    known = units(dataset, predicates)
    unknown = held - set(known["unit"])
    if unknown:
        raise XcoreError(f"{sorted(unknown)[0]!r} is not a labelled target unit of {dataset.name!r}")
    if len(held) == len(known):
        raise XcoreError("a held-out split must leave at least one labelled unit to train on")
    train_tables = dict(dataset.tables)
    test_tables = dict(dataset.tables)
    for name in split_predicates(dataset, predicates):
        cols = dataset.predicate(name).columns
        tab = dataset.tables[name]
        lab = _labelled(dataset, name)
        in_test = atom_text(name, lab[cols]).isin(held).to_numpy()
        train, test = lab[~in_test].reset_index(drop=True), lab[in_test].reset_index(drop=True)
        unlabelled = _unlabelled(tab, cols)
        train_tables[name] = {"obs": tab["obs"], "targets": train[cols], "truth": train}
        test_tables[name] = {"obs": pd.concat([tab["obs"], train], ignore_index=True),
                             "targets": pd.concat([test[cols], unlabelled], ignore_index=True), "truth": test}
    return _remade(dataset, train_tables, "train"), _remade(dataset, test_tables, "test")


def _unlabelled(tab: dict[str, pd.DataFrame], cols: list[str]) -> pd.DataFrame:
    """Target atoms without a truth value."""
    merged = tab["targets"][cols].merge(tab["truth"][cols], on=cols, how="left", indicator=True)
    return merged[merged["_merge"] == "left_only"][cols].reset_index(drop=True)


def _holdout_rows(dataset: RelationalDataset, held: set[str]) -> tuple[RelationalDataset, RelationalDataset]:
    """(training, test) datasets of a table's rows."""
    table = dataset.tabular
    texts = np.array([row_text(i) for i in table.index], dtype=object)
    in_test = np.isin(texts, list(held))
    missing = held - set(texts[in_test])
    if missing:
        raise XcoreError(f"{sorted(missing)[0]!r} is not a row of {dataset.name!r}")
    if in_test.all():
        raise XcoreError("a held-out split must leave at least one row to train on")
    return (_remade(dataset, dataset.tables, "train", table[~in_test]),
            _remade(dataset, dataset.tables, "test", table[in_test]))


def _remade(dataset: RelationalDataset, tables: dict, suffix: str,
            tabular: pd.DataFrame | None = None) -> RelationalDataset:
    """A copy of `dataset` with other tables (and table rows), named after its part."""
    return RelationalDataset(dataset.schema, tables, name=f"{dataset.name} ({suffix})",
                             description=dataset.description,
                             tabular=dataset.tabular if tabular is None else tabular, label=dataset.label,
                             rules=dataset.rules, user_predictions=dataset.user_predictions)
