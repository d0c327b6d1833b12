"""DRM on small data: the default run predicts every example out of fold (one DRM per fold), so the ten
trains teach something (a single held-out fold of two trains left accuracy at the majority's 0.5)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from xcore.data.samples import load_sample
from xcore.drm.cross_fit import CROSS_FIT_UP_TO, CrossFittedDRM, cross_fits
from xcore.drm.runs import default_settings, run
from xcore.drm.trains import generate_trains
from xcore.methods.driver import with_settings

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("drm-cross-fit")]  # one worker: the module fixture is fitted once


@pytest.fixture(scope="module")
def trains_run():
    ds = load_sample("trains_michalski10")
    return ds, run(ds, default_settings(ds))


def test_every_train_is_predicted_once_by_a_model_that_did_not_see_it(trains_run):
    ds, r = trains_run
    model = r.model
    assert isinstance(model, CrossFittedDRM) and r.metrics["cross_fitted"] == 1.0
    preds = r.predictions
    assert sorted(preds["target"]) == sorted(f"eastbound({e})" for e in ds.truth("eastbound")["a0"])
    assert set(preds["fold"]) == set(range(1, len(model.folds_) + 1))
    for target, fold in zip(preds["target"], preds["fold"]):
        fold_model = model.folds_[fold - 1]
        assert model.for_target(target) is fold_model
        assert target[len("eastbound("):-1] not in set(fold_model.problem_.examples)  # never trained on it


def test_the_default_run_on_the_ten_trains_says_something(trains_run):
    _, r = trains_run
    assert r.metrics["test_examples"] == 10
    assert r.metrics["accuracy"] >= 0.7  # the majority class is 0.5
    assert r.metrics["fidelity_undefined"] == 0.0
    exps = r.explanations["drm:fidelity"]
    assert len(exps) == 10 and all(e.items for e in exps)
    assert r.metrics["relevance_changes_choice"] > 0.0


def test_each_explanation_comes_from_its_folds_model(trains_run):
    _, r = trains_run
    preds = r.predictions.set_index("target")
    for e in r.explanations["drm:fidelity"]:
        fold_model = r.model.for_target(e.target)
        names = {f.name: f.definition() for f in fold_model.features_}
        assert e.prediction == preds.loc[e.target, "prediction"]
        for item in e.items:
            assert all(names[a] == item.extras["definitions"][a] for a in item.atoms)


def test_explainer_settings_reach_every_fold(trains_run):
    _, r = trains_run
    changed = with_settings(r.model, r.settings.replace(hamming=7))
    assert all(f.settings.hamming == 7 for f in changed.folds_)
    assert all(f.settings.hamming == r.settings.hamming for f in r.model.folds_)  # the shared fit is unchanged


def test_examples_no_fold_held_out_get_the_mean_of_the_fold_networks(trains_run):
    ds, r = trains_run
    unseen = copy.copy(r.model)
    unseen.fold_of_ = {}  # as if every train were new to the model
    preds = unseen.predict(ds)
    assert (preds["fold"] == 0).all()
    mean = np.mean([f.predict(ds)["probability"].to_numpy() for f in r.model.folds_], axis=0)
    np.testing.assert_allclose(preds["probability"].to_numpy(), mean, atol=1e-9)


def test_larger_data_holds_out_one_fold():
    assert cross_fits(generate_trains(CROSS_FIT_UP_TO, seed=0))
    assert not cross_fits(generate_trains(CROSS_FIT_UP_TO + 10, seed=0))
