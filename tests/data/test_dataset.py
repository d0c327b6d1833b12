"""RelationalDataset: validation (with provenance), defaults, deduplication and summaries."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from xcore.data import RelationalDataset, Schema, empty_table
from xcore.data.schema import Predicate
from xcore.errors import DataError

KNOWS = Predicate("knows", 2, ("person", "person"), closed=False, template="{0} knows {1}")
SMOKES = Predicate("smokes", 1, ("person",))
CITY = Predicate("lives_in", 2, ("person", "city"))


def frame(rows, values=None, file=None, lines=None, arity=2):
    df = pd.DataFrame(rows, columns=[f"a{i}" for i in range(arity)], dtype=object)
    if values is not None:
        df["value"] = values
    if file is not None:
        df["_file"] = file
        df["_line"] = lines
    return df


def dataset(**tables):
    return RelationalDataset([KNOWS, SMOKES, CITY], tables)


def error_of(fn, *args, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        fn(*args, **kwargs)
    return info.value


def test_defaults_and_empty_tables():
    ds = dataset(knows={"obs": frame([("a", "b")]), "targets": frame([("a", "c")])})
    assert ds.observations("knows")["value"].tolist() == [1.0]
    assert math.isnan(ds.targets("knows")["value"].iloc[0])
    assert len(ds.truth("knows")) == 0 and list(ds.truth("knows").columns) == ["a0", "a1", "value"]
    assert len(ds.observations("smokes")) == 0
    assert list(empty_table(3).columns) == ["a0", "a1", "a2", "value"]
    assert isinstance(ds.schema, Schema) and ds.schema.names == ["knows", "smokes", "lives_in"]


def test_provenance_names_file_and_line_and_is_stripped():
    ok = dataset(knows={"obs": frame([("a", "b")], [0.5], "k.txt", [7])})
    assert list(ok.observations("knows").columns) == ["a0", "a1", "value"]
    err = error_of(dataset, knows={"obs": frame([("a", "b"), ("b", "c")], [0.5, 1.5], "k.txt", [3, 9])})
    assert (err.file, err.line) == ("k.txt", 9) and "outside [0, 1]" in err.problem
    err = error_of(dataset, knows={"obs": frame([("a", "b"), ("b", "c")], ["1", "yes"])})
    assert (err.file, err.line) == ("knows/obs", 2) and "not a number" in err.problem


def test_blank_and_missing_arguments_are_rejected():
    err = error_of(dataset, smokes={"obs": frame([("a",), ("  ",)], arity=1)})
    assert err.line == 2 and "empty argument" in err.problem
    err = error_of(dataset, smokes={"obs": frame([("a",), (None,)], arity=1)})
    assert err.line == 2


def test_wrong_arity_unknown_predicate_and_partition():
    err = error_of(dataset, smokes={"obs": frame([("a", "b")], file="s.txt", lines=[4])})
    assert "arity 1" in err.problem and (err.file, err.line) == ("s.txt", 4)
    err = error_of(dataset, likes={"obs": frame([("a", "b")], file="l.txt", lines=[1])})
    assert "unknown predicate" in err.problem and err.file == "l.txt"
    assert "unknown partition" in error_of(dataset, smokes={"evidence": frame([("a",)], arity=1)}).problem
    assert "must map partitions" in error_of(dataset, smokes=frame([("a",)], arity=1)).problem
    assert "must map partitions" in error_of(dataset, likes=frame([("a",)], arity=1)).problem
    ds = dataset()
    assert "unknown partition" in error_of(ds.table, "knows", "test").problem
    assert "unknown predicate" in error_of(ds.table, "likes", "obs").problem


def test_duplicates_same_value_collapse_and_different_values_fail():
    ds = dataset(knows={"obs": frame([("a", "b"), ("a", "b"), ("b", "a")], [0.5, 0.5, 1.0])})
    assert len(ds.observations("knows")) == 2
    ds = dataset(knows={"targets": frame([("a", "b"), ("a", "b")])})
    assert len(ds.targets("knows")) == 1
    err = error_of(dataset, knows={"obs": frame([("a", "b"), ("c", "d"), ("a", "b")], [0.5, 1, 0.25],
                                                "k.txt", [1, 2, 3])})
    assert err.line == 3 and "different values" in err.problem and "knows(a, b)" in err.problem


def test_target_also_observed_is_an_error_naming_the_target_line():
    err = error_of(dataset, knows={"obs": frame([("a", "b"), ("c", "d")], file="o.txt", lines=[1, 2]),
                                   "targets": frame([("x", "y"), ("c", "d")], file="t.txt", lines=[5, 6])})
    assert (err.file, err.line) == ("t.txt", 6) and "also an observation" in err.problem
    zero = Predicate("rain", 0)
    with pytest.raises(DataError, match="also an observation"):
        RelationalDataset([zero], {"rain": {"obs": pd.DataFrame({"value": [1.0]}),
                                            "targets": pd.DataFrame(index=range(1))}})


def test_zero_ary_predicates():
    zero = Predicate("rain", 0)
    ds = RelationalDataset([zero], {"rain": {"obs": pd.DataFrame({"value": [0.3, 0.3]})}})
    assert ds.observations("rain")["value"].tolist() == [0.3]
    with pytest.raises(DataError, match="different values"):
        RelationalDataset([zero], {"rain": {"obs": pd.DataFrame({"value": [0.3, 0.4]})}})


def test_summaries_and_domains():
    ds = dataset(knows={"obs": frame([("a", "b"), ("b", "c")], [1.0, 0.2]),
                        "targets": frame([("a", "c")]), "truth": frame([("a", "c")], [1.0])},
                 smokes={"obs": frame([("a",)], arity=1)},
                 lives_in={"obs": frame([("a", "paris")])})
    s = ds.summary().set_index("predicate")
    assert s.loc["knows", ["observations", "targets", "truth"]].tolist() == [2, 1, 1]
    assert s.loc["knows", "template"] == "{0} knows {1}" and not s.loc["knows", "closed"]
    assert ds.n_atoms() == 6 and ds.n_atoms("obs") == 4
    assert ds.open_predicates == ["knows"] and ds.target_predicates == ["knows"]
    assert ds.constants("person").tolist() == ["a", "b", "c"]
    assert ds.constants("city").tolist() == ["paris"]
    assert ds.types() == ["person", "city"]
    hist = ds.value_histogram("knows", bins=5)
    assert hist["count"].tolist() == [0, 1, 0, 0, 1] and hist["low"].iloc[0] == 0.0
    prev = ds.preview("knows", n=1)
    assert prev["partition"].tolist() == ["obs", "targets", "truth"]
    long = ds.long_frame()
    assert list(long.columns) == ["predicate", "a0", "a1", "value", "partition"] and len(long) == 6
    assert long.loc[long.predicate == "smokes", "a1"].isna().all()
    g = ds.predicate_graph()
    assert set(g.edges) == {("knows", "smokes"), ("knows", "lives_in"), ("smokes", "lives_in")}
    assert g.nodes["knows"]["atoms"] == 4


def test_with_flags_and_subset():
    ds = dataset(knows={"obs": frame([("a", "b")])}, smokes={"obs": frame([("a",)], arity=1)})
    flipped = ds.with_flags("smokes", closed=False, explainable=False)
    assert not flipped.predicate("smokes").closed and not flipped.predicate("smokes").explainable
    assert ds.predicate("smokes").closed, "the original is unchanged"
    sub = ds.subset(["smokes"])
    assert sub.schema.names == ["smokes"] and len(sub.observations("smokes")) == 1
    with pytest.raises(DataError):
        ds.subset(["nope"])


def test_predicate_rendering_and_validation():
    assert KNOWS.render(["ann", "bob"]) == "ann knows bob"
    assert SMOKES.render(["ann"]) == "smokes(ann)"
    assert Predicate("p", 2, template="{0} {5}").render(["a", "b"]) == "p(a, b)"
    with pytest.raises(DataError):
        Predicate("1bad", 1)
    with pytest.raises(DataError):
        Predicate("p", 2, ("a",))
    with pytest.raises(DataError, match="declared twice"):
        Schema.of([SMOKES, SMOKES])
    assert Predicate.from_dict(KNOWS.to_dict()) == KNOWS


def test_value_column_accepts_numeric_strings_and_defaults_blank():
    ds = dataset(knows={"obs": frame([("a", "b"), ("c", "d")], ["0.25", ""]),
                        "targets": frame([("e", "f"), ("g", "h")], ["", "0.5"])})
    assert ds.observations("knows")["value"].tolist() == [0.25, 1.0]
    vals = ds.targets("knows")["value"].to_numpy()
    assert np.isnan(vals[0]) and vals[1] == 0.5
