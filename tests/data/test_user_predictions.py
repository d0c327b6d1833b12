"""Predictions a user brings: reading and validation (errors name file, line and column; nothing lost) and
the one label swap (named atoms / rows take the model's outputs as labels, the data's truth kept aside)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data import load
from xcore.data.generators.scenes import make_scenes
from xcore.data.predictions import read_predictions, with_predictions
from xcore.errors import DataError


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(n_scenes=8, seed=1)


@pytest.fixture(scope="module")
def table():
    frame = pd.DataFrame({"x": ["a", "b", "a", "c", "b", "a"], "n": [1, 2, 3, 4, 5, 6], "label": [1, 0, 1, 0, 0, 1]})
    return load(("t.csv", frame.to_csv(index=False).encode()), fmt="tabular", label="label")


def _read(text: str, ds, name: str = "preds.csv"):
    return read_predictions((name, text.encode()), ds)


def test_atoms_are_read_with_header_quotes_and_words(scenes):
    obs = scenes.tables["street"]["obs"]["a0"].astype(str).tolist()
    tgt = scenes.tables["street"]["targets"]["a0"].astype(str).tolist()
    text = f"target,prediction,score\nstreet({obs[0]}),true,0.9\n\" street( {tgt[0]} ) \",0,\nstreet({tgt[1]}),1,0.7\n"
    p = _read(text, scenes)
    assert list(p.frame["target"]) == [f"street({obs[0]})", f"street({tgt[0]})", f"street({tgt[1]})"]
    assert list(p.frame["prediction"]) == [1.0, 0.0, 1.0] and p.kind == "class" and p.has_score
    assert np.isnan(p.frame["score"][1]) and list(p.frame["line"]) == [2, 3, 4]
    truth = scenes.tables["street"]["truth"].set_index("a0")["value"]
    assert p.frame["truth"][1] == truth[tgt[0]]


@pytest.mark.parametrize("text, line, words", [
    ("target,prediction\nstreet(nobody),1\n", 2, "unknown target 'street(nobody)'"),
    ("street(X)\n", 1, "expected 2 or 3 fields"),
    ("target,prediction\nnot an atom,1\n", 2, "not a ground atom"),
    ("target,prediction\nmoon(a),1\n", 2, "unknown predicate 'moon'"),
    ("target,prediction\n\"street(a, b)\",1\n", 2, "street has arity 1"),
    ("target,prediction\nstreet(a, b),1\n", 2, "quote an atom with a comma"),
    ("target,prediction,score\n{t0},1,high\n", 2, "column score: 'high' is not a number"),
    ("target,prediction,score\n{t0},1,nan\n", 2, "column score: 'nan' is not a finite number"),
    ("target,prediction\n{t0},maybe\n", 2, "column prediction: 'maybe' is not a number"),
    ("target,prediction\n{t0},1.5\n", 2, "column prediction: '1.5' is outside [0, 1]"),
    ("target,prediction\n{t0},1\n{t1},0\n{t0},0\n", 4, "duplicate target 'street({a0})' (first given on line 2)"),
    ("target,prediction\n\"{t0},1\n", 2, "not valid CSV"),
])
def test_bad_predictions_name_file_line_and_column(scenes, text, line, words):
    tgt = scenes.tables["street"]["targets"]["a0"].astype(str).tolist()
    text = text.format(t0=f"street({tgt[0]})", t1=f"street({tgt[1]})", a0=tgt[0])
    with pytest.raises(DataError) as err:
        _read(text, scenes, "my_preds.csv")
    assert err.value.file == "my_preds.csv" and err.value.line == line, str(err.value)
    assert words.format(a0=tgt[0]) in str(err.value)


@pytest.mark.parametrize("text, words", [("", "the predictions file is empty"),
                                          ("  \n\n", "the predictions file is empty"),
                                          ("target,prediction\n", "has a header but no predictions")])
def test_empty_predictions_files_are_refused(scenes, text, words):
    with pytest.raises(DataError, match=words) as err:
        _read(text, scenes, "empty.csv")
    assert err.value.file == "empty.csv"


def test_a_missing_file_and_bad_bytes_are_data_errors(scenes, tmp_path):
    with pytest.raises(DataError, match="no such predictions file"):
        read_predictions(tmp_path / "nope.csv", scenes)
    with pytest.raises(DataError, match="not UTF-8"):
        read_predictions(("bin.csv", b"\xff\xfe\x00bad"), scenes)


def test_the_swap_replaces_named_labels_keeps_evidence_and_drops_unnamed_truth(scenes):
    obs = scenes.tables["street"]["obs"]
    truth = scenes.tables["street"]["truth"]
    named_obs, named_tgt = obs["a0"].astype(str)[:3].tolist(), truth["a0"].astype(str)[:2].tolist()
    flip = {a: 1.0 - v for a, v in zip(obs["a0"].astype(str), obs["value"])}
    flip.update({a: 1.0 - v for a, v in zip(truth["a0"].astype(str), truth["value"])})
    rows = [f"street({a}),{int(flip[a])}" for a in named_obs + named_tgt]
    p = _read("target,prediction\n" + "\n".join(rows) + "\n", scenes)
    out = with_predictions(scenes, p)
    assert out.user_predictions is p and out.fingerprint() != scenes.fingerprint()
    o = out.tables["street"]["obs"].set_index(out.tables["street"]["obs"]["a0"].astype(str))["value"]
    assert len(o) == len(obs)  # observations are evidence: unnamed ones stay
    assert all(o[a] == flip[a] for a in named_obs)
    assert all(o[a] == v for a, v in zip(obs["a0"].astype(str)[3:], obs["value"][3:]))
    t = out.tables["street"]["truth"]
    assert sorted(t["a0"].astype(str)) == sorted(named_tgt)  # unnamed truth is no longer a label
    assert all(v == flip[a] for a, v in zip(t["a0"].astype(str), t["value"]))
    assert out.tables["table"]["truth"].equals(scenes.tables["table"]["truth"])  # other predicates untouched
    assert scenes.tables["street"]["truth"].equals(truth)  # the input is not changed


def test_targets_without_truth_get_the_models_label():
    ds = make_scenes(n_scenes=6, seed=2)
    tables = {p: dict(parts) for p, parts in ds.tables.items()}
    tables["street"]["truth"] = tables["street"]["truth"][:0]
    from xcore.data.dataset import RelationalDataset

    bare = RelationalDataset(ds.schema, tables, name="no truth")
    tgt = bare.tables["street"]["targets"]["a0"].astype(str).tolist()
    p = _read("target,prediction\n" + "".join(f"street({a}),1\n" for a in tgt), bare)
    assert p.frame["truth"].isna().all()
    out = with_predictions(bare, p)
    assert sorted(out.tables["street"]["truth"]["a0"].astype(str)) == sorted(tgt)
    assert (out.tables["street"]["truth"]["value"] == 1.0).all()


def test_table_rows_are_read_and_swapped(table):
    p = _read("target,prediction,score\nrow 0,0,0.2\n1,1,0.9\nrow 3,1,0.6\n", table)
    assert list(p.frame["target"]) == ["row 0", "row 1", "row 3"] and list(p.frame["prediction"]) == ["0", "1", "1"]
    assert list(p.frame["truth"]) == ["1", "0", "0"]
    out = with_predictions(table, p)
    assert list(out.tabular["label"]) == [0, 1, None, 1, None, None]
    assert list(table.tabular["label"]) == [1, 0, 1, 0, 0, 1]
    truth = out.tables["label"]["truth"]
    assert sorted(zip(truth["a0"], truth["a1"])) == [("r1", "0"), ("r2", "1"), ("r4", "1")]


@pytest.mark.parametrize("text, line, words", [
    ("target,prediction\nrow 99,1\n", 2, "unknown target 'row 99': not a row id"),
    ("target,prediction\nrow 1,1\n1,0\n", 3, "duplicate target 'row 1' (first given on line 2)"),
    ("target,prediction\nrow 1,yes\n", 2, "column prediction: 'yes' is not a class of the label column 'label'"),
    ("target,prediction,score\nrow 1,1,x\n", 2, "column score: 'x' is not a number"),
])
def test_bad_table_predictions_name_the_line(table, text, line, words):
    with pytest.raises(DataError) as err:
        _read(text, table, "rows.csv")
    assert err.value.line == line and words in str(err.value)
