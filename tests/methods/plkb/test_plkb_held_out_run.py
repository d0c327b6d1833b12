"""The classifier as an estimator (issue 33): `fit` learns from every labelled row, `predict` answers new
tables without reading their label, and the registered run fits on a seeded training part and reports
only held-out rows, with its results as learned attributes instead of `Run.extras`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from xcore.data import splits
from xcore.methods import run_method
from xcore.methods.evaluate import Holdout, held_out_parts
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.tables import generated_dataset


@pytest.fixture(scope="module")
def strings():
    return generated_dataset("Synthetic strings", length=6, alphabet_size=3, n=200, seed=3)


@pytest.fixture(scope="module")
def settings():
    return PLKBSettings(label="label", kb="direct", explain_rows=2, seed=5)


def test_fit_learns_from_every_labelled_row(strings, settings):
    est = settings.estimator().fit(strings)
    assert len(est.X_train_) == len(strings.tabular) == 200
    assert "label" not in est.X_train_.columns and est.X_test_ is None
    capped = settings.replace(max_rows=50).estimator().fit(strings)
    assert len(capped.X_train_) == 50  # the algorithm's own cost cap, a seeded sample


@pytest.mark.slow
def test_run_predicts_only_the_held_out_rows(strings, settings):
    run = run_method("plkb", strings, settings, cache=None, fits=None)
    units = settings.estimator().units(strings)
    held = units["unit"].iloc[held_out_parts(units, Holdout(settings.test_fraction, settings.seed))[0]]
    assert set(run.predictions["target"]) == set(held) and len(held) == 60
    model = run.model
    train_rows = {splits.row_text(i) for i in model.X_train_.index}
    assert train_rows.isdisjoint(run.predictions["target"])
    assert len(train_rows) == 140 and list(map(splits.row_text, model.X_test_.index)) == list(run.predictions["target"])
    assert "plkb" not in run.extras
    assert set(run.explanations["plkb:decisive"].targets) <= set(held)


def test_predict_new_rows_without_their_label(strings, settings):
    est = settings.estimator().fit(strings)
    unlabelled = replace(strings, tabular=strings.tabular.drop(columns=["label"]), name="new rows")
    first = est.predict(strings)
    again = est.predict(unlabelled)
    assert "truth" in first.columns and again["truth"].isna().all()
    np.testing.assert_array_equal(first["prediction"].to_numpy(), again["prediction"].to_numpy())
    assert first["target"].tolist() == [splits.row_text(i) for i in strings.tabular.index]
