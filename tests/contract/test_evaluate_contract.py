"""Every registered method under the shared held-out evaluation (`xcore.methods.evaluate`): its
estimator fits on training data and predicts new data it has not seen, without reading the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_method_contract import METHODS, quick_settings

from xcore.data import splits
from xcore.errors import ConfigError, XcoreError
from xcore.methods.evaluate import Holdout, KFold, evaluate, fit_predict, held_out_parts

pytestmark = pytest.mark.xdist_group("contract")


@pytest.mark.slow
@pytest.mark.parametrize("key", METHODS)
def test_evaluate_scores_every_held_out_unit_once(key):
    ds, settings = quick_settings(key)
    ev = evaluate(key, ds, settings, Holdout(0.3, seed=0))
    units = settings.estimator().units(ds)
    held = set(units["unit"].iloc[held_out_parts(units, Holdout(0.3, seed=0))[0]])
    assert set(ev.predictions["target"]) == held
    assert ev.predictions["target"].is_unique
    assert ev.predictions["truth"].notna().all()
    assert int(ev.folds["n_test"].iloc[0]) == len(held) and ev.metrics["n_scored"] == len(held)
    assert any(k.startswith("baseline_") for k in ev.metrics)


@pytest.mark.slow
@pytest.mark.parametrize("key", METHODS)
def test_predict_new_data_does_not_read_its_truth(key):
    """Fit on the training part, predict the held-out part; flipping the held-out truth changes nothing."""
    ds, settings = quick_settings(key)
    est = settings.estimator()
    units = est.units(ds)
    test_units = units["unit"].iloc[held_out_parts(units, Holdout(0.3, seed=1))[0]].astype(str).tolist()
    est, first = fit_predict(est, ds, test_units)
    assert set(first["target"]) == set(test_units)
    _, test = est.holdout(ds, test_units)
    flipped = _flip_truth(test)
    again = est.predict(flipped)
    again = again[again["target"].isin(test_units)].set_index("target").loc[first["target"]]
    np.testing.assert_array_equal(first["prediction"].astype(str).to_numpy(), again["prediction"].astype(str).to_numpy())


def _flip_truth(data):
    """The same data with every truth value (or label) of the held-out units changed."""
    if splits.by_rows(data):
        table = data.tabular.copy()
        labels = table[data.label].astype(str)
        classes = sorted(labels.unique())
        other = {c: classes[(i + 1) % len(classes)] for i, c in enumerate(sorted(set(classes) | {"?"}))
                 if c in classes}
        table[data.label] = labels.map(other) if len(classes) > 1 else "?"
        return splits._remade(data, data.tables, "flipped", table)
    tables = {p: dict(parts) for p, parts in data.tables.items()}
    for p in data.target_predicates:
        truth = tables[p]["truth"].copy()
        truth["value"] = 1.0 - truth["value"]
        tables[p]["truth"] = truth
    return splits._remade(data, tables, "flipped")


def test_kfold_parts_cover_every_unit_once_and_are_stratified():
    units = pd.DataFrame({"unit": [f"u{i}" for i in range(20)], "predicate": "p",
                          "stratum": [1.0] * 6 + [0.0] * 14})
    parts = held_out_parts(units, KFold(3, seed=0))
    assert sorted(np.concatenate(parts).tolist()) == list(range(20))
    for part in parts:
        assert 1 <= (units["stratum"].iloc[part] == 1.0).sum() <= 3
    assert [p.tolist() for p in parts] == [p.tolist() for p in held_out_parts(units, KFold(3, seed=0))]


def test_split_settings_are_validated():
    with pytest.raises(ConfigError, match="test_size"):
        Holdout(1.5)
    with pytest.raises(ConfigError, match="n_splits"):
        KFold(1)
    with pytest.raises(XcoreError, match="at least 2 labelled units"):
        held_out_parts(pd.DataFrame({"unit": ["a"], "predicate": "p", "stratum": [1.0]}), Holdout())


def test_predefined_folds_are_the_datas_own_folds():
    """Mutagenesis 188 ships its ten folds as cv_fold(compound, fold): each part is one fold's compounds."""
    from xcore.drm.mutagenesis import load_mutagenesis
    from xcore.methods.evaluate import PredefinedFolds

    data = load_mutagenesis()
    units = splits.units(data, ["active"])
    parts = held_out_parts(units, PredefinedFolds("cv_fold"), data)
    folds = data.observations("cv_fold")
    by_fold = folds.groupby(folds["a1"].astype(str))["a0"].apply(lambda s: sorted(f"active({c})" for c in s))
    assert len(parts) == 10 == len(by_fold)
    for part, (_, expected) in zip(parts, sorted(by_fold.items())):
        assert sorted(units["unit"].iloc[part]) == expected
    with pytest.raises(XcoreError, match="not a predicate"):
        held_out_parts(units, PredefinedFolds("no_such_fold"), data)
    with pytest.raises(XcoreError, match="must be binary"):
        held_out_parts(units, PredefinedFolds("active"), data)
    with pytest.raises(XcoreError, match="pass it"):
        held_out_parts(units, PredefinedFolds("cv_fold"))
    with pytest.raises(ConfigError, match="fold predicate"):
        PredefinedFolds("")
    import dataclasses

    tables = {p: dict(parts) for p, parts in data.tables.items()}
    tables["cv_fold"]["obs"] = tables["cv_fold"]["obs"].iloc[1:]  # the first compound loses its fold
    with pytest.raises(XcoreError, match="1 labelled units have no fold in cv_fold"):
        held_out_parts(units, PredefinedFolds("cv_fold"), dataclasses.replace(data, tables=tables))
