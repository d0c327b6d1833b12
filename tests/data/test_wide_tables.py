"""Tables with many argument columns are checked all columns at once (a wide table of few rows spent
milliseconds per column in pandas: 300 Prolog predicates of arity 64 took 25 s); the errors still name
the first empty argument column by column, at its line, and the values keep the type a column had."""

from __future__ import annotations

import pandas as pd
import pytest

from xcore.data import load
from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError


def _dataset(columns: dict[str, list]) -> RelationalDataset:
    frame = pd.DataFrame(columns)
    return RelationalDataset(Schema.of([Predicate("p", len(columns))]), {"p": {"obs": frame}})


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_the_first_empty_argument_is_named_column_by_column(blank):
    cols = {"a0": ["x", "y", "z"], "a1": ["u", "v", "w"], "a2": ["q", blank, "s"], "a3": ["k", "l", blank]}
    with pytest.raises(DataError, match="empty argument a2") as e:
        _dataset(cols)
    assert e.value.line == 2  # the row, counted from 1 without provenance columns


def test_mixed_values_become_the_strings_a_single_column_gives():
    ds = _dataset({"a0": ["x", 7, 2.5], "a1": [True, "b", "c"], "a2": ["d", "e", "f"]})
    table = ds.tables["p"]["obs"]
    single = pd.Series(["x", 7, 2.5], dtype=object).astype(str)
    assert table["a0"].tolist() == single.tolist() == ["x", "7", "2.5"]
    assert table["a0"].dtype == single.dtype
    assert table["a1"].tolist() == ["True", "b", "c"]


def test_many_wide_prolog_predicates_load_every_argument():
    text = b"".join(b"p%d(" % k + b",".join(b"c%d_%d" % (k, j) for j in range(64)) + b").\n" for k in range(60))
    ds = load(("wide.pl", text))
    assert len(ds.schema) == 60
    row = ds.tables["p59"]["obs"].iloc[0]
    assert [row[f"a{j}"] for j in (0, 31, 63)] == ["c59_0", "c59_31", "c59_63"]
