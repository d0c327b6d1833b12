"""The shared held-out split of relational data: units are labelled target atoms or table rows; the
training part never holds a held-out unit, the test part observes the training labels."""

from __future__ import annotations

import pandas as pd
import pytest

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError


def _data() -> RelationalDataset:
    schema = Schema.of([Predicate("friends", 2, closed=True), Predicate("smokes", 1)])
    people = [f"p{i}" for i in range(6)]
    smokes_truth = pd.DataFrame({"a0": people[:5], "value": [1.0, 0.0, 1.0, 0.0, 1.0]})
    tables = {"friends": {"obs": pd.DataFrame({"a0": ["p0", "p1"], "a1": ["p1", "p2"], "value": 1.0})},
              "smokes": {"targets": pd.DataFrame({"a0": people, "value": float("nan")}), "truth": smokes_truth}}
    return RelationalDataset(schema, tables, name="toy")


def test_units_are_the_labelled_target_atoms():
    u = splits.units(_data())
    assert u["unit"].tolist() == [f"smokes(p{i})" for i in range(5)]
    assert u["stratum"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_holdout_hides_test_truth_from_training_and_observes_training_labels():
    train, test = splits.holdout(_data(), ["smokes(p1)", "smokes(p2)"])
    assert sorted(train.targets("smokes")["a0"]) == ["p0", "p3", "p4"]
    assert sorted(train.truth("smokes")["a0"]) == ["p0", "p3", "p4"]
    assert sorted(test.targets("smokes")["a0"]) == ["p1", "p2", "p5"]  # p5: unlabelled, still a target
    assert sorted(test.truth("smokes")["a0"]) == ["p1", "p2"]
    assert sorted(test.observations("smokes")["a0"]) == ["p0", "p3", "p4"]
    assert len(test.observations("friends")) == 2


def test_holdout_of_table_rows():
    table = pd.DataFrame({"x": [1, 2, 3, 4], "y": ["a", "b", "a", "b"]}, index=[10, 11, 12, 13])
    ds = RelationalDataset(Schema.of([]), {}, tabular=table, label="y")
    assert splits.units(ds)["unit"].tolist() == ["row 10", "row 11", "row 12", "row 13"]
    train, test = splits.holdout(ds, ["row 11"])
    assert train.tabular.index.tolist() == [10, 12, 13] and test.tabular.index.tolist() == [11]


def test_holdout_refuses_unknown_units_and_holding_out_everything():
    with pytest.raises(XcoreError, match="not a labelled target unit"):
        splits.holdout(_data(), ["smokes(p5)"])
    with pytest.raises(XcoreError, match="at least one labelled unit"):
        splits.holdout(_data(), [f"smokes(p{i})" for i in range(5)])


def test_units_of_a_binary_target_without_truth_are_none():
    schema = Schema.of([Predicate("knows", 2)])
    ds = RelationalDataset(schema, {"knows": {"targets": pd.DataFrame({"a0": ["x"], "a1": ["y"], "value": float("nan")})}})
    assert splits.units(ds).empty
