"""Every run carries the trivial predictor's figure beside its metrics (majority class, mean predictor)."""

import numpy as np
import pytest

from xcore.methods.base import Run, prediction_frame
from xcore.methods.baselines import baseline_metrics
from xcore.viz.views import baseline_table


def test_classes_get_majority_accuracy():
    truth = ["good"] * 7 + ["bad"] * 3
    pred = ["good"] * 3 + ["bad"] * 7
    acc = float(np.mean(np.array(truth) == np.array(pred)))
    run = Run("plkb", {}, "fp", prediction_frame(range(10), pred, truth), metrics={"accuracy": acc})
    assert run.metrics["baseline_accuracy"] == pytest.approx(0.7)
    table = baseline_table(run.metrics)
    assert table.to_dict("records") == [{"metric": "accuracy", "model": pytest.approx(0.6), "baseline": pytest.approx(0.7),
                                         "baseline is": "majority class", "model beats it": "no"}]


def test_binary_probability_gets_rate_predictor_errors_and_chance():
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(float)
    frame = prediction_frame(range(200), rng.random(200), y)
    base = baseline_metrics(frame, {"mse": 0.1, "mae": 0.2, "auroc": 0.8, "accuracy": 0.9, "f1": 0.5, "n": 3})
    p = y.mean()
    assert base["baseline_mse"] == pytest.approx(np.mean((y - p) ** 2))
    assert base["baseline_mae"] == pytest.approx(np.mean(np.abs(y - p)))
    assert base["baseline_auroc"] == 0.5
    assert base["baseline_accuracy"] == pytest.approx(1 - p)
    assert base["baseline_f1"] == 0.0  # always "no" never finds a positive
    assert "baseline_n" not in base


def test_regression_gets_mean_predictor_and_missing_truth_is_skipped():
    y = np.array([1.0, 2.0, 4.0, 9.0, np.nan])
    frame = prediction_frame(range(5), y, y)
    base = baseline_metrics(frame, {"mse": 0.0, "rmse": 0.0})
    assert base["baseline_mse"] == pytest.approx(np.var(y[:4]))
    assert base["baseline_rmse"] == pytest.approx(np.std(y[:4]))
    assert baseline_metrics(prediction_frame(range(2), [0.1, 0.2]), {"mse": 0.0}) == {}


def test_bundle_round_trip_keeps_baselines():
    run = Run("plkb", {}, "fp", prediction_frame(range(4), ["a"] * 4, ["a", "a", "a", "b"]), metrics={"accuracy": 0.75})
    back = Run.from_bundle(run.to_json())
    assert back.metrics["baseline_accuracy"] == pytest.approx(0.75)


def test_numbers_written_as_text_get_the_value_baselines_the_scorer_reports():
    """A 0/1 truth stored as text ("0", "1") is scored as numbers (mse, auroc, ...): each figure gets its
    baseline, as for the same truth stored as numbers."""
    y = np.array([1, 0, 0, 1, 0, 0, 0, 1])
    metrics = {"mse": 0.2, "auroc": 0.7, "accuracy": 0.8}
    as_text = baseline_metrics(prediction_frame(range(8), y.astype(float), y.astype(str)), metrics)
    as_numbers = baseline_metrics(prediction_frame(range(8), y.astype(float), y.astype(float)), metrics)
    assert as_text == as_numbers
    assert as_text["baseline_mse"] == pytest.approx(np.var(y)) and as_text["baseline_auroc"] == 0.5
