"""Issue 24's goal on one seed: ESMS with its default settings on friends_smokers_dataset(600), target
cancer, beats the constant training rate on test MSE and AUROC, and its model names smokes rules
with non-zero weights (the five-seed figures are in bench/RESULTS.md, bench/esms_unary_goal.py)."""

import numpy as np
import pytest

from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.esms.runs import default_settings, held_out_split
from xcore.psl import prediction_metrics


@pytest.mark.slow
def test_default_esms_beats_the_constant_rate_on_a_binary_unary_target():
    ds = friends_smokers_dataset(600, seed=0)
    settings = default_settings(ds).replace(target="cancer", n_jobs=1)
    assert settings.weight_learning == "calibrated" and settings.counterparts
    est, train, test = held_out_split(ds, settings)
    predictions = est.fit(train).predict(test)
    y = predictions["truth"].to_numpy(float)
    model = prediction_metrics(predictions["prediction"].to_numpy(float), y)
    rate = float(est.train_.truth("cancer")["value"].mean())
    constant = prediction_metrics(np.full(len(y), rate), y)
    assert len(y) >= 50  # the test split is not one atom
    assert model["mse"] < constant["mse"] and model["auroc"] > constant["auroc"] + 0.02
    smokes = [r for r in est.rules_ if "smokes" in r.text("psl") and r.weight > 0]
    assert smokes
